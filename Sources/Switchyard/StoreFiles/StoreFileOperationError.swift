import Foundation

// MARK: - StoreFileOperationError

/// Why moving, copying, converting, replacing or destroying a store was refused or failed. Nothing was changed
/// at the destination when one of these is thrown (a failed operation leaves the old store, or no file at the
/// destination).
public enum StoreFileOperationError: Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// A store (file or directory) already exists where the operation would write one.
    case destinationExists(operation: String, path: String)
    /// The destination's directory is missing or not writable.
    case destinationNotWritable(operation: String, path: String, reason: String)
    /// A memory store has no files to move, copy or convert.
    case memoryStore(operation: String, configuration: String)
    /// The operation failed; the reason names the file and the system's or store's explanation.
    case failed(operation: String, path: String, configuration: String, reason: String)

    public var description: String {
        switch self {
        case let .destinationExists(operation, path):
            return "\(operation): \(path) already exists; choose another destination or remove it first"
        case let .destinationNotWritable(operation, path, reason):
            return "\(operation): cannot write at \(path): \(reason)"
        case let .memoryStore(operation, configuration):
            return "\(operation): the store of configuration \(configuration) is a memory store, which has no files"
        case let .failed(operation, path, configuration, reason):
            return "\(operation) of \(path) (configuration \(configuration)) failed: \(reason)"
        }
    }

    public var errorDescription: String? { description }
}

import Foundation

// MARK: - ModelCacheError

/// A model cache (`Z_MODELCACHE.Z_CONTENT`, or the LMDB store's equivalent) that cannot be turned into a model.
/// Every case names the source (normally "<store path> model cache") and says what is wrong with it.
public enum ModelCacheError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// Inflating (or, when writing, deflating) failed: the blob is not raw DEFLATE, or it is damaged or cut short.
    case compression(source: String, error: CompressionError)
    /// The inflated bytes are neither a keyed archive (`bplist00`) nor model XML; `prefix` shows how they start.
    case unknownFormat(source: String, prefix: String)
    /// The keyed archive (or its property list) cannot be read.
    case archive(KeyedArchiveError)
    /// The archive reads, but it is not an NSManagedObjectModel this library can rebuild.
    case invalidModel(source: String, reason: String)

    /// The message for a person: the source, what failed and why.
    public var description: String {
        switch self {
        case let .compression(source, error):
            return "\(source): the model cache is not a readable DEFLATE stream: \(error)"
        case let .unknownFormat(source, prefix):
            return "\(source): the inflated model cache is neither a keyed archive nor model XML (it starts with \(prefix))"
        case let .archive(error):
            return error.description
        case let .invalidModel(source, reason):
            return "\(source): the model cache does not hold a usable object model: \(reason)"
        }
    }
}

extension ModelCacheError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

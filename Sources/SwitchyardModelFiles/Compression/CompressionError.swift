import Foundation

// MARK: - CompressionError

/// A zlib call that failed: which operation, zlib's return code and what went wrong.
///
/// ```swift
/// "inflate failed (Z_DATA_ERROR): invalid block type": how a damaged `Z_MODELCACHE` blob reads in a `ModelCacheError`.
/// ```
public struct CompressionError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The zlib call or step that failed (`inflateInit2`, `deflate`, `inflate`, ...).
    public let operation: String
    /// zlib's return code (`Z_DATA_ERROR` is -3, `Z_BUF_ERROR` -5, ...).
    public let code: Int32
    /// zlib's own message where it gave one, otherwise ours.
    public let message: String

    /// Creates an error for `operation` that returned `code`.
    public init(operation: String, code: Int32, message: String) {
        self.operation = operation
        self.code = code
        self.message = message
    }

    /// The symbolic name of `code`, as zlib.h spells it.
    public var codeName: String {
        switch code {
        case 0: return "Z_OK"
        case 1: return "Z_STREAM_END"
        case 2: return "Z_NEED_DICT"
        case -1: return "Z_ERRNO"
        case -2: return "Z_STREAM_ERROR"
        case -3: return "Z_DATA_ERROR"
        case -4: return "Z_MEM_ERROR"
        case -5: return "Z_BUF_ERROR"
        case -6: return "Z_VERSION_ERROR"
        default: return "zlib code \(code)"
        }
    }

    /// The message for a person: the source, what failed and why.
    public var description: String {
        "\(operation) failed (\(codeName)): \(message)"
    }
}

extension CompressionError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

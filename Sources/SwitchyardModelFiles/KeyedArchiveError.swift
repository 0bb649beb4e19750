import Foundation

// MARK: - KeyedArchiveError

/// A keyed archive (or the binary property list under it) that cannot be read. Every case names the source
/// (for a model cache, the store file) and says what is wrong and, for the property list, at which byte.
public enum KeyedArchiveError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The bytes are not a well-formed `bplist00` binary property list; `offset` is where the fault was found.
    case malformedPropertyList(source: String, offset: Int, reason: String)
    /// A well-formed property list that is not an NSKeyedArchiver archive, or whose object graph is broken
    /// (a dangling reference, a class record without a name, a collection that contains itself).
    case malformedArchive(source: String, reason: String)

    /// The message for a person: the source, what failed and why.
    public var description: String {
        switch self {
        case let .malformedPropertyList(source, offset, reason):
            return "\(source): not a readable binary property list (at byte \(offset)): \(reason)"
        case let .malformedArchive(source, reason):
            return "\(source): not a readable keyed archive: \(reason)"
        }
    }
}

extension KeyedArchiveError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

import Foundation

// MARK: - QueryError

/// A predicate that cannot be parsed, substituted or evaluated.
public enum QueryError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The format string is invalid at `position` (a character offset, 0-based).
    case syntax(format: String, position: Int, reason: String)
    /// A `%@`/`%K`/`%d`/`%f` with no argument left, or an argument of the wrong kind.
    case badArgument(format: String, position: Int, reason: String)
    /// A `$VARIABLE` that was not given a value.
    case unboundVariable(name: String)
    /// A key path that does not exist on the entity.
    case unknownKeyPath(entity: String, keyPath: String)
    /// A comparison the evaluator or store cannot perform (say, `BEGINSWITH` on a date).
    case unsupported(String)
    /// A fetch request that cannot run as given (a negative limit or offset).
    case invalidRequest(String)

    public var description: String {
        switch self {
        case let .syntax(format, position, reason):
            return "invalid predicate at position \(position): \(reason)\n  \(format)\n  \(String(repeating: " ", count: max(0, position)))^"
        case let .badArgument(format, position, reason):
            return "invalid predicate argument at position \(position): \(reason)\n  \(format)"
        case let .unboundVariable(name):
            return "predicate variable $\(name) has no value"
        case let .unknownKeyPath(entity, keyPath):
            return "entity \(entity) has no key path '\(keyPath)'"
        case let .unsupported(reason):
            return "unsupported predicate: \(reason)"
        case let .invalidRequest(reason):
            return "invalid fetch request: \(reason)"
        }
    }
}

extension QueryError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

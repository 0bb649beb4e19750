import Foundation

// MARK: - SplitError

/// A split that could not be planned, written or verified. `step` and `reason` are what the CLI prints as
/// `storesplit: <step> failed: <reason>`.
public enum SplitError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// Bad arguments: an unknown configuration, a configuration given twice, an unknown store type.
    case usage(String)
    /// A model file could not be read.
    case model(path: String, reason: String)
    /// The source could not be opened or its model not found.
    case source(path: String, reason: String)
    /// The target model cannot receive the source's data; each problem says what to declare.
    case planning([String])
    /// An output exists and `force` was not given.
    case outputExists(path: String)
    /// An output could not be looked for or created (a server that does not answer, a folder that cannot be
    /// written); the reason names it.
    case outputUnavailable(reason: String)
    /// Copying failed (the temporary outputs were removed; nothing was left under a final name).
    case copy(reason: String)
    /// The outputs do not match the source (they were not renamed into place).
    case verification([String])

    /// The step that failed, as the CLI names it.
    public var step: String {
        switch self {
        case .usage: return "arguments"
        case .model: return "load model"
        case .source: return "open source"
        case .planning: return "plan"
        case .outputExists, .outputUnavailable: return "prepare outputs"
        case .copy: return "copy"
        case .verification: return "verify"
        }
    }

    /// Why, in one line per problem.
    public var reason: String {
        switch self {
        case .usage(let message): return message
        case let .source(path, reason), let .model(path, reason):
            // A reason that already starts with the path ("--model /x: no such model file" does not) says it once.
            return reason.hasPrefix(path + ": ") || reason.hasPrefix(path + " (") ? reason : "\(path): \(reason)"
        case .planning(let problems): return problems.joined(separator: "; ")
        case .outputExists(let path): return "\(path) already exists (pass --force to replace it)"
        case .copy(let reason), .outputUnavailable(let reason): return reason
        case .verification(let mismatches): return mismatches.joined(separator: "; ")
        }
    }

    public var description: String { "\(step) failed: \(reason)" }
}

extension SplitError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

// MARK: - StoreError

/// A store operation that failed. Every case names the store file (or "memory") and, where there is one,
/// the configuration, the SQL statement or LMDB call and the underlying code.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or created.
    case openFailed(path: String, configuration: String, reason: String)
    /// The file exists but is not a store of this type (foreign, truncated or corrupt).
    case notAStore(path: String, expected: StoreType, reason: String)
    /// A SQLite statement failed.
    case sqlite(path: String, configuration: String, sql: String, code: Int32, message: String)
    /// An LMDB call failed.
    case lmdb(path: String, call: String, code: Int32, message: String)
    /// Optimistic locking: the row changed (or vanished) since it was read. Nothing of the save was written.
    case conflict(path: String, entity: String, primaryKey: Int64, expectedVersion: Int64, actualVersion: Int64?)
    /// A uniqueness constraint would be violated. Nothing of the save was written.
    case uniquenessViolation(path: String, entity: String, properties: [String], values: [String])
    /// The store was opened read-only.
    case readOnly(path: String, operation: String)
    /// The entity is not part of this store's configuration.
    case entityNotInStore(path: String, configuration: String, entity: String)
    /// A property name the entity does not have (or a transient one, which no store holds).
    case unknownProperty(path: String, entity: String, property: String)
    /// A value that the attribute's type cannot hold.
    case invalidValue(path: String, entity: String, attribute: String, value: String, expected: String)
    /// The store's tables do not match the model (a column or table is missing).
    case schemaMismatch(path: String, configuration: String, reason: String)
    /// A predicate the store cannot run.
    case unsupportedPredicate(path: String, reason: String)
    /// The store was closed or destroyed.
    case closed(path: String)
    /// The store was written with a model it cannot be migrated from; `report` says what changed and why not.
    /// Nothing in the store was changed.
    case incompatibleModel(path: String, configuration: String, report: CompatibilityReport)

    public var description: String {
        switch self {
        case let .openFailed(path, configuration, reason):
            return "\(path) (configuration \(configuration)): cannot open store: \(reason)"
        case let .notAStore(path, expected, reason):
            return "\(path): not a \(expected.rawValue) store: \(reason)"
        case let .sqlite(path, configuration, sql, code, message):
            return "\(path) (configuration \(configuration)): SQLite error \(code): \(message) [\(sql)]"
        case let .lmdb(path, call, code, message):
            return "\(path): \(call) failed with LMDB code \(code): \(message)"
        case let .conflict(path, entity, pk, expected, actual):
            let now = actual.map { "is now at version \($0)" } ?? "was deleted"
            return "\(path): optimistic locking conflict on \(entity)/p\(pk): expected version \(expected), row \(now); nothing was saved"
        case let .uniquenessViolation(path, entity, properties, values):
            return "\(path): uniqueness constraint on \(entity)(\(properties.joined(separator: ", "))) violated by (\(values.joined(separator: ", "))); nothing was saved"
        case let .readOnly(path, operation):
            return "\(path): store is read-only; cannot \(operation)"
        case let .entityNotInStore(path, configuration, entity):
            return "\(path): entity \(entity) is not in configuration \(configuration) of this store"
        case let .unknownProperty(path, entity, property):
            return "\(path): entity \(entity) has no persistent property '\(property)'"
        case let .invalidValue(path, entity, attribute, value, expected):
            return "\(path): \(entity).\(attribute): value \(value) is not a valid \(expected)"
        case let .schemaMismatch(path, configuration, reason):
            return "\(path) (configuration \(configuration)): store layout does not match the model: \(reason)"
        case let .unsupportedPredicate(path, reason):
            return "\(path): cannot run predicate: \(reason)"
        case let .closed(path):
            return "\(path): store is closed"
        case let .incompatibleModel(path, configuration, report):
            return "\(path) (configuration \(configuration)): the store's model cannot be migrated to this model: "
                + report.blockingReasons.joined(separator: "; ")
        }
    }
}

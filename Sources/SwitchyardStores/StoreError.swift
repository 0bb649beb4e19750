import Foundation
import SwitchyardModel

// MARK: - StoreError

/// A store operation that failed. Every case names the store file (or "memory:<configuration>") and, where
/// a store has one, its configuration, the SQL statement or LMDB call and the underlying code.
/// `localizedDescription` is the same sentence as `description`.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The file could not be opened or created.
    case openFailed(path: String, configuration: String, reason: String)
    /// The file exists but is not a store of this type (foreign, truncated or corrupt).
    case notAStore(path: String, expected: StoreType, reason: String)
    /// A SQLite statement failed.
    case sqlite(path: String, configuration: String, sql: String, code: Int32, message: String)
    /// An LMDB call failed.
    case lmdb(path: String, configuration: String, call: String, code: Int32, message: String)
    /// A PostgreSQL statement failed, or the server could not be reached (`code` is the SQLSTATE, or the
    /// client's error code when the server never answered). `path` is the store's URL without its password.
    case postgreSQL(path: String, configuration: String, sql: String, code: String, message: String)
    /// Optimistic locking: the row changed (or vanished) since it was read. Nothing of the save was written.
    /// `objectID` is the object that conflicted: refresh it (`ObjectContext.refresh`) and save again.
    case conflict(
        path: String, configuration: String, objectID: ObjectID, entity: String, primaryKey: Int64, expectedVersion: Int64,
        actualVersion: Int64?)
    /// A uniqueness constraint would be violated. Nothing of the save was written.
    case uniquenessViolation(path: String, configuration: String, entity: String, properties: [String], values: [String])
    /// The store was opened read-only.
    case readOnly(path: String, configuration: String, operation: String)
    /// The entity is not part of this store's configuration.
    case entityNotInStore(path: String, configuration: String, entity: String)
    /// A property name the entity does not have (or a transient one, which no store holds).
    case unknownProperty(path: String, configuration: String, entity: String, property: String)
    /// A value that the attribute's type cannot hold.
    case invalidValue(path: String, configuration: String, entity: String, attribute: String, value: String, expected: String)
    /// The store's tables do not match the model (a column or table is missing).
    case schemaMismatch(path: String, configuration: String, reason: String)
    /// A predicate the store cannot run.
    case unsupportedPredicate(path: String, configuration: String, reason: String)
    /// The store was closed or destroyed.
    case closed(path: String, configuration: String)
    /// The store was written with a model it cannot be migrated from; `report` says what changed and why not.
    /// Nothing in the store was changed.
    case incompatibleModel(path: String, configuration: String, report: CompatibilityReport)
    /// Persistent history was asked of a store that does not record it (open it with
    /// `StoreOptions.persistentHistory`).
    case historyNotTracked(path: String, configuration: String)
    /// The history after transaction `after` was partly deleted (`deleteHistory`): the oldest transaction kept is
    /// `oldestKept`. Whoever held the token must refetch what they show instead of merging.
    case historyExpired(path: String, configuration: String, after: Int64, oldestKept: Int64)
    /// A history position past the store's last transaction `last`: the store was restored from an older copy,
    /// converted or replaced since the token was taken. Refetch instead of merging, and take a new token.
    case historyTokenAhead(path: String, configuration: String, after: Int64, last: Int64)
    /// `operation` (closing, moving, replacing or destroying the store; growing an LMDB store's map) was asked
    /// from inside a read or write of the same store on the same thread (a store-level `fetch(_:each:)`
    /// closure): it waits for every read and write to end, this one included, so it would wait forever. Nothing
    /// was changed; do it once the read is over.
    case insideOwnTransaction(path: String, configuration: String, operation: String)

    /// "path (configuration Name)", or the path alone when no configuration applies (a split output, a
    /// lookup by URL).
    private static func place(_ path: String, _ configuration: String) -> String {
        configuration.isEmpty ? path : "\(path) (configuration \(configuration))"
    }

    public var description: String {
        switch self {
        case let .openFailed(path, configuration, reason):
            return "\(Self.place(path, configuration)): cannot open store: \(reason)"
        case let .notAStore(path, expected, reason):
            return "\(path): not a \(expected.rawValue) store: \(reason)"
        case let .sqlite(path, configuration, sql, code, message):
            return "\(Self.place(path, configuration)): SQLite error \(code): \(message) [\(sql)]"
        case let .lmdb(path, configuration, call, code, message):
            return "\(Self.place(path, configuration)): \(call) failed with LMDB code \(code): \(message)"
        case let .conflict(path, configuration, objectID, entity, pk, expected, actual):
            let now = actual.map { "is now at version \($0)" } ?? "was deleted"
            return "\(Self.place(path, configuration)): optimistic locking conflict on \(entity)/p\(pk) (\(objectID)): "
                + "expected version \(expected), row \(now); nothing was saved; refresh that object and save again"
        case let .uniquenessViolation(path, configuration, entity, properties, values):
            return "\(Self.place(path, configuration)): uniqueness constraint on \(entity)(\(properties.joined(separator: ", "))) violated by (\(values.joined(separator: ", "))); nothing was saved"
        case let .readOnly(path, configuration, operation):
            return "\(Self.place(path, configuration)): store is read-only; cannot \(operation)"
        case let .entityNotInStore(path, configuration, entity):
            return "\(path): entity \(entity) is not in configuration \(configuration) of this store"
        case let .unknownProperty(path, configuration, entity, property):
            return "\(Self.place(path, configuration)): entity \(entity) has no persistent property '\(property)'"
        case let .invalidValue(path, configuration, entity, attribute, value, expected):
            return "\(Self.place(path, configuration)): \(entity).\(attribute): value \(value) is not a valid \(expected)"
        case let .schemaMismatch(path, configuration, reason):
            return "\(Self.place(path, configuration)): store layout does not match the model: \(reason)"
        case let .unsupportedPredicate(path, configuration, reason):
            return "\(Self.place(path, configuration)): cannot run predicate: \(reason)"
        case let .closed(path, configuration):
            return "\(Self.place(path, configuration)): store is closed"
        case let .postgreSQL(path, configuration, sql, code, message):
            return "\(Self.place(path, configuration)): PostgreSQL error \(code): \(message)" + (sql.isEmpty ? "" : " [\(sql)]")
        case let .incompatibleModel(path, configuration, report):
            return "\(Self.place(path, configuration)): the store's model cannot be migrated to this model: "
                + report.blockingReasons.joined(separator: "; ")
        case let .historyNotTracked(path, configuration):
            return "\(Self.place(path, configuration)): the store does not record persistent history; "
                + "open it writable with StoreOptions(persistentHistory: true) to start recording"
        case let .historyExpired(path, configuration, after, oldest):
            return "\(Self.place(path, configuration)): history after transaction \(after) was deleted "
                + "(the oldest transaction kept is \(oldest)); refetch instead of merging"
        case let .historyTokenAhead(path, configuration, after, last):
            return "\(Self.place(path, configuration)): history position \(after) is past the store's last transaction "
                + "\(last): the store was restored from an older copy or replaced since; refetch instead of merging and take a new token"
        case let .insideOwnTransaction(path, configuration, operation):
            return "\(Self.place(path, configuration)): cannot \(operation) from inside a read or write of this store on the same thread "
                + "(it waits for every read and write to end, this one included); do it after the read"
        }
    }

    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }

    /// The object that conflicted, for `.conflict`: refresh exactly that object and save again.
    public var objectID: ObjectID? {
        if case let .conflict(_, _, objectID, _, _, _, _) = self { return objectID }
        return nil
    }

    /// The configuration of the store the error is about, when the case carries one.
    public var configuration: String? {
        switch self {
        case let .openFailed(_, c, _), let .sqlite(_, c, _, _, _), let .conflict(_, c, _, _, _, _, _),
            let .uniquenessViolation(_, c, _, _, _), let .readOnly(_, c, _), let .entityNotInStore(_, c, _),
            let .unknownProperty(_, c, _, _), let .invalidValue(_, c, _, _, _, _), let .schemaMismatch(_, c, _),
            let .unsupportedPredicate(_, c, _), let .closed(_, c), let .incompatibleModel(_, c, _), let .lmdb(_, c, _, _, _),
            let .historyNotTracked(_, c), let .historyExpired(_, c, _, _), let .historyTokenAhead(_, c, _, _),
            let .postgreSQL(_, c, _, _, _), let .insideOwnTransaction(_, c, _):
            return c
        case .notAStore:
            return nil
        }
    }
}

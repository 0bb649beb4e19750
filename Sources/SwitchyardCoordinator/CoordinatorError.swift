import Foundation
import SwitchyardStores

// MARK: - CoordinatorError

/// A coordinator operation that failed: adding, routing or finding stores.
public enum CoordinatorError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The model has no configuration of this name; `available` lists those it has.
    case unknownConfiguration(name: String, available: [String])
    /// The model has no entity with this name.
    case unknownEntity(String)
    /// The same file was added twice (Core Data's "Can't add the same store twice", with the path).
    case storeAlreadyAdded(path: String, configuration: String)
    /// No store serves the entity; `configurations` are the ones that would.
    case noStoreForEntity(entity: String, configurations: [String])
    /// Several stores serve the entity and the object was not assigned to one.
    case ambiguousStore(entity: String, object: String, stores: [String])
    /// The store is not (or no longer) part of this coordinator.
    case storeNotInCoordinator(path: String)
    /// The store does not hold the entity it was asked to take.
    case entityNotInStore(entity: String, path: String, configuration: String)
    /// A file-backed store (SQLite, LMDB) was described without a URL.
    case missingURL(type: StoreType, configuration: String)
    /// The string is not an `x-coredata://` object URI; `reason` says which part is wrong.
    case invalidObjectURI(String, reason: String)
    /// The store backend is not available in this build.
    case unsupportedStoreType(StoreType, reason: String)
    /// An entity that moved to another configuration could not have its rows moved to that store.
    case cannotMoveEntity(entity: String, from: String, to: String, reason: String)
    /// A store with the same `NSStoreUUID` is already added (a copy of it, for example): object IDs could not
    /// tell the two apart.
    case duplicateStoreIdentifier(path: String, identifier: UUID, existing: String)
    /// No store of the coordinator serves the configuration.
    case noStoreForConfiguration(name: String, added: [String])
    /// A history token was given to a store it does not belong to (`configuration`, `store` and `path` name the
    /// store it was given to; nil when no store of the coordinator has the token's UUID).
    case historyTokenFromAnotherStore(token: String, configuration: String?, store: UUID?, path: String?)

    public var description: String {
        switch self {
        case let .unknownConfiguration(name, available):
            return "unknown configuration '\(name)'; the model has: \(available.joined(separator: ", "))"
        case let .unknownEntity(name):
            return "the model has no entity named '\(name)'"
        case let .storeAlreadyAdded(path, configuration):
            return "\(path) is already added to this coordinator (configuration \(configuration)); a file can be added once"
        case let .noStoreForEntity(entity, configurations):
            let hint = configurations.isEmpty ? "" : "; add a store for configuration \(configurations.joined(separator: " or "))"
            return "no store serves entity \(entity)\(hint)"
        case let .ambiguousStore(entity, object, stores):
            return "\(object): entity \(entity) is served by several stores (\(stores.joined(separator: ", "))); call assign(_:to:) to choose one before saving"
        case let .storeNotInCoordinator(path):
            return "\(path) is not a store of this coordinator (it was removed, moved, or its contents were replaced or destroyed: "
                + "use the store the move or replace returned — fetch objects again, read history on from your last token)"
        case let .entityNotInStore(entity, path, configuration):
            return "\(path) (configuration \(configuration)) does not hold entity \(entity)"
        case let .missingURL(type, configuration):
            return "a \(type.rawValue) store for configuration \(configuration) needs a file URL"
        case let .invalidObjectURI(uri, reason):
            return "invalid object URI '\(uri)': \(reason)"
        case let .unsupportedStoreType(type, reason):
            return "\(type.rawValue) stores are not available: \(reason)"
        case let .cannotMoveEntity(entity, from, to, reason):
            return "cannot move the rows of \(entity) from \(from) to \(to): \(reason)"
        case let .duplicateStoreIdentifier(path, identifier, existing):
            return "\(path) has the store UUID \(identifier.uuidString) of \(existing), which is already added (a copy of the same store?): "
                + "object IDs could not tell them apart; add it to another coordinator"
        case let .noStoreForConfiguration(name, added):
            return "no store is added for configuration '\(name)'"
                + (added.isEmpty ? "" : "; stores are added for: \(added.joined(separator: ", "))")
        case let .historyTokenFromAnotherStore(token, configuration, store, path):
            guard let configuration, let store, let path else {
                return "history token \(token) belongs to no store of this coordinator"
            }
            return "history token \(token) belongs to another store; \(path) (configuration \(configuration)) is store \(store.uuidString)"
        }
    }
}

extension CoordinatorError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

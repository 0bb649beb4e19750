// MARK: - StoreLoadEvent

/// Progress reported while `StoreCoordinator.loadStores` opens stores.
public enum StoreLoadEvent: Sendable, Hashable {
    /// Opening (or creating) the store at `path` for `configuration`.
    case opening(path: String, configuration: String)
    /// A migration chain's step from version `from` to version `to` starts (`custom`: a `CustomMigration`).
    case migrationStep(path: String, configuration: String, from: String, to: String, custom: Bool)
    /// Migrating rows of `entity`: `done` of `total`.
    case migrating(path: String, entity: String, done: Int, total: Int)
    /// A disposable store could not be migrated and was recreated empty.
    case recreated(path: String, configuration: String, reason: String)
    /// The store at `path` is open and added.
    case loaded(path: String, configuration: String)
    /// Every store is loaded.
    case done(storeCount: Int)
}

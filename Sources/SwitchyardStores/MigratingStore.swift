import SwitchyardModel

// MARK: - MigratingStore

/// A store that migrates itself when opened with a model it was not written with (SQLite, LMDB, PostgreSQL),
/// and says what it changed.
package protocol MigratingStore: PersistentStore {
    /// The changes applied when the store was opened; nil when it was not migrated.
    var migrationReport: CompatibilityReport? { get }
}

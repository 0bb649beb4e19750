import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - SQLiteStore migration

extension SQLiteStore {
    /// Decides, on the read-only probe connection before anything opens the file for writing, whether the
    /// store's model differs from `model`. Returns the migration to run when every change is inferable; nil
    /// when the store is identical or compatible (then it is not touched, so a real Core Data store stays Core
    /// Data's) or has no readable model cache (the table layout decides); throws
    /// `StoreError.incompatibleModel` otherwise.
    static func plannedMigration(
        _ db: Database, path: String, model: ObjectModel, configuration: String, progress: MigrationProgressHandler?
    ) throws -> SQLiteMigrator? {
        let metadata = try readMetadata(db, path: path)
        let pending = try StoreMigration.pendingMigration(
            storedHashes: metadata.versionHashes, storedModel: { try storedModel(db, path: path) }, model: model,
            configuration: configuration, path: path)
        guard let (old, report) = pending else { return nil }
        return SQLiteMigrator(old: old, new: model, configuration: configuration, report: report, path: path, progress: progress)
    }

    /// Why a read-only store does not fit `model`, when `model` would migrate it (see
    /// `StoreMigration.readOnlyMigrationReason`).
    static func readOnlyMigrationReason(_ db: Database, path: String, model: ObjectModel, configuration: String) throws -> String? {
        StoreMigration.readOnlyMigrationReason(
            storedHashes: try readMetadata(db, path: path).versionHashes, storedModel: { try storedModel(db, path: path) },
            model: model, configuration: configuration, path: path)
    }

    /// The model the store was last written with (`Z_MODELCACHE`); nil without one, or with a cache this
    /// library cannot read, which leaves the decision to the table layout.
    private static func storedModel(_ db: Database, path: String) throws -> ObjectModel? {
        guard try db.tableExists("Z_MODELCACHE"),
            let blob = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE WHERE Z_CONTENT IS NOT NULL LIMIT 1"),
            !blob.isEmpty
        else { return nil }
        return try? ModelCache.decode(blob, source: "\(path) model cache")
    }
}

// MARK: - SQLiteMigrator

/// Runs a `LayoutMigrator` on a Core Data-layout SQLite database in one IMMEDIATE transaction: a crash or an
/// error leaves the old store.
package struct SQLiteMigrator {
    package let migrator: LayoutMigrator
    package var report: CompatibilityReport { migrator.report }

    init(old: ObjectModel, new: ObjectModel, configuration: String, report: CompatibilityReport, path: String, progress: MigrationProgressHandler?) {
        migrator = LayoutMigrator(old: old, new: new, configuration: configuration, report: report, path: path, progress: progress)
    }

    func run(in pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let metadata = try SQLiteStore.readMetadata(db, path: migrator.path)
                // Another process may have migrated the store between the probe and this write lock.
                if metadata.versionHashes == migrator.new.versionHashes { return .rollback }
                try checkIntact(db)
                if !(try db.tableExists("Z_MODELCACHE")) { try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)") }
                try migrator.run(SQLiteMigrationDatabase(db: db), metadata: metadata)
                return .commit
            }
        }
    }

    /// Refuses a store whose pages are damaged (`StoreError.notAStore`, with SQLite's first findings) before
    /// anything is written. A migration reads only what it changes, so damage elsewhere would otherwise be
    /// carried into the new version unseen and show only when those rows are read. `PRAGMA quick_check` reads
    /// every page once (not the cross-checks of indexes against their tables that `integrity_check` adds); a
    /// page too damaged for it to go on is SQLite's error, reported the same way.
    private func checkIntact(_ db: Database) throws {
        let findings: [String]
        do {
            findings = try String.fetchAll(db, sql: "PRAGMA quick_check(5)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            findings = ["\(error.message ?? "database disk image is malformed") (SQLite code \(error.extendedResultCode.rawValue))"]
        }
        guard findings != ["ok"] else { return }
        throw StoreError.notAStore(
            path: migrator.path, expected: .sqlite,
            reason: "the SQLite file is damaged, so it was not migrated to the new model (PRAGMA quick_check: "
                + findings.joined(separator: "; ") + ")")
    }
}

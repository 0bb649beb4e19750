import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - Backup

extension SQLiteStore {
    /// Writes a consistent copy of the store to the new file `url` (which must not exist): SQLite's online
    /// backup from one read snapshot, while other contexts and processes keep writing, then (`compact`)
    /// `VACUUM`. The copy is in WAL mode and keeps everything, `NSStoreUUID` included; the external data files
    /// its rows name are linked (or copied) into its own support folder. On an error nothing is left at `url`.
    package func backup(to url: URL, compact: Bool) throws {
        externalData.pin()
        defer { externalData.unpin() }
        do {
            let destination = try DatabaseQueue(path: url.path)
            do {
                try pool.backup(to: destination)
                if compact { try destination.vacuum() }
                try destination.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
                if schema.hasExternalData {
                    let names = try destination.read { db in try referencedExternalFiles(db) }
                    try externalData.share(names, with: url)
                }
                try destination.close()
            } catch {
                try? destination.close()
                throw error
            }
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            try? FileManager.default.removeItem(at: SQLiteStore.supportFolder(of: url))
            if let storeError = error as? StoreError { throw storeError }
            throw StoreError.openFailed(path: displayPath, configuration: configurationName, reason: "backup to \(url.path) failed: \(error)")
        }
    }

    /// Every external data file the rows of `db` (a store with this store's tables) name.
    private func referencedExternalFiles(_ db: Database) throws -> [String] {
        var names: [String] = []
        var seen: Set<String> = []
        for layout in schema.entities.values.sorted(by: { $0.name < $1.name }) {
            for attribute in layout.attributes where attribute.isExternal {
                let key = schema.table(of: layout).name + "." + attribute.column
                guard seen.insert(key).inserted else { continue }
                let sql = "SELECT \(SQLiteNames.quote(attribute.column)) FROM \(SQLiteNames.quote(schema.table(of: layout).name)) "
                    + "WHERE substr(\(SQLiteNames.quote(attribute.column)), 1, 1) = x'02'"
                let cursor = try Data.fetchCursor(db, sql: sql)
                while let bytes = try cursor.next() {
                    if let name = SQLiteExternalData.fileName(bytes) { names.append(name) }
                }
            }
        }
        return names
    }
}

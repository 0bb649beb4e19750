import ArgumentParser
import Foundation
import GRDBSQLite
import Switchyard

/// Opening an unchanged store through the coordinator at several sizes (the time must not grow with the
/// store), and an add-attribute lightweight migration in place, against raw SQLite doing the least it could.
struct StoreOpenBench {
    /// Store sizes (Message rows) to open, smallest first.
    let sizes: [Int]
    /// Rows of the migrated store (0 skips the migration measurement).
    let migrationRows: Int
    let model: ObjectModel
    let modelXML: String
    let dir: URL
    let repeats: Int

    func run(log: (String) -> Void) throws -> [BenchResult] {
        var results: [BenchResult] = []
        if !sizes.isEmpty { results.append(try open(log: log)) }
        if migrationRows > 0 { results.append(try migrate(log: log)) }
        return results
    }

    // MARK: - Open

    private func open(log: (String) -> Void) throws -> BenchResult {
        var times: [(rows: Int, switchyard: Double, raw: Double)] = []
        for size in sizes {
            log("open: writing a \(size)-row SQLite store")
            let url = dir.appendingPathComponent("open-\(size).sqlite")
            try fill(url, model: model, rows: size)
            log("open: opening it \(repeats) times through a coordinator")
            let switchyard = try measure(repeats: repeats) {
                let coordinator = StoreCoordinator(model: model)
                let store = try coordinator.addStore(.sqlite, configuration: "Cloud", at: url)
                _ = try store.metadata()
            }
            // The least any library must do: open the file and read the metadata row.
            let raw = try measure(repeats: repeats) {
                let db = try RawSQLite(path: url.path)
                let stmt = try db.prepare("SELECT Z_PLIST FROM Z_METADATA")
                guard sqlite3_step(stmt) == SQLITE_ROW else { throw RawSQLite.Failure("no metadata row") }
                sqlite3_finalize(stmt)
            }
            times.append((size, switchyard, raw))
        }
        let largest = times.last!
        var extras: [String: Double] = [:]
        for t in times.dropLast() { extras["\(t.rows) rows"] = t.switchyard }
        return BenchResult(
            backend: "SQLite", operation: "open unchanged store, \(largest.rows) rows", baselines: ["raw SQLite open + metadata": largest.raw],
            switchyard: largest.switchyard, extras: extras)
    }

    // MARK: - Migration

    private func migrate(log: (String) -> Void) throws -> BenchResult {
        let changed = try ModelLoader.load(contentsXML: Data(Self.addingAttribute(to: modelXML).utf8), source: "Messenger + Message.editedAt")
        let template = dir.appendingPathComponent("migrate-template.sqlite")
        log("migration: writing a \(migrationRows)-row SQLite store")
        try fill(template, model: model, rows: migrationRows)
        let copy = dir.appendingPathComponent("migrate.sqlite")
        log("migration: adding Message.editedAt in place, \(repeats) times (each on a fresh copy)")
        let switchyard = try measure(repeats: repeats, prepare: { try replace(copy, with: template) }) {
            let coordinator = StoreCoordinator(model: changed)
            try coordinator.addStore(.sqlite, configuration: "Cloud", at: copy)
        }
        // Verify the migration happened and kept every row.
        let coordinator = StoreCoordinator(model: changed)
        let store = try coordinator.addStore(.sqlite, configuration: "Cloud", at: copy)
        let rows = try store.count(StoreFetchRequest(entityName: "Message"))
        guard rows == migrationRows else { throw ValidationError("migration kept \(rows) of \(migrationRows) rows") }
        let raw = try measure(repeats: repeats, prepare: { try replace(copy, with: template) }) {
            let db = try RawSQLite(path: copy.path)
            try db.exec("ALTER TABLE ZMESSAGE ADD COLUMN ZEDITEDAT TIMESTAMP")
        }
        return BenchResult(
            backend: "SQLite", operation: "add-attribute migration, \(migrationRows) rows",
            baselines: ["raw SQLite ALTER TABLE": raw], switchyard: switchyard)
    }

    /// The Messenger model's XML with one optional attribute more on Message.
    static func addingAttribute(to xml: String) throws -> String {
        guard let range = xml.range(of: "<entity name=\"Message\"") , let close = xml[range.upperBound...].range(of: ">") else {
            throw ValidationError("bench: the model has no Message entity")
        }
        var result = xml
        result.insert(contentsOf: "\n        <attribute name=\"editedAt\" optional=\"YES\" attributeType=\"Date\" usesScalarValueType=\"NO\"/>", at: close.upperBound)
        return result
    }

    // MARK: - Files

    /// A Cloud store with `rows` messages, written a batch at a time.
    private func fill(_ url: URL, model: ObjectModel, rows: Int) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let store = try SQLiteStore(url: url, model: model, configuration: "Cloud")
        let batch = 50_000
        var written = 0
        while written < rows {
            let n = min(batch, rows - written)
            let data = BenchData(count: n, lookups: 1, offset: written)
            try store.save(StoreChangeSet(inserts: data.storeRows(keys: try store.allocatePrimaryKeys(for: "Message", count: n))))
            written += n
        }
    }

    private func replace(_ copy: URL, with template: URL) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy.path + suffix) }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: template.path + suffix) {
            try FileManager.default.copyItem(atPath: template.path + suffix, toPath: copy.path + suffix)
        }
    }
}

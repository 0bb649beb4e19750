import Foundation
import GRDB
import Switchyard

/// Opening an unchanged store (at N and N/10 rows: the time must not grow with the rows) and migrating N rows
/// for an added attribute with a default, next to the same change in plain SQL (`ALTER TABLE ADD COLUMN` +
/// `UPDATE`) on a copy of the same file.
struct MigrationBench {
    let rows: Int
    let backend: String
    let dir: URL
    let repeats: Int

    /// Version 1: one entity with two attributes; version 2 adds a required attribute with a default.
    static func model(version: Int) throws -> ObjectModel {
        var attributes = [
            AttributeDescription(name: "number", type: .integer64), AttributeDescription(name: "text", type: .string),
        ]
        if version > 1 {
            attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: .integer(0)))
        }
        return try ObjectModel(entities: [EntityDescription(name: "Record", attributes: attributes)])
    }

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let v1 = try Self.model(version: 1), v2 = try Self.model(version: 2)
        let ext = backend == "sqlite" ? "sqlite" : "lmdb"
        let small = dir.appendingPathComponent("migration-small.\(ext)"), large = dir.appendingPathComponent("migration-large.\(ext)")
        log("\(backend): writing \(rows / 10) and \(rows) rows for the migration benchmark")
        try populate(small, model: v1, count: max(1, rows / 10))
        try populate(large, model: v1, count: rows)

        log("\(backend): opening an unchanged store")
        let openSmall = try measure(repeats: repeats) { _ = try open(small, model: v1) }
        let openLarge = try measure(repeats: repeats) { _ = try open(large, model: v1) }

        log("\(backend): add-attribute migration of \(rows) rows")
        let work = dir.appendingPathComponent("migration-work.\(ext)")
        let migrate = try measure(repeats: repeats, prepare: { try copy(large, to: work) }) {
            _ = try open(work, model: v2)
        }
        var results = [
            BenchResult(
                backend: backend, operation: "open unchanged store (\(rows) rows)",
                baselines: ["same store at \(max(1, rows / 10)) rows": openSmall], switchyard: openLarge),
        ]
        var baselines: [String: Double] = [:]
        if backend == "sqlite" {
            let plain = try measure(repeats: repeats, prepare: { try copy(large, to: work) }) {
                let pool = try DatabasePool(path: work.path)
                try pool.write { db in
                    try db.execute(sql: "ALTER TABLE ZRECORD ADD COLUMN ZRANK INTEGER")
                    try db.execute(sql: "UPDATE ZRECORD SET ZRANK = 0 WHERE ZRANK IS NULL")
                }
                try pool.close()
            }
            baselines["SQL ALTER TABLE + UPDATE"] = plain
        } else {
            // No plain-LMDB equivalent: set against opening the same store unchanged.
            baselines["opening it unchanged"] = openLarge
        }
        results.append(BenchResult(
            backend: backend, operation: "add-attribute migration (\(rows) rows)", baselines: baselines, switchyard: migrate))
        return results
    }

    private func open(_ url: URL, model: ObjectModel) throws -> any PersistentStore {
        backend == "sqlite"
            ? try SQLiteStore(url: url, model: model, configuration: "Default")
            : try LMDBStore(url: url, model: model, configuration: "Default", options: StoreOptions(initialMapSize: 1 << 30))
    }

    private func populate(_ url: URL, model: ObjectModel, count: Int) throws {
        try Self.insertRecords(count, into: try open(url, model: model)) { key in ["number": .integer(key), "text": .string("row \(key)")] }
    }

    /// Inserts `count` Record rows in saves of 50,000, each row's values made from its key.
    static func insertRecords(_ count: Int, into store: any PersistentStore, values: (Int64) -> [String: AttributeValue]) throws {
        var next = 0
        while next < count {
            let n = min(50_000, count - next)
            let keys = try store.allocatePrimaryKeys(for: "Record", count: n)
            try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Record", primaryKey: $0, values: values($0)) }))
            next += n
        }
    }

    /// Replaces `target` with a copy of the store at `source` (a file with sidecars, or a directory).
    private func copy(_ source: URL, to target: URL) throws {
        let fm = FileManager.default
        for suffix in ["", "-wal", "-shm"] where fm.fileExists(atPath: target.path + suffix) {
            try fm.removeItem(atPath: target.path + suffix)
        }
        for suffix in ["", "-wal", "-shm"] where fm.fileExists(atPath: source.path + suffix) {
            try fm.copyItem(atPath: source.path + suffix, toPath: target.path + suffix)
        }
    }
}

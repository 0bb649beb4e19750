import ArgumentParser
import Foundation
import GRDB
import GRDBSQLite
import Switchyard

/// Insert + save, fetch all, and indexed-equality lookups through the raw SQLite C API, GRDB, and
/// Switchyard's SQLite store, on the same rows and the same table layout.
struct SQLiteBench {
    let data: BenchData
    let model: ObjectModel
    let dir: URL
    let repeats: Int

    static let createSQL = """
        CREATE TABLE ZMESSAGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZISREAD INTEGER, ZPRIORITY INTEGER,
          ZSEQUENCE INTEGER, ZCHAT INTEGER, ZSCORE FLOAT, ZSENTAT TIMESTAMP, ZLINK VARCHAR, ZMESSAGEID VARCHAR, ZTEXT VARCHAR,
          ZATTACHMENT BLOB, ZSENDERID BLOB);
        CREATE INDEX ZMESSAGE_ZCHAT_INDEX ON ZMESSAGE (ZCHAT);
        CREATE INDEX Z_Message_byMessageID ON ZMESSAGE (ZMESSAGEID);
        CREATE INDEX Z_Message_bySentAt ON ZMESSAGE (ZSENTAT);
        """
    static let insertSQL = "INSERT INTO ZMESSAGE (Z_PK, Z_ENT, Z_OPT, ZMESSAGEID, ZTEXT, ZSENTAT, ZSCORE, ZISREAD, ZPRIORITY, ZSEQUENCE) VALUES (?,?,?,?,?,?,?,?,?,?)"
    static let selectSQL = "SELECT Z_PK, Z_ENT, Z_OPT, ZMESSAGEID, ZTEXT, ZSENTAT, ZSCORE, ZISREAD, ZPRIORITY, ZSEQUENCE FROM ZMESSAGE"

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let n = data.messages.count
        let entity = model.entity(named: "Message")!.entityNumber

        // MARK: insert + save
        log("SQLite: insert + save \(n) objects")
        let rawInsert = try measure(repeats: repeats, prepare: { try reset("raw.sqlite") }) {
            let db = try RawSQLite(path: file("raw.sqlite"))
            try db.exec(Self.createSQL)
            try db.exec("BEGIN")
            let stmt = try db.prepare(Self.insertSQL)
            for (i, m) in data.messages.enumerated() {
                sqlite3_bind_int64(stmt, 1, Int64(i + 1))
                sqlite3_bind_int64(stmt, 2, Int64(entity))
                sqlite3_bind_int64(stmt, 3, 1)
                sqlite3_bind_text(stmt, 4, m.messageID, -1, SQLITE_TRANSIENT)
                sqlite3_bind_text(stmt, 5, m.text, -1, SQLITE_TRANSIENT)
                sqlite3_bind_double(stmt, 6, m.sentAt)
                sqlite3_bind_double(stmt, 7, m.score)
                sqlite3_bind_int64(stmt, 8, m.isRead ? 1 : 0)
                sqlite3_bind_int64(stmt, 9, m.priority)
                sqlite3_bind_int64(stmt, 10, m.sequence)
                guard sqlite3_step(stmt) == SQLITE_DONE else { throw RawSQLite.Failure(db.message) }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
            try db.exec("COMMIT")
        }
        let grdbInsert = try measure(repeats: repeats, prepare: { try reset("grdb.sqlite") }) {
            let queue = try DatabasePool(path: file("grdb.sqlite"))
            try queue.write { db in
                try db.execute(sql: Self.createSQL)
                let stmt = try db.cachedStatement(sql: Self.insertSQL)
                for (i, m) in data.messages.enumerated() {
                    try stmt.execute(arguments: [i + 1, entity, 1, m.messageID, m.text, m.sentAt, m.score, m.isRead, m.priority, m.sequence])
                }
            }
        }
        let storeInsert = try measure(repeats: repeats, prepare: { try reset("store.sqlite") }) {
            let store = try SQLiteStore(url: URL(fileURLWithPath: file("store.sqlite")), model: model, configuration: "Cloud")
            let keys = try store.allocatePrimaryKeys(for: "Message", count: n)
            try store.save(StoreChangeSet(inserts: data.storeRows(keys: keys)))
        }
        let contextInsert = try measure(repeats: repeats, prepare: { try reset("context.sqlite") }) {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Cloud", at: URL(fileURLWithPath: file("context.sqlite")))
            try data.insertAndSave(through: ObjectContext(coordinator: coordinator))
        }

        // MARK: fetch all
        log("SQLite: fetch all \(n) objects")
        var checksum = 0
        let rawFetch = try measure(repeats: repeats) {
            let db = try RawSQLite(path: file("raw.sqlite"))
            let stmt = try db.prepare(Self.selectSQL)
            var rows: [BenchData.Message] = []
            rows.reserveCapacity(n)
            while sqlite3_step(stmt) == SQLITE_ROW {
                rows.append(BenchData.Message(
                    messageID: String(cString: sqlite3_column_text(stmt, 3)), text: String(cString: sqlite3_column_text(stmt, 4)),
                    sentAt: sqlite3_column_double(stmt, 5), score: sqlite3_column_double(stmt, 6),
                    isRead: sqlite3_column_int64(stmt, 7) != 0, priority: sqlite3_column_int64(stmt, 8),
                    sequence: sqlite3_column_int64(stmt, 9)))
            }
            sqlite3_finalize(stmt)
            checksum = rows.count
        }
        guard checksum == n else { throw ValidationError("raw fetch returned \(checksum) rows") }
        let grdbFetch = try measure(repeats: repeats) {
            let pool = try DatabasePool(path: file("grdb.sqlite"))
            let rows = try pool.read { db in
                try Row.fetchAll(db, sql: Self.selectSQL).map { row in
                    BenchData.Message(messageID: row[3], text: row[4], sentAt: row[5], score: row[6], isRead: row[7], priority: row[8], sequence: row[9])
                }
            }
            checksum = rows.count
        }
        guard checksum == n else { throw ValidationError("GRDB fetch returned \(checksum) rows") }
        let storeFetch = try measure(repeats: repeats) {
            let store = try SQLiteStore(url: URL(fileURLWithPath: file("store.sqlite")), model: model, configuration: "Cloud")
            checksum = try store.fetch(StoreFetchRequest(entityName: "Message")).count
        }
        guard checksum == n else { throw ValidationError("Switchyard fetch returned \(checksum) rows") }
        let contextFetch = try measure(repeats: repeats) {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Cloud", at: URL(fileURLWithPath: file("store.sqlite")))
            checksum = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Message")).count
        }
        guard checksum == n else { throw ValidationError("Switchyard context fetch returned \(checksum) rows") }

        // MARK: indexed equality
        log("SQLite: \(data.lookupIDs.count) lookups by indexed messageID")
        var found = 0
        let rawLookup = try measure(repeats: repeats) {
            let db = try RawSQLite(path: file("raw.sqlite"))
            let stmt = try db.prepare(Self.selectSQL + " WHERE ZMESSAGEID = ?")
            found = 0
            for id in data.lookupIDs {
                sqlite3_bind_text(stmt, 1, id, -1, SQLITE_TRANSIENT)
                while sqlite3_step(stmt) == SQLITE_ROW {
                    _ = String(cString: sqlite3_column_text(stmt, 4))
                    found += 1
                }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
        }
        let grdbLookup = try measure(repeats: repeats) {
            let pool = try DatabasePool(path: file("grdb.sqlite"))
            found = try pool.read { db in
                var total = 0
                for id in data.lookupIDs {
                    total += try Row.fetchAll(db.cachedStatement(sql: Self.selectSQL + " WHERE ZMESSAGEID = ?"), arguments: [id]).count
                }
                return total
            }
        }
        let storeLookup = try measure(repeats: repeats) {
            let store = try SQLiteStore(url: URL(fileURLWithPath: file("store.sqlite")), model: model, configuration: "Cloud")
            found = 0
            for id in data.lookupIDs {
                let predicate = FetchPredicate.comparison(Comparison(.keyPath(["messageID"]), .equal, .constant(.string(id))))
                found += try store.fetch(StoreFetchRequest(entityName: "Message", predicate: predicate)).count
            }
        }
        guard found == data.lookupIDs.count else { throw ValidationError("lookups found \(found) rows") }

        return [
            BenchResult(backend: "SQLite", operation: "insert + save", baselines: ["raw SQLite": rawInsert, "GRDB": grdbInsert],
                        switchyard: storeInsert, extras: ["via ObjectContext": contextInsert]),
            BenchResult(backend: "SQLite", operation: "fetch all", baselines: ["raw SQLite": rawFetch, "GRDB": grdbFetch],
                        switchyard: storeFetch, extras: ["via ObjectContext": contextFetch]),
            BenchResult(backend: "SQLite", operation: "indexed equality x\(data.lookupIDs.count)",
                        baselines: ["raw SQLite": rawLookup, "GRDB": grdbLookup], switchyard: storeLookup),
        ]
    }

    private func file(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func reset(_ name: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file(name) + suffix) }
    }
}

let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The raw C API baseline: one connection, closed on deinit.
final class RawSQLite {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ message: String) { description = message }
    }
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            throw Failure("cannot open \(path)")
        }
        handle = db
        try exec("PRAGMA journal_mode=WAL")
    }

    deinit { sqlite3_close_v2(handle) }

    var message: String { String(cString: sqlite3_errmsg(handle)) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw Failure("\(message) [\(sql)]") }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else { throw Failure("\(message) [\(sql)]") }
        return stmt
    }
}

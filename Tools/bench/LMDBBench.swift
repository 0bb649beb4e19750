import ArgumentParser
import CLMDB
import Foundation
import Switchyard

/// Insert + save, fetch all, and indexed-equality lookups through the raw LMDB C API versus Switchyard's LMDB
/// store, on the same rows.
///
/// The raw baseline is the minimal equivalent layout: a `rows` database (4-byte entity + 8-byte primary key,
/// big-endian -> the message's fields packed in a fixed order) and an `index` database (messageID -> row key).
/// Like the store, it reads every lookup in its own snapshot (a reset read transaction, renewed), and both
/// environments get the same map size, so neither pays for map growth.
struct LMDBBench {
    let data: BenchData
    let model: ObjectModel
    let dir: URL
    let repeats: Int

    /// Large enough for every run, for both contenders.
    static let mapSize = 1 << 30

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let n = data.messages.count
        let entity = UInt32(model.entity(named: "Message")!.entityNumber)
        let options = StoreOptions(initialMapSize: Self.mapSize)

        // MARK: insert + save
        log("LMDB: insert + save \(n) objects")
        let rawInsert = try measure(repeats: repeats, prepare: { try reset("raw.lmdb") }) {
            let env = try RawLMDB(path: file("raw.lmdb"))
            try env.write { txn, rows, index in
                var value: [UInt8] = []
                value.reserveCapacity(256)
                for (i, m) in data.messages.enumerated() {
                    var key = RawLMDB.rowKey(entity: entity, primaryKey: UInt64(i + 1))
                    value.removeAll(keepingCapacity: true)
                    RawLMDB.encode(m, into: &value)
                    try RawLMDB.put(txn, rows, &key, &value)
                    var id = Array(m.messageID.utf8)
                    try RawLMDB.put(txn, index, &id, &key)
                }
            }
        }
        let storeInsert = try measure(repeats: repeats, prepare: { try reset("store.lmdb") }) {
            let store = try LMDBStore(url: url("store.lmdb"), model: model, configuration: "Cloud", options: options)
            let keys = try store.allocatePrimaryKeys(for: "Message", count: n)
            try store.save(StoreChangeSet(inserts: data.storeRows(keys: keys)))
        }
        let contextInsert = try measure(repeats: repeats, prepare: { try reset("context.lmdb") }) {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.lmdb, configuration: "Cloud", at: url("context.lmdb"), options: options)
            try data.insertAndSave(through: ObjectContext(coordinator: coordinator))
        }

        // MARK: fetch all
        log("LMDB: fetch all \(n) objects")
        var checksum = 0
        let rawFetch = try measure(repeats: repeats) {
            let env = try RawLMDB(path: file("raw.lmdb"))
            checksum = try env.read { txn, rows, _ in
                var messages: [BenchData.Message] = []
                messages.reserveCapacity(n)
                var cursor: OpaquePointer?
                try RawLMDB.check(mdb_cursor_open(txn, rows, &cursor))
                defer { mdb_cursor_close(cursor) }
                var key = MDB_val(), value = MDB_val()
                var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
                while rc == 0 {
                    messages.append(RawLMDB.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)))
                    rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
                }
                return messages.count
            }
        }
        guard checksum == n else { throw ValidationError("raw LMDB fetch returned \(checksum) rows") }
        let storeFetch = try measure(repeats: repeats) {
            let store = try LMDBStore(url: url("store.lmdb"), model: model, configuration: "Cloud", options: options)
            checksum = try store.fetch(StoreFetchRequest(entityName: "Message")).count
        }
        guard checksum == n else { throw ValidationError("Switchyard LMDB fetch returned \(checksum) rows") }
        let contextFetch = try measure(repeats: repeats) {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.lmdb, configuration: "Cloud", at: url("store.lmdb"), options: options)
            checksum = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Message")).count
        }
        guard checksum == n else { throw ValidationError("Switchyard LMDB context fetch returned \(checksum) rows") }

        // MARK: indexed equality
        log("LMDB: \(data.lookupIDs.count) lookups by indexed messageID")
        var found = 0
        let rawLookup = try measure(repeats: repeats) {
            let env = try RawLMDB(path: file("raw.lmdb"))
            found = try env.lookups(data.lookupIDs)
        }
        guard found == data.lookupIDs.count else { throw ValidationError("raw LMDB lookups found \(found) rows") }
        let storeLookup = try measure(repeats: repeats) {
            let store = try LMDBStore(url: url("store.lmdb"), model: model, configuration: "Cloud", options: options)
            found = 0
            for id in data.lookupIDs {
                let predicate = FetchPredicate.comparison(Comparison(.keyPath(["messageID"]), .equal, .constant(.string(id))))
                found += try store.fetch(StoreFetchRequest(entityName: "Message", predicate: predicate)).count
            }
        }
        guard found == data.lookupIDs.count else { throw ValidationError("Switchyard LMDB lookups found \(found) rows") }

        return [
            BenchResult(backend: "LMDB", operation: "insert + save", baselines: ["raw LMDB": rawInsert],
                        switchyard: storeInsert, extras: ["via ObjectContext": contextInsert]),
            BenchResult(backend: "LMDB", operation: "fetch all", baselines: ["raw LMDB": rawFetch],
                        switchyard: storeFetch, extras: ["via ObjectContext": contextFetch]),
            BenchResult(backend: "LMDB", operation: "indexed equality x\(data.lookupIDs.count)",
                        baselines: ["raw LMDB": rawLookup], switchyard: storeLookup),
        ]
    }

    private func file(_ name: String) -> String { dir.appendingPathComponent(name).path }
    private func url(_ name: String) -> URL { dir.appendingPathComponent(name) }

    private func reset(_ name: String) throws {
        try? FileManager.default.removeItem(atPath: file(name))
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
    }
}

/// The raw C API baseline: one environment with a `rows` and an `index` database, closed on deinit.
final class RawLMDB {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let env: OpaquePointer
    /// Flags the `index` database is created with: `MDB_DUPSORT` for a non-unique index (a name may name several
    /// rows), 0 for a unique one.
    let indexFlags: Int32

    init(path: String, indexFlags: Int32 = 0) throws {
        self.indexFlags = indexFlags
        var env: OpaquePointer?
        try Self.check(mdb_env_create(&env))
        try Self.check(mdb_env_set_maxdbs(env, 4))
        try Self.check(mdb_env_set_mapsize(env, LMDBBench.mapSize))
        try Self.check(mdb_env_open(env, path, UInt32(MDB_NOTLS), 0o644))
        self.env = env!
    }

    deinit { mdb_env_close(env) }

    static func check(_ rc: Int32) throws {
        if rc != 0 { throw Failure(description: String(cString: mdb_strerror(rc))) }
    }

    /// One write transaction with both databases (created if needed), committed at the end.
    func write(_ body: (OpaquePointer, MDB_dbi, MDB_dbi) throws -> Void) throws {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn))
        var rows: MDB_dbi = 0, index: MDB_dbi = 0
        do {
            try Self.check(mdb_dbi_open(txn, "rows", UInt32(MDB_CREATE), &rows))
            try Self.check(mdb_dbi_open(txn, "index", UInt32(MDB_CREATE | indexFlags), &index))
            try body(txn!, rows, index)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Self.check(mdb_txn_commit(txn))
    }

    /// One read transaction with the `rows` database and the index database named `indexName` (`index`, or
    /// `unique`: see `writeUnique`).
    func read<R>(indexName: String = "index", _ body: (OpaquePointer, MDB_dbi, MDB_dbi) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        var rows: MDB_dbi = 0, index: MDB_dbi = 0
        try Self.check(mdb_dbi_open(txn, "rows", 0, &rows))
        try Self.check(mdb_dbi_open(txn, indexName, 0, &index))
        return try body(txn!, rows, index)
    }

    /// Puts each (key, row key) pair into a `unique` database (created if needed), in one write transaction.
    func writeUnique(_ pairs: [([UInt8], [UInt8])]) throws {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn))
        var unique: MDB_dbi = 0
        do {
            try Self.check(mdb_dbi_open(txn, "unique", UInt32(MDB_CREATE), &unique))
            for var (key, value) in pairs { try Self.put(txn!, unique, &key, &value) }
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Self.check(mdb_txn_commit(txn))
    }

    /// Each lookup in its own snapshot (reset and renewed, the cheapest way LMDB offers): index -> row -> text.
    func lookups(_ ids: [String]) throws -> Int {
        var txn: OpaquePointer?
        var rows: MDB_dbi = 0, index: MDB_dbi = 0
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        try Self.check(mdb_dbi_open(txn, "rows", 0, &rows))
        try Self.check(mdb_dbi_open(txn, "index", 0, &index))
        try Self.check(mdb_txn_commit(txn))   // keeps the database handles
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        var found = 0
        for id in ids {
            mdb_txn_reset(txn)
            try Self.check(mdb_txn_renew(txn))
            var idBytes = Array(id.utf8)
            try idBytes.withUnsafeMutableBytes { idBuffer in
                var key = MDB_val(mv_size: idBuffer.count, mv_data: idBuffer.baseAddress)
                var rowKey = MDB_val()
                guard mdb_get(txn, index, &key, &rowKey) == 0 else { return }
                var value = MDB_val()
                try Self.check(mdb_get(txn, rows, &rowKey, &value))
                let message = Self.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
                if !message.text.isEmpty { found += 1 }
            }
        }
        return found
    }

    static func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: inout [UInt8], _ value: inout [UInt8]) throws {
        try key.withUnsafeMutableBytes { k in
            try value.withUnsafeMutableBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                var vv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                try check(mdb_put(txn, dbi, &kv, &vv, 0))
            }
        }
    }

    static func rowKey(entity: UInt32, primaryKey: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(12)
        withUnsafeBytes(of: entity.bigEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: primaryKey.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// sentAt, score (8 bytes each), isRead (1), priority, sequence (8 each), then messageID and text with
    /// 4-byte lengths: no tags, no versioning, no model.
    static func encode(_ m: BenchData.Message, into out: inout [UInt8]) {
        withUnsafeBytes(of: m.sentAt.bitPattern) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: m.score.bitPattern) { out.append(contentsOf: $0) }
        out.append(m.isRead ? 1 : 0)
        withUnsafeBytes(of: m.priority) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: m.sequence) { out.append(contentsOf: $0) }
        for s in [m.messageID, m.text] {
            withUnsafeBytes(of: UInt32(s.utf8.count)) { out.append(contentsOf: $0) }
            out.append(contentsOf: s.utf8)
        }
    }

    static func decode(_ b: UnsafeRawBufferPointer) -> BenchData.Message {
        let sentAt = Double(bitPattern: b.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let score = Double(bitPattern: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let isRead = b[16] != 0
        let priority = b.loadUnaligned(fromByteOffset: 17, as: Int64.self)
        let sequence = b.loadUnaligned(fromByteOffset: 25, as: Int64.self)
        var offset = 33
        func string() -> String {
            let count = Int(b.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            defer { offset += 4 + count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: b[(offset + 4)..<(offset + 4 + count)]), as: UTF8.self)
        }
        let messageID = string()
        let text = string()
        return BenchData.Message(
            messageID: messageID, text: text, sentAt: sentAt, score: score, isRead: isRead, priority: priority, sequence: sequence)
    }
}

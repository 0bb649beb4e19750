import CLMDB
import Foundation
import GRDB
import GRDBSQLite
import Switchyard

/// The headline: what a user pays through the object layer. The same 6-attribute entity (string indexed,
/// int64, double, date, bool, optional string) through `ObjectContext` with typed entities and with the
/// string API, against GRDB `Codable` records (`FetchableRecord & PersistableRecord`) and the raw C APIs.
/// Every side does the same work: "fetch all" reads every attribute of every object; each lookup is its own
/// read; saves are one transaction with the same durability (WAL, synchronous NORMAL for SQLite).
struct ObjectLayerBench {
    let count: Int
    let lookups: Int
    let dir: URL
    let repeats: Int
    /// `sqlite` and/or `lmdb`.
    let backends: [String]

    struct Row {
        var name: String, count: Int64, score: Double, createdAt: Date, flag: Bool, note: String?
    }

    static func model() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false, isIndexed: true),
                AttributeDescription(name: "count", type: .integer64, isOptional: false),
                AttributeDescription(name: "score", type: .double, isOptional: false),
                AttributeDescription(name: "createdAt", type: .date, isOptional: false),
                AttributeDescription(name: "flag", type: .boolean, isOptional: false),
                AttributeDescription(name: "note", type: .string),
            ])
        return try ObjectModel(entities: [item], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item"])])
    }

    var rows: [Row] {
        (0..<count).map { (i: Int) -> Row in
            let note: String? = i % 3 == 0 ? nil : "note \(i)"
            let date = Date(timeIntervalSinceReferenceDate: Double(i))
            return Row(name: "item-\(i)", count: Int64(i), score: Double(i) * 0.5, createdAt: date, flag: i % 2 == 0, note: note)
        }
    }

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let data = rows
        let names = (0..<lookups).map { "item-\(($0 * 7919) % count)" }
        let threshold = Int64(count / 2)
        let model = try Self.model()
        var results: [BenchResult] = []
        for backend in ["SQLite", "LMDB"] where backends.contains(backend.lowercased()) {
            log("object layer (\(backend)): \(count) objects")
            let kind: StoreType = backend == "SQLite" ? .sqlite : .lmdb
            func open(_ name: String) throws -> StoreCoordinator {
                let coordinator = StoreCoordinator(model: model)
                try coordinator.addStore(kind, configuration: "Main", at: dir.appendingPathComponent(name), options: StoreOptions(initialMapSize: 1 << 30))
                return coordinator
            }
            func clear(_ name: String) {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(at: dir.appendingPathComponent(name + suffix)) }
            }
            let ext = backend == "SQLite" ? "sqlite" : "lmdb"
            // Typed and string contexts each keep their own file.
            var timings: [String: [String: Double]] = [:]   // operation -> side -> seconds
            for side in ["typed", "string"] {
                let file = "ctx-\(side).\(ext)"
                timings["insert + save", default: [:]][side] = try measure(repeats: repeats, prepare: { clear(file) }) {
                    let context = ObjectContext(coordinator: try open(file))
                    for r in data {
                        if side == "typed" {
                            let o = try context.insert(BenchItem.self)
                            o.name = r.name; o.count = r.count; o.score = r.score; o.createdAt = r.createdAt; o.flag = r.flag; o.note = r.note
                        } else {
                            let o = try context.insert("Item")
                            try o.set("name", r.name); try o.set("count", r.count); try o.set("score", r.score)
                            try o.set("createdAt", r.createdAt); try o.set("flag", r.flag); try o.set("note", r.note)
                        }
                    }
                    try context.save()
                }
                let coordinator = try open(file)
                var checksum = 0
                timings["fetch all + read every attribute", default: [:]][side] = try measure(repeats: repeats) {
                    let context = ObjectContext(coordinator: coordinator)
                    checksum = 0
                    if side == "typed" {
                        for o in try context.fetch(BenchItem.self) {
                            checksum &+= o.name.utf8.count &+ Int(o.count) &+ Int(o.score)
                            checksum &+= Int(o.createdAt.timeIntervalSinceReferenceDate) &+ (o.flag ? 1 : 0) &+ (o.note?.utf8.count ?? 0)
                        }
                    } else {
                        for o in try context.fetch(FetchRequest(entityName: "Item")) {
                            checksum &+= (try o.get("name", as: String.self)!).utf8.count &+ Int(try o.get("count", as: Int64.self)!)
                            checksum &+= Int(try o.get("score", as: Double.self)!) &+ Int(try o.get("createdAt", as: Date.self)!.timeIntervalSinceReferenceDate)
                            checksum &+= (try o.get("flag", as: Bool.self)! ? 1 : 0) &+ ((try o.get("note", as: String.self))?.utf8.count ?? 0)
                        }
                    }
                }
                timings["indexed equality x\(lookups)", default: [:]][side] = try measure(repeats: repeats) {
                    let context = ObjectContext(coordinator: coordinator)
                    for name in names {
                        if side == "typed" {
                            for o in try context.fetch(BenchItem.self, where: \.name == name) { checksum &+= Int(o.count) }
                        } else {
                            let request = FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "name == %@", name))
                            for o in try context.fetch(request) { checksum &+= Int(try o.get("count", as: Int64.self)!) }
                        }
                    }
                }
                // Update every tenth object of a context that has fetched them all (not timed).
                let updateContext = ObjectContext(coordinator: coordinator)
                let all = try updateContext.fetch(BenchItem.self, sortedBy: [.ascending(\.count)])
                var round: Int64 = 0
                timings["update 10% + save", default: [:]][side] = try measure(repeats: repeats) {
                    round += 1
                    for i in stride(from: 0, to: all.count, by: 10) {
                        if side == "typed" { all[i].count = Int64(i) + round * 1_000_000 } else { try all[i].managedObject.set("count", Int64(i) + round * 1_000_000) }
                    }
                    try updateContext.save()
                }
                timings["count with a predicate x100", default: [:]][side] = try measure(repeats: repeats) {
                    let context = ObjectContext(coordinator: coordinator)
                    for k in 0..<100 {
                        if side == "typed" {
                            checksum &+= try context.count(BenchItem.self, where: \.score >= Double(threshold + Int64(k)))
                        } else {
                            checksum &+= try context.count(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "score >= %f", Double(threshold + Int64(k)))))
                        }
                    }
                }
                if checksum == 42 { log("") }
            }
            let baselines = backend == "SQLite"
                ? try sqliteBaselines(data, names, threshold, coreDataStore: dir.appendingPathComponent("ctx-typed.\(ext)").path)
                : try lmdbBaselines(data, names, threshold)
            for (operation, sides) in timings.sorted(by: { $0.key < $1.key }) {
                results.append(BenchResult(
                    backend: "\(backend) objects", operation: operation, baselines: baselines[operation] ?? [:],
                    switchyard: sides["typed"]!, extras: ["string API": sides["string"]!]))
            }
        }
        return results
    }

    // MARK: - SQLite baselines: GRDB Codable records, raw C API

    struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "item"
        var id: Int64?
        var name: String, count: Int64, score: Double, createdAt: Date, flag: Bool, note: String?
        mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    }

    /// `coreDataStore` is the typed context's store: the count is also run with raw SQL on its table, in Core
    /// Data's layout (`Z_ENT`, `Z_OPT` and the attributes in Core Data's column order), to separate what the
    /// file format costs from what Switchyard adds.
    func sqliteBaselines(_ data: [Row], _ names: [String], _ threshold: Int64, coreDataStore: String) throws -> [String: [String: Double]] {
        var out: [String: [String: Double]] = [:]
        let grdbPath = dir.appendingPathComponent("grdb-records.sqlite").path
        let rawPath = dir.appendingPathComponent("raw-objects.sqlite").path
        let create = "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, count INTEGER NOT NULL, score REAL NOT NULL, createdAt TEXT NOT NULL, flag INTEGER NOT NULL, note TEXT); CREATE INDEX item_name ON item(name)"
        func clear(_ path: String) { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        out["insert + save", default: [:]]["GRDB records"] = try measure(repeats: repeats, prepare: { clear(grdbPath) }) {
            let pool = try DatabasePool(path: grdbPath)
            try pool.write { db in
                try db.execute(sql: create)
                for r in data {
                    let record = ItemRecord(id: nil, name: r.name, count: r.count, score: r.score, createdAt: r.createdAt, flag: r.flag, note: r.note)
                    try record.insert(db)
                }
            }
        }
        let pool = try DatabasePool(path: grdbPath)
        var checksum = 0
        out["fetch all + read every attribute", default: [:]]["GRDB records"] = try measure(repeats: repeats) {
            checksum = 0
            for o in try pool.read({ try ItemRecord.fetchAll($0) }) {
                checksum &+= o.name.utf8.count &+ Int(o.count) &+ Int(o.score)
                checksum &+= Int(o.createdAt.timeIntervalSinceReferenceDate) &+ (o.flag ? 1 : 0) &+ (o.note?.utf8.count ?? 0)
            }
        }
        out["indexed equality x\(names.count)", default: [:]]["GRDB records"] = try measure(repeats: repeats) {
            for name in names {
                for o in try pool.read({ try ItemRecord.filter(Column("name") == name).fetchAll($0) }) { checksum &+= Int(o.count) }
            }
        }
        var all = try pool.read { try ItemRecord.order(Column("count")).fetchAll($0) }
        var round: Int64 = 0
        out["update 10% + save", default: [:]]["GRDB records"] = try measure(repeats: repeats) {
            round += 1
            try pool.write { db in
                for i in stride(from: 0, to: all.count, by: 10) {
                    all[i].count = Int64(i) + round * 1_000_000
                    try all[i].update(db)
                }
            }
        }
        out["count with a predicate x100", default: [:]]["GRDB records"] = try measure(repeats: repeats) {
            for k in 0..<100 {
                checksum &+= try pool.read { try ItemRecord.filter(Column("score") >= Double(threshold + Int64(k))).fetchCount($0) }
            }
        }

        // Raw C API: prepared statements, one transaction per save, WAL like the others.
        out["insert + save", default: [:]]["raw SQLite"] = try measure(repeats: repeats, prepare: { clear(rawPath) }) {
            let db = try RawSQLite(path: rawPath)
            try db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
            try db.exec(create)
            try db.exec("BEGIN")
            let stmt = try db.prepare("INSERT INTO item (name, count, score, createdAt, flag, note) VALUES (?,?,?,?,?,?)")
            for r in data {
                sqlite3_bind_text(stmt, 1, r.name, -1, SQLITE_TRANSIENT)
                sqlite3_bind_int64(stmt, 2, r.count)
                sqlite3_bind_double(stmt, 3, r.score)
                sqlite3_bind_double(stmt, 4, r.createdAt.timeIntervalSinceReferenceDate)
                sqlite3_bind_int64(stmt, 5, r.flag ? 1 : 0)
                if let note = r.note { sqlite3_bind_text(stmt, 6, note, -1, SQLITE_TRANSIENT) } else { sqlite3_bind_null(stmt, 6) }
                guard sqlite3_step(stmt) == SQLITE_DONE else { throw RawSQLite.Failure(db.message) }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
            try db.exec("COMMIT")
        }
        let db = try RawSQLite(path: rawPath)
        func text(_ stmt: OpaquePointer?, _ i: Int32) -> String? {
            guard let p = sqlite3_column_text(stmt, i) else { return nil }
            return String(cString: p)
        }
        out["fetch all + read every attribute", default: [:]]["raw SQLite"] = try measure(repeats: repeats) {
            let stmt = try db.prepare("SELECT id, name, count, score, createdAt, flag, note FROM item")
            while sqlite3_step(stmt) == SQLITE_ROW {
                checksum &+= (text(stmt, 1)?.utf8.count ?? 0) &+ Int(sqlite3_column_int64(stmt, 2)) &+ Int(sqlite3_column_double(stmt, 3))
                checksum &+= Int(sqlite3_column_double(stmt, 4)) &+ Int(sqlite3_column_int64(stmt, 5)) &+ (text(stmt, 6)?.utf8.count ?? 0)
            }
            sqlite3_finalize(stmt)
        }
        out["indexed equality x\(names.count)", default: [:]]["raw SQLite"] = try measure(repeats: repeats) {
            let stmt = try db.prepare("SELECT id, name, count, score, createdAt, flag, note FROM item WHERE name = ?")
            for name in names {
                try db.exec("BEGIN")
                sqlite3_bind_text(stmt, 1, name, -1, SQLITE_TRANSIENT)
                while sqlite3_step(stmt) == SQLITE_ROW { checksum &+= Int(sqlite3_column_int64(stmt, 2)) &+ (text(stmt, 1)?.count ?? 0) }
                sqlite3_reset(stmt)
                try db.exec("COMMIT")
            }
            sqlite3_finalize(stmt)
        }
        round = 0
        out["update 10% + save", default: [:]]["raw SQLite"] = try measure(repeats: repeats) {
            round += 1
            try db.exec("BEGIN")
            let stmt = try db.prepare("UPDATE item SET name = ?, count = ?, score = ?, createdAt = ?, flag = ?, note = ? WHERE id = ?")
            for i in stride(from: 0, to: data.count, by: 10) {
                let r = data[i]
                sqlite3_bind_text(stmt, 1, r.name, -1, SQLITE_TRANSIENT)
                sqlite3_bind_int64(stmt, 2, Int64(i) + round * 1_000_000)
                sqlite3_bind_double(stmt, 3, r.score)
                sqlite3_bind_double(stmt, 4, r.createdAt.timeIntervalSinceReferenceDate)
                sqlite3_bind_int64(stmt, 5, r.flag ? 1 : 0)
                if let note = r.note { sqlite3_bind_text(stmt, 6, note, -1, SQLITE_TRANSIENT) } else { sqlite3_bind_null(stmt, 6) }
                sqlite3_bind_int64(stmt, 7, Int64(i + 1))
                guard sqlite3_step(stmt) == SQLITE_DONE else { throw RawSQLite.Failure(db.message) }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
            try db.exec("COMMIT")
        }
        let coreData = try RawSQLite(path: coreDataStore)
        out["count with a predicate x100", default: [:]]["raw SQLite, Core Data table"] = try measure(repeats: repeats) {
            let stmt = try coreData.prepare("SELECT COUNT(*) FROM ZITEM WHERE ZSCORE >= ?")
            for k in 0..<100 {
                sqlite3_bind_double(stmt, 1, Double(threshold + Int64(k)))
                while sqlite3_step(stmt) == SQLITE_ROW { checksum &+= Int(sqlite3_column_int64(stmt, 0)) }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
        }
        out["count with a predicate x100", default: [:]]["raw SQLite"] = try measure(repeats: repeats) {
            let stmt = try db.prepare("SELECT COUNT(*) FROM item WHERE score >= ?")
            for k in 0..<100 {
                sqlite3_bind_double(stmt, 1, Double(threshold + Int64(k)))
                while sqlite3_step(stmt) == SQLITE_ROW { checksum &+= Int(sqlite3_column_int64(stmt, 0)) }
                sqlite3_reset(stmt)
            }
            sqlite3_finalize(stmt)
        }
        if checksum == 42 { print("") }
        return out
    }

    // MARK: - LMDB baseline: raw C API

    static func encode(_ r: Row, count: Int64, into out: inout [UInt8]) {
        withUnsafeBytes(of: count) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: r.score.bitPattern) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: r.createdAt.timeIntervalSinceReferenceDate.bitPattern) { out.append(contentsOf: $0) }
        out.append(r.flag ? 1 : 0)
        for s in [r.name, r.note] {
            guard let s else { withUnsafeBytes(of: UInt32.max) { out.append(contentsOf: $0) }; continue }
            withUnsafeBytes(of: UInt32(s.utf8.count)) { out.append(contentsOf: $0) }
            out.append(contentsOf: s.utf8)
        }
    }

    /// Decodes every field (as reading every attribute does) and returns a checksum of them.
    static func decodeChecksum(_ b: UnsafeRawBufferPointer) -> Int {
        let item = EncodedItem(bytes: b)
        let (name, note) = item.texts
        var sum = Int(item.count) &+ Int(item.score) &+ Int(item.createdAt) &+ (item.flag ? 1 : 0)
        sum &+= name.utf8.count &+ (note?.utf8.count ?? 0)
        return sum
    }

    /// The floor's fetch (see `lmdbBaselines`): every row as a `FloorObject`, optionally registered by primary
    /// key, then every attribute read from the objects. The array is sized for the `expected` rows up front. The
    /// dictionary is not, though `ObjectContext` sizes its registry so: sized up front it took longer in the
    /// headline's process (27.5–28.1 ms against 20.5–22.1 ms grown by doubling; the first touch of a fresh
    /// 4 MB table), and a floor takes the cheaper way. (In a process that had done nothing else, sizing it was
    /// 15% faster: the heap's state decides.)
    static func floorFetchAll(
        _ txn: OpaquePointer?, _ rows: MDB_dbi, expected: Int, identityMap: Bool
    ) throws -> (checksum: Int, objects: Int) {
        var cursor: OpaquePointer?
        try RawLMDB.check(mdb_cursor_open(txn, rows, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val(), value = MDB_val()
        var registry: [Int64: FloorObject] = [:]
        var objects: [FloorObject] = []
        objects.reserveCapacity(expected)
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            let primaryKey = Int64(bigEndian: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                .loadUnaligned(fromByteOffset: key.mv_size - 8, as: Int64.self))
            let object = FloorObject(primaryKey: primaryKey, EncodedItem(bytes: UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)))
            if identityMap { registry[primaryKey] = object }
            objects.append(object)
            op = MDB_NEXT
        }
        var sum = 0
        for o in objects {
            sum &+= o.name.utf8.count &+ Int(o.count) &+ Int(o.score)
            sum &+= Int(o.createdAt.timeIntervalSinceReferenceDate) &+ (o.flag ? 1 : 0) &+ (o.note?.utf8.count ?? 0)
        }
        return (sum, identityMap ? registry.count : objects.count)
    }

    func lmdbBaselines(_ data: [Row], _ names: [String], _ threshold: Int64) throws -> [String: [String: Double]] {
        var out: [String: [String: Double]] = [:]
        let path = dir.appendingPathComponent("raw-objects.lmdb").path
        out["insert + save", default: [:]]["raw LMDB"] = try measure(repeats: repeats, prepare: {
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }) {
            // A name may name several rows, as the model's index allows (and SQLite's `item_name`): a DUPSORT index.
            let env = try RawLMDB(path: path, indexFlags: MDB_DUPSORT)
            try env.write { txn, rows, index in
                var value: [UInt8] = []
                for (i, r) in data.enumerated() {
                    var key = RawLMDB.rowKey(entity: 1, primaryKey: UInt64(i + 1))
                    value.removeAll(keepingCapacity: true)
                    Self.encode(r, count: r.count, into: &value)
                    try RawLMDB.put(txn, rows, &key, &value)
                    var name = Array(r.name.utf8)
                    try RawLMDB.put(txn, index, &name, &key)
                }
            }
        }
        let env = try RawLMDB(path: path)
        var checksum = 0
        out["fetch all + read every attribute", default: [:]]["raw LMDB"] = try measure(repeats: repeats) {
            checksum = try env.read { txn, rows, _ in
                var cursor: OpaquePointer?
                try RawLMDB.check(mdb_cursor_open(txn, rows, &cursor))
                defer { mdb_cursor_close(cursor) }
                var key = MDB_val(), value = MDB_val()
                var sum = 0
                var op = MDB_FIRST
                while mdb_cursor_get(cursor, &key, &value, op) == 0 {
                    sum &+= Self.decodeChecksum(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
                    op = MDB_NEXT
                }
                return sum
            }
        }
        // The least any object layer pays on top of the raw read: a hand-written final class per row holding the
        // six decoded values, the objects returned in an array and read back; the second floor also keeps each
        // object in Swift's `Dictionary` by primary key, as an identity map (one object per row, as
        // `ObjectContext` and Core Data guarantee) must. Nothing else: no entity lookup, no change tracking, no
        // relationships. (An open-addressing table of keys and optional objects instead of the dictionary took
        // 40% longer: its stores of class references retain and release.)
        for identityMap in [false, true] {
            let label = identityMap ? "floor: raw LMDB, an object per row + identity map" : "floor: raw LMDB, an object per row"
            out["fetch all + read every attribute", default: [:]][label] = try measure(repeats: repeats) {
                let (sum, objects) = try env.read { txn, rows, _ in try Self.floorFetchAll(txn, rows, expected: data.count, identityMap: identityMap) }
                guard objects == data.count else { throw BenchFailure("\(label) made \(objects) objects of \(data.count)") }
                checksum &+= sum
            }
        }
        // Every row of the name, as a fetch returns them: the index's duplicates through a cursor.
        out["indexed equality x\(names.count)", default: [:]]["raw LMDB"] = try measure(repeats: repeats) {
            for name in names {
                checksum &+= try env.read { txn, rows, index in
                    var cursor: OpaquePointer?
                    try RawLMDB.check(mdb_cursor_open(txn, index, &cursor))
                    defer { mdb_cursor_close(cursor) }
                    var bytes = Array(name.utf8)
                    return try bytes.withUnsafeMutableBytes { b in
                        var k = MDB_val(mv_size: b.count, mv_data: b.baseAddress), rowKey = MDB_val(), v = MDB_val()
                        var sum = 0
                        var rc = mdb_cursor_get(cursor, &k, &rowKey, MDB_SET_KEY)
                        while rc == 0 {
                            try RawLMDB.check(mdb_get(txn, rows, &rowKey, &v))
                            sum &+= Self.decodeChecksum(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                            rc = mdb_cursor_get(cursor, &k, &rowKey, MDB_NEXT_DUP)
                        }
                        guard rc == MDB_NOTFOUND else { throw RawLMDB.Failure(description: String(cString: mdb_strerror(rc))) }
                        return sum
                    }
                }
            }
        }
        // For reference, the least a lookup can be: one mdb_get on a unique index of the same names (built
        // untimed), which cannot return a second row of a name.
        try env.writeUnique(data.enumerated().map { (Array($0.element.name.utf8), RawLMDB.rowKey(entity: 1, primaryKey: UInt64($0.offset + 1))) })
        out["indexed equality x\(names.count)", default: [:]]["raw LMDB, unique index (one mdb_get)"] = try measure(repeats: repeats) {
            for name in names {
                checksum &+= try env.read(indexName: "unique") { txn, rows, unique in
                    var bytes = Array(name.utf8)
                    return try bytes.withUnsafeMutableBytes { b in
                        var k = MDB_val(mv_size: b.count, mv_data: b.baseAddress), rowKey = MDB_val(), v = MDB_val()
                        guard mdb_get(txn, unique, &k, &rowKey) == 0 else { return 0 }
                        try RawLMDB.check(mdb_get(txn, rows, &rowKey, &v))
                        return Self.decodeChecksum(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                    }
                }
            }
        }
        var round: Int64 = 0
        out["update 10% + save", default: [:]]["raw LMDB"] = try measure(repeats: repeats) {
            round += 1
            try env.write { txn, rows, _ in
                var value: [UInt8] = []
                for i in stride(from: 0, to: data.count, by: 10) {
                    var key = RawLMDB.rowKey(entity: 1, primaryKey: UInt64(i + 1))
                    value.removeAll(keepingCapacity: true)
                    Self.encode(data[i], count: Int64(i) + round * 1_000_000, into: &value)
                    try RawLMDB.put(txn, rows, &key, &value)
                }
            }
        }
        out["count with a predicate x100", default: [:]]["raw LMDB"] = try measure(repeats: repeats) {
            for k in 0..<100 {
                let limit = Double(threshold + Int64(k))
                checksum &+= try env.read { txn, rows, _ in
                    var cursor: OpaquePointer?
                    try RawLMDB.check(mdb_cursor_open(txn, rows, &cursor))
                    defer { mdb_cursor_close(cursor) }
                    var key = MDB_val(), value = MDB_val()
                    var n = 0
                    var op = MDB_FIRST
                    while mdb_cursor_get(cursor, &key, &value, op) == 0 {
                        if EncodedItem(bytes: UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)).score >= limit { n += 1 }
                        op = MDB_NEXT
                    }
                    return n
                }
            }
        }
        if checksum == 42 { print("") }
        return out
    }
}

/// The bench entity as the least an object layer could make of a row (the floor of `lmdbBaselines`).
final class FloorObject {
    let primaryKey: Int64
    let name: String, count: Int64, score: Double, createdAt: Date, flag: Bool, note: String?

    /// The object of a row written by `ObjectLayerBench.encode`.
    init(primaryKey: Int64, _ item: EncodedItem) {
        self.primaryKey = primaryKey
        count = item.count
        score = item.score
        createdAt = Date(timeIntervalSinceReferenceDate: item.createdAt)
        flag = item.flag
        (name, note) = item.texts
    }
}

/// A row `ObjectLayerBench.encode` wrote, read in place: beside `encode`, the one place that knows the layout
/// (count, score and creation time as 8 bytes each, the flag as 1, then the name and the note, each a 4-byte
/// length, `UInt32.max` for none, and its UTF-8 bytes).
struct EncodedItem {
    let bytes: UnsafeRawBufferPointer

    @inline(__always) var count: Int64 { bytes.loadUnaligned(fromByteOffset: 0, as: Int64.self) }
    @inline(__always) var score: Double { Double(bitPattern: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    /// Seconds since the reference date.
    @inline(__always) var createdAt: Double { Double(bitPattern: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)) }
    @inline(__always) var flag: Bool { bytes[24] != 0 }

    /// The name and the note, decoded.
    @inline(__always) var texts: (name: String, note: String?) {
        let nameLength = Int(bytes.loadUnaligned(fromByteOffset: 25, as: UInt32.self))
        let noteLength = bytes.loadUnaligned(fromByteOffset: 29 + nameLength, as: UInt32.self)
        return (text(at: 29, count: nameLength), noteLength == .max ? nil : text(at: 33 + nameLength, count: Int(noteLength)))
    }

    @inline(__always) private func text(at start: Int, count: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]), as: UTF8.self)
    }
}

/// The bench entity as a hand-written typed entity (what `storeinspect codegen` would write).
struct BenchItem: EntityObject {
    static let entityName = "Item"
    static let declaredProperties: [DeclaredProperty] = [
        .attribute("name", String.self), .attribute("count", Int64.self), .attribute("score", Double.self),
        .attribute("createdAt", Date.self), .attribute("flag", Bool.self), .optionalAttribute("note", String.self),
    ]
    static var keyPathNames: [PartialKeyPath<BenchItem>: String] {
        [\BenchItem.name: "name", \BenchItem.count: "count", \BenchItem.score: "score", \BenchItem.createdAt: "createdAt", \BenchItem.flag: "flag", \BenchItem.note: "note"]
    }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var name: String { get { managedObject[attribute: "name"] } nonmutating set { managedObject[attribute: "name"] = newValue } }
    var count: Int64 { get { managedObject[attribute: "count"] } nonmutating set { managedObject[attribute: "count"] = newValue } }
    var score: Double { get { managedObject[attribute: "score"] } nonmutating set { managedObject[attribute: "score"] = newValue } }
    var createdAt: Date { get { managedObject[attribute: "createdAt"] } nonmutating set { managedObject[attribute: "createdAt"] = newValue } }
    var flag: Bool { get { managedObject[attribute: "flag"] } nonmutating set { managedObject[attribute: "flag"] = newValue } }
    var note: String? { get { managedObject[attribute: "note"] } nonmutating set { managedObject[attribute: "note"] = newValue } }
}

import Foundation
import GRDB
import Switchyard

// MARK: - SplitBench

/// `storesplit` SQLite -> SQLite on a legacy Messenger store (`Schemas/MessengerLegacy.xcdatamodeld`) against
/// the `sqlite3` CLI copying the same tables with ATTACH + INSERT ... SELECT into fresh files, in the same
/// run; plus the storesplit child's peak RSS (`getrusage(RUSAGE_CHILDREN)`, read before sqlite3 runs).
/// Goals: at least half sqlite3's speed; under 100 MB peak for 2,000,000 rows.
struct SplitBench {
    let messages: Int
    let dir: URL

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let legacyModel = try ModelLoader.load(at: URL(fileURLWithPath: "Schemas/MessengerLegacy.xcdatamodeld"))
        let targetURL = URL(fileURLWithPath: "Schemas/Messenger.xcdatamodeld")
        let target = try ModelLoader.load(at: targetURL)
        let source = dir.appendingPathComponent("Legacy.sqlite")
        log("split: building a legacy store with \(messages) messages")
        let rows = try buildSource(at: source, model: legacyModel)
        let outputs = dir.appendingPathComponent("split", isDirectory: true)
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        let configurations = target.configurations.map(\.name)
        let storeArguments = configurations.flatMap { ["--store", "\($0)=\(outputs.path)/\($0).sqlite"] }

        let tool = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("storesplit")
        log("split: storesplit \(rows) rows")
        let (split, plainReport) = try Self.run(tool.path, [source.path, "--model", targetURL.path, "--force", "--json"] + storeArguments)
        log("split: storesplit --verify")
        let (verified, verifyReport) = try Self.run(tool.path, [source.path, "--model", targetURL.path, "--force", "--verify", "--json"] + storeArguments)
        // Each run's own peak (VmHWM, from its JSON report): getrusage's figure for children also counts the
        // bench's memory inherited at fork.
        let peak = try [plainReport, verifyReport].map(Self.peakMemory).max()! / 1024

        // sqlite3: the same source tables into one fresh file per configuration, with the source's DDL (tables
        // and their indexes, as storesplit's outputs have indexes).
        log("split: sqlite3 ATTACH + INSERT ... SELECT")
        let ddl = try DatabaseQueue(path: source.path).read { db in
            try Row.fetchAll(db, sql: "SELECT tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('table', 'index') ORDER BY type DESC")
                .map { (table: $0[0] as String, sql: $0[1] as String) }
        }
        var script = ""
        for configuration in target.configurations {
            let file = dir.appendingPathComponent("sqlite3-\(configuration.name).sqlite").path
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            let tables = Set(configuration.entityNames.compactMap { target.entity(named: $0)?.rootName }).map { "Z" + $0.uppercased() }
            script += ".open \(file)\nPRAGMA journal_mode=WAL;\nATTACH 'file:\(source.path)?mode=ro' AS src;\nBEGIN;\n"
            for statement in ddl where tables.contains(statement.table) { script += statement.sql + ";\n" }
            for table in tables.sorted() { script += "INSERT INTO main.\(table) SELECT * FROM src.\(table);\n" }
            script += "COMMIT;\nDETACH src;\n"
        }
        let scriptURL = dir.appendingPathComponent("split.sql")
        try Data(script.utf8).write(to: scriptURL)
        let sqlite3 = try Self.run("/usr/bin/env", ["sqlite3", "-bail", "-cmd", ".read \(scriptURL.path)", ":memory:", ".quit"]).seconds
        let mb = Double(peak) / 1024
        log(String(format: "split: storesplit %.2f s, sqlite3 %.2f s, peak RSS %.1f MB", split, sqlite3, mb))
        return [BenchResult(
            backend: "split", operation: "storesplit SQLite -> 3 SQLite (\(rows) rows)",
            baselines: ["sqlite3 ATTACH + INSERT SELECT": sqlite3], switchyard: split,
            extras: ["storesplit --verify": verified],
            info: [
                "storesplit rows/s": String(format: "%.0f", Double(rows) / split),
                "sqlite3 rows/s": String(format: "%.0f", Double(rows) / sqlite3),
                "speed vs sqlite3": String(format: "%.2fx", sqlite3 / split),
                "storesplit peak RSS": String(format: "%.1f MB", mb),
            ])]
    }

    // MARK: - Source

    /// The legacy store: `messages` Messages (a third with a link preview), 1 chat per 1000 messages, 1 preview
    /// per 100, plus a few accounts, drafts, settings and avatars. Returns the row count.
    private func buildSource(at url: URL, model: ObjectModel) throws -> Int {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let store = try SQLiteStore(url: url, model: model, configuration: "Default")
        var total = 0
        func insert(_ entity: String, _ count: Int, _ make: (Int, Int64) -> StoreRow) throws {
            var done = 0
            while done < count {
                let n = min(20_000, count - done)
                let keys = try store.allocatePrimaryKeys(for: entity, count: n)
                try store.save(StoreChangeSet(inserts: keys.enumerated().map { make(done + $0.offset, $0.element) }))
                done += n
            }
            total += count
        }
        let chats = messages / 1_000 + 1, previews = messages / 100 + 1
        try insert("Account", 10) { i, pk in StoreRow(entityName: "Account", primaryKey: pk, values: ["accountID": .string("a\(i)")]) }
        try insert("Chat", chats) { i, pk in
            StoreRow(entityName: "Chat", primaryKey: pk, values: ["chatID": .string("c\(i)"), "title": .string("Chat \(i)")],
                     toOne: ["owner": RowReference(entityName: "Account", primaryKey: Int64(i % 10 + 1))])
        }
        try insert("LinkPreview", previews) { i, pk in
            StoreRow(entityName: "LinkPreview", primaryKey: pk, values: ["url": .string("https://example.com/\(i)"), "title": .string("Page \(i)")])
        }
        try insert("Message", messages) { i, pk in
            var toOne = ["chat": RowReference(entityName: "Chat", primaryKey: Int64(i % chats + 1))]
            if i % 3 == 0 { toOne["preview"] = RowReference(entityName: "LinkPreview", primaryKey: Int64(i % previews + 1)) }
            return StoreRow(entityName: "Message", primaryKey: pk, values: [
                "messageID": .string("m\(i)"), "text": .string("message number \(i) with some text"),
                "sentAt": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i))), "sequence": .integer(Int64(i)),
                "priority": .integer(Int64(i % 3)), "isRead": .bool(i % 2 == 0), "score": .double(Double(i % 100) / 10),
            ], toOne: toOne)
        }
        try insert("Draft", messages / 100 + 1) { i, pk in
            StoreRow(entityName: "Draft", primaryKey: pk, values: ["accountID": .string("a\(i % 10)"), "text": .string("draft \(i)")],
                     toOne: ["chat": RowReference(entityName: "Chat", primaryKey: Int64(i % chats + 1))])
        }
        try insert("Setting", 10) { i, pk in StoreRow(entityName: "Setting", primaryKey: pk, values: ["key": .string("k\(i)")]) }
        try insert("Avatar", 10) { i, pk in StoreRow(entityName: "Avatar", primaryKey: pk, values: ["accountID": .string("a\(i)")]) }
        return total
    }

    // MARK: - Processes

    /// Runs a child to completion and returns its wall time; a non-zero exit is an error carrying its stderr.
    /// Runs a command to its end: its wall time and standard output.
    static func run(_ executable: String, _ arguments: [String]) throws -> (seconds: Double, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        let err = Pipe()
        process.standardError = err
        let start = Date()
        try process.run()
        // stdout first, then stderr: the children write only warnings or an error to stderr, far below a
        // pipe's capacity, so neither read can block the other.
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(start)
        guard process.terminationStatus == 0 else {
            throw BenchFailure("\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                + String(decoding: stderr, as: UTF8.self))
        }
        return (seconds, output)
    }

    /// `peakMemoryBytes` from a storesplit `--json` report.
    static func peakMemory(_ report: Data) throws -> Int {
        guard let object = try JSONSerialization.jsonObject(with: report) as? [String: Any],
            let bytes = object["peakMemoryBytes"] as? Int
        else { throw BenchFailure("storesplit --json reported no peakMemoryBytes") }
        return bytes
    }
}

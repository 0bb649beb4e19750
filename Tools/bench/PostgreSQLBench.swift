import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import Switchyard
import SwitchyardDifferential
import SwitchyardPostgreSQL

/// `bench --postgres-objects N`: the object layer on a PostgreSQL store (typed `ObjectContext`, the bench entity
/// of the headline) against the same work through PostgresNIO by hand on a plain table of the same columns, on
/// the same server in the same run: insert + save (one transaction, multi-row INSERTs of the same size on both
/// sides), fetch all reading every attribute, indexed equality (each lookup its own query). `--postgres-load P`
/// adds P processes writing and reading one store (`PostgresLoad`), each the bench binary itself.
struct PostgreSQLBench {
    let url: URL
    let count: Int
    let lookups: Int
    let repeats: Int
    let loadProcesses: Int
    let loadObjects: Int

    func run(log: (String) -> Void) throws -> [BenchResult] {
        var results: [BenchResult] = []
        let rows = ObjectLayerBench(count: count, lookups: lookups, dir: URL(fileURLWithPath: NSTemporaryDirectory()), repeats: 1, backends: []).rows
        let names = (0..<lookups).map { "item-\(($0 * 7919) % count)" }
        let raw = try RawPostgres(url: url)
        defer { raw.close() }
        var insert = (switchyard: Double.infinity, raw: Double.infinity)
        var fetch = insert, lookup = insert, split = insert
        var rawCopy = Double.infinity
        // The split's source: the same rows in a SQLite store of the same model.
        let sourceDir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-pg-split-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: sourceDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: sourceDir) }
        let source = sourceDir.appendingPathComponent("Legacy.sqlite")
        do {
            let coordinator = StoreCoordinator(model: try ObjectLayerBench.model())
            try coordinator.addStore(.sqlite, configuration: "Main", at: source)
            try Self.insert(rows, into: coordinator)
        }
        for attempt in 0..<repeats {
            log("PostgreSQL: \(count) objects, attempt \(attempt + 1) of \(repeats)")
            let schema = "bench_\(UUID().uuidString.prefix(8).lowercased())"
            let storeURL = Self.url(url, schema: schema)
            let coordinator = StoreCoordinator(model: try ObjectLayerBench.model())
            let store = try coordinator.addStore(.postgreSQL, configuration: "Main", url: storeURL)
            defer { try? store.destroy() }
            insert.switchyard = min(insert.switchyard, try time {
                try Self.insert(rows, into: coordinator)
            })
            fetch.switchyard = min(fetch.switchyard, try time {
                let context = ObjectContext(coordinator: coordinator)
                var sum = 0.0
                for item in try context.fetch(BenchItem.self) {
                    sum += Double(item.count) + item.score + item.createdAt.timeIntervalSinceReferenceDate + (item.flag ? 1 : 0)
                    sum += Double(item.name.utf8.count + (item.note?.utf8.count ?? 0))
                }
                precondition(sum > 0)
            })
            lookup.switchyard = min(lookup.switchyard, try time {
                let context = ObjectContext(coordinator: coordinator)
                for name in names {
                    let found = try context.fetch(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "name == %@", name)))
                    precondition(found.count == 1)
                }
            })
            split.switchyard = min(split.switchyard, try time {
                let output = SplitDestination(configuration: "Main", url: Self.url(url, schema: schema + "_split"), type: .postgreSQL)
                let splitter = try StoreSplitter(source: source, targetModel: try ObjectLayerBench.model(), destinations: [output])
                let report = try splitter.run(try splitter.plan(), options: SplitOptions())
                precondition(report.outputs[0].entities.map(\.rows).reduce(0, +) == count)
            })
            try raw.drop(schema + "_split")
            try raw.reset(schema + "_copy")
            // The text is built before the clock starts: the yardstick is the server's own ingest.
            let copyData = RawPostgres.copyText(rows)
            rawCopy = min(rawCopy, try time { try raw.copy(copyData) })
            try raw.drop(schema + "_copy")
            try raw.reset(schema + "_raw")
            insert.raw = min(insert.raw, try time { try raw.insert(rows) })
            fetch.raw = min(fetch.raw, try time {
                let fetched = try raw.fetchAll()
                precondition(fetched == count)
            })
            lookup.raw = min(lookup.raw, try time {
                for name in names {
                    let found = try raw.lookup(name)
                    precondition(found == 1)
                }
            })
            try raw.drop(schema + "_raw")
        }
        results.append(BenchResult(
            backend: "PostgreSQL", operation: "insert + save (\(count))",
            baselines: ["raw PostgresNIO INSERT": insert.raw, "raw PostgresNIO COPY": rawCopy], switchyard: insert.switchyard))
        results.append(BenchResult(
            backend: "PostgreSQL", operation: "fetch all + read every attribute (\(count))", baselines: ["raw PostgresNIO": fetch.raw], switchyard: fetch.switchyard))
        results.append(BenchResult(
            backend: "PostgreSQL", operation: "indexed equality x\(lookups)", baselines: ["raw PostgresNIO": lookup.raw], switchyard: lookup.switchyard))
        results.append(BenchResult(
            backend: "PostgreSQL", operation: "storesplit SQLite -> PostgreSQL (\(count) rows)", baselines: ["PostgreSQL COPY of the rows": rawCopy],
            switchyard: split.switchyard))
        if loadProcesses > 0 {
            log("PostgreSQL: \(loadProcesses) processes x \(loadObjects) objects")
            let schema = "load_\(UUID().uuidString.prefix(8).lowercased())"
            let report = try PostgresLoad.run(
                url: Self.url(url, schema: schema), processes: loadProcesses, count: loadObjects,
                executable: URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(), arguments: ["--postgres-worker"])
            try raw.drop(schema)
            log("PostgreSQL load: \(report)")
            guard report.failures.isEmpty, report.lost == 0, report.duplicated == 0 else {
                throw ValidationError("bench: the load run lost or duplicated objects: \(report)")
            }
            results.append(BenchResult(
                backend: "PostgreSQL", operation: "\(loadProcesses) processes writing and reading one store", baselines: [:],
                switchyard: report.seconds,
                info: [
                    "objects/s": String(Int(report.objectsPerSecond)), "objects": String(report.rows), "reads": String(report.reads),
                    "lost": String(report.lost), "duplicated": String(report.duplicated),
                ]))
        }
        return results
    }

    /// The rows as typed objects in one context, saved once.
    static func insert(_ rows: [ObjectLayerBench.Row], into coordinator: StoreCoordinator) throws {
        let context = ObjectContext(coordinator: coordinator)
        for row in rows {
            let item = try context.insert(BenchItem.self)
            item.name = row.name
            item.count = row.count
            item.score = row.score
            item.createdAt = row.createdAt
            item.flag = row.flag
            item.note = row.note
        }
        try context.save()
    }

    /// `url` with `schema` (and TLS off unless the URL asks for it).
    static func url(_ url: URL, schema: String) -> URL {
        var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        var items = (parts.queryItems ?? []).filter { $0.name != "schema" }
        items.append(URLQueryItem(name: "schema", value: schema))
        if !items.contains(where: { $0.name == "sslmode" }) { items.append(URLQueryItem(name: "sslmode", value: "disable")) }
        parts.queryItems = items
        return parts.url!
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// The same work by hand through PostgresNIO: a plain table with the bench entity's columns and an index on
/// `name`.
final class RawPostgres {
    private let connection: PostgresConnection
    private let logger = Logger(label: "bench.raw") { _ in SwiftLogNoOpLogHandler() }

    init(url: URL) throws {
        let parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let config = PostgresConnection.Configuration(
            host: parts.host ?? "127.0.0.1", port: parts.port ?? 5432, username: parts.user ?? "postgres", password: parts.password,
            database: String(parts.path.dropFirst()), tls: .disable)
        connection = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: config, id: 9, logger: logger).wait()
    }

    func close() { try? connection.close().wait() }

    @discardableResult
    private func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        do {
            return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).wait().rows
        } catch {
            throw ValidationError("bench: raw PostgresNIO statement failed: \(String(reflecting: error).prefix(600))")
        }
    }

    func reset(_ schema: String) throws {
        try run("CREATE SCHEMA \"\(schema)\"")
        try run("SET search_path TO \"\(schema)\"")
        try run("CREATE TABLE item (id BIGINT PRIMARY KEY, name TEXT, count BIGINT, score DOUBLE PRECISION, created_at DOUBLE PRECISION, flag BIGINT, note TEXT)")
        try run("CREATE INDEX item_name ON item (name)")
    }

    func drop(_ schema: String) throws { try run("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE") }

    /// One transaction, multi-row INSERTs of the size the store uses (16,000 parameters at most).
    func insert(_ rows: [ObjectLayerBench.Row]) throws {
        try run("BEGIN")
        let perStatement = 16_000 / 7
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + perStatement, rows.count)]
            var binds = PostgresBindings(capacity: chunk.count * 7)
            var tuples: [String] = []
            for (offset, row) in chunk.enumerated() {
                let base = offset * 7
                tuples.append("(" + (1...7).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
                binds.append(Int64(start + offset + 1))
                binds.append(row.name)
                binds.append(row.count)
                binds.append(row.score)
                binds.append(row.createdAt.timeIntervalSinceReferenceDate)
                binds.append(Int64(row.flag ? 1 : 0))
                if let note = row.note { binds.append(note) } else { binds.appendNull() }
            }
            try run("INSERT INTO item (id, name, count, score, created_at, flag, note) VALUES " + tuples.joined(separator: ", "), binds)
            start += chunk.count
        }
        try run("COMMIT")
    }

    /// The rows in `COPY`'s text format.
    static func copyText(_ rows: [ObjectLayerBench.Row]) -> ByteBuffer {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
                .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        }
        var buffer = ByteBuffer()
        for (offset, row) in rows.enumerated() {
            buffer.writeString("\(offset + 1)\t\(escaped(row.name))\t\(row.count)\t\(row.score)\t\(row.createdAt.timeIntervalSinceReferenceDate)\t\(row.flag ? 1 : 0)\t")
            buffer.writeString(row.note.map(escaped) ?? "\\N")
            buffer.writeString("\n")
        }
        return buffer
    }

    /// The rows (`copyText`) with `COPY … FROM STDIN` in one transaction: PostgreSQL's own fastest way in, the
    /// split row's yardstick.
    func copy(_ buffer: ByteBuffer) throws {
        let data = buffer, connection = self.connection, logger = self.logger
        try run("BEGIN")
        let promise = connection.eventLoop.makePromise(of: Void.self)
        promise.completeWithTask {
            try await connection.copyFrom(table: "item", columns: ["id", "name", "count", "score", "created_at", "flag", "note"], logger: logger) { writer in
                try await writer.write(data)
            }
        }
        do {
            try promise.futureResult.wait()
        } catch {
            throw ValidationError("bench: raw COPY failed: \(String(reflecting: error).prefix(600))")
        }
        try run("COMMIT")
    }

    /// Every row, every column decoded.
    func fetchAll() throws -> Int {
        var sum = 0.0
        let rows = try run("SELECT id, name, count, score, created_at, flag, note FROM item ORDER BY id")
        for row in rows {
            let (id, name, count, score, createdAt, flag, note) = try row.decode((Int64, String, Int64, Double, Double, Int64, String?).self)
            sum += Double(id + count + flag) + score + createdAt + Double(name.utf8.count + (note?.utf8.count ?? 0))
        }
        precondition(sum > 0)
        return rows.count
    }

    func lookup(_ name: String) throws -> Int {
        var binds = PostgresBindings()
        binds.append(name)
        return try run("SELECT id, name, count, score, created_at, flag, note FROM item WHERE name = $1", binds).count
    }
}

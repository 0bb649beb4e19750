import ArgumentParser
import Foundation
import Switchyard
import SwitchyardDifferential

/// `bench`: measures Switchyard's stores against raw SQLite, GRDB and raw LMDB in one run, and prints ratios.
@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark Switchyard's stores against raw SQLite / GRDB and raw LMDB in the same run.",
        discussion: "Build in release mode: swift run -c release bench --objects 100000",
        version: SwitchyardInfo.version)

    @Option(help: "Number of objects per operation.")
    var objects = 100_000

    @Option(help: "Number of indexed-equality lookups.")
    var lookups = 1_000

    @Option(help: "Repetitions per measurement; the best time is kept.")
    var repeats = 3

    @Option(help: "The Messenger model (.xcdatamodeld).")
    var model = "Schemas/Messenger.xcdatamodeld"

    @Option(help: "Source objects for the cross-store fetched-property measurement (0 skips it).")
    var fetchedSources = 10_000

    @Option(help: "Source objects for the prefetch rows (batched prefetchFetchedProperty vs one object at a time, per destination backend); 0 skips them.")
    var prefetchSources = 2_000

    @Flag(help: "Run only the prefetch rows (see --prefetch-sources) and the fetched-property row (see --fetched-sources).")
    var prefetchOnly = false

    @Option(help: "Rows for the migration measurements (open unchanged store, add-attribute migration); 0 skips them.")
    var migrationRows = 0

    @Option(help: "Rows migrated through a four-version chain with one custom step, with peak memory; runs only this measurement (0 skips it).")
    var chainRows = 0

    @Option(help: "Rows for every kind of migration (add, add indexed, remove, rename, widen, rename entity, custom step), each timed with its peak memory; runs only these (0 skips them).")
    var migrationKindsRows = 0

    @Option(name: .customLong("split-rows"), help: "Messages in the legacy store storesplit splits, against sqlite3 ATTACH + INSERT ... SELECT (0 skips it).")
    var splitRows = 0

    @Option(help: "Backends to measure, comma-separated: sqlite, lmdb.")
    var backends = "sqlite,lmdb"

    @Option(help: "Working directory for the benchmark's files (default: a fresh temporary directory).")
    var workdir: String?

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Option(help: "Objects for the object-layer headline (typed and string ObjectContext vs GRDB records and the raw C APIs); 0 skips it.")
    var objectLayer = 0

    @Option(help: "Objects walked with ObjectContext.forEach in batches against one fetch, with the peak memory each adds; 0 skips it.")
    var walkObjects = 0

    @Option(help: "Rows for batch update and delete (half of them each) against one SQL statement and against objects, per backend; runs only this measurement (0 skips it).")
    var batchRows = 0

    @Option(help: "Saves measured with and without a save observer (and with a context merging each), per backend; runs only this measurement (0 skips it).")
    var observedSaves = 0

    @Flag(help: "Run only the object-layer headline (see --object-layer), on the backends of --backends.")
    var objectLayerOnly = false

    @Option(help: "Run N seeded differential sequences (SQLite, LMDB, memory and a reference) instead of measuring; prints what they found.")
    var differential: Int?

    @Option(help: "Steps per differential sequence.")
    var differentialLength = 300

    @Option(help: "First seed of the differential sequences.")
    var differentialSeed: UInt64 = 1

    @Option(help: "Kill -9 harness: N kills per case (save, create, migrate, chain, split, copy, convert, move, replace) and backend, each followed by a read-only and a read-write check; exits 1 on any failure.")
    var crash = 0

    @Option(help: .hidden)
    var crashChild: String?

    @Option(help: "Objects for the PostgreSQL rows (typed ObjectContext on a PostgreSQL store vs PostgresNIO by hand); runs only these (0 skips them). The server: --postgres-url or SWITCHYARD_POSTGRES_URL.")
    var postgresObjects = 0

    @Option(help: "With --postgres-objects: also run this many processes writing and reading one PostgreSQL store.")
    var postgresLoad = 0

    @Option(help: "Objects each --postgres-load process writes.")
    var postgresLoadObjects = 1_000

    @Option(help: "The PostgreSQL server for --postgres-objects (postgres://user@host:port/database); default SWITCHYARD_POSTGRES_URL.")
    var postgresURL: String?

    @Option(parsing: .upToNextOption, help: .hidden)
    var postgresWorker: [String] = []

    func validate() throws {
        guard objects > 0 else { throw ValidationError("--objects must be positive") }
        guard lookups > 0, lookups <= objects else { throw ValidationError("--lookups must be between 1 and --objects") }
        guard splitRows >= 0 else { throw ValidationError("--split-rows must not be negative") }
        guard repeats > 0 else { throw ValidationError("--repeats must be positive") }
        guard crash >= 0 else { throw ValidationError("--crash must be 0 or positive") }
        guard chainRows >= 0 else { throw ValidationError("--chain-rows must be 0 or positive") }
        guard migrationKindsRows >= 0 else { throw ValidationError("--migration-kinds-rows must be 0 or positive") }
        guard migrationRows >= 0 else { throw ValidationError("--migration-rows must be 0 or positive") }
        guard batchRows >= 0 else { throw ValidationError("--batch-rows must be 0 or positive") }
        guard observedSaves >= 0 else { throw ValidationError("--observed-saves must be 0 or positive") }
        guard fetchedSources == 0 || fetchedSources >= 2 else { throw ValidationError("--fetched-sources must be 0 or at least 2") }
        guard prefetchSources == 0 || prefetchSources >= 2 else { throw ValidationError("--prefetch-sources must be 0 or at least 2") }
        guard !objectLayerOnly || objectLayer > 0 else { throw ValidationError("--object-layer-only needs --object-layer above 0") }
        guard !prefetchOnly || prefetchSources > 0 else { throw ValidationError("--prefetch-only needs --prefetch-sources above 0") }
        _ = try selectedBackends()
        if let differential, differential <= 0 { throw ValidationError("--differential must be positive") }
        guard postgresObjects >= 0, postgresLoad >= 0, postgresLoadObjects > 0 else {
            throw ValidationError("--postgres-objects and --postgres-load must be 0 or positive, --postgres-load-objects positive")
        }
        guard differentialLength > 0 else { throw ValidationError("--differential-length must be positive") }
    }

    /// The `--backends` list, in the order given, without repeats.
    func selectedBackends() throws -> [String] {
        var selected: [String] = []
        for name in backends.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            guard ["sqlite", "lmdb"].contains(name) else {
                throw ValidationError("--backends: unknown backend '\(name)' (use sqlite, lmdb)")
            }
            if !selected.contains(name) { selected.append(name) }
        }
        guard !selected.isEmpty else { throw ValidationError("--backends needs at least one of sqlite, lmdb") }
        return selected
    }

    func run() throws {
        if let differential {
            try DifferentialBench.run(sequences: differential, length: differentialLength, firstSeed: differentialSeed, workdir: workdir)
            return
        }
        if let crashChild { try CrashHarness.child(crashChild) }
        if postgresWorker.count == 4, let url = URL(string: postgresWorker[0]), let id = Int(postgresWorker[1]),
            let count = Int(postgresWorker[2]), let workers = Int(postgresWorker[3])
        {
            PostgresLoad.worker(url: url, id: id, count: count, workers: workers)
            return
        }
        if crash > 0 {
            let dir = URL(fileURLWithPath: workdir ?? NSTemporaryDirectory()).appendingPathComponent("switchyard-crash-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let failures = try CrashHarness(kills: crash, backends: try selectedBackends(), dir: dir) {
                FileHandle.standardError.write(Data("bench: \($0)\n".utf8))
            }.run()
            if failures > 0 { throw ExitCode(1) }
            return
        }
        let dir = URL(fileURLWithPath: workdir ?? NSTemporaryDirectory()).appendingPathComponent("switchyard-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let objectModel: ObjectModel
        do {
            objectModel = try ModelLoader.load(at: URL(fileURLWithPath: model))
        } catch {
            throw ValidationError("bench: cannot load model \(model): \(error)")
        }
        let data = BenchData(count: objects, lookups: lookups)
        var results: [BenchResult] = []
        if postgresObjects > 0 {
            guard let text = postgresURL ?? ProcessInfo.processInfo.environment["SWITCHYARD_POSTGRES_URL"], let url = URL(string: text) else {
                throw ValidationError("bench: --postgres-objects needs a server: --postgres-url postgres://user@host:port/database or SWITCHYARD_POSTGRES_URL")
            }
            results += try PostgreSQLBench(
                url: url, count: postgresObjects, lookups: min(lookups, postgresObjects), repeats: repeats, loadProcesses: postgresLoad,
                loadObjects: postgresLoadObjects
            ).run(log: log)
            return try report(results)
        }
        if migrationKindsRows > 0 {
            for backend in try selectedBackends() {
                results += try MigrationKindsBench(rows: migrationKindsRows, backend: backend, dir: dir).run(log: log)
            }
            return try report(results)
        }
        if batchRows > 0 {
            results += try BatchBench(rows: batchRows, dir: dir, backends: try selectedBackends()).run(log: log)
            return try report(results)
        }
        if observedSaves > 0 {
            results += try SaveObserverBench(saves: observedSaves, dir: dir, backends: try selectedBackends(), repeats: repeats).run(log: log)
            return try report(results)
        }
        if chainRows > 0 {
            for backend in try selectedBackends() {
                results += try ChainMigrationBench(rows: chainRows, backend: backend, dir: dir).run(log: log)
            }
            return try report(results)
        }
        if prefetchOnly {
            if fetchedSources > 0 {
                results += try FetchedPropertyBench(sources: fetchedSources, model: objectModel, dir: dir, repeats: repeats).run(log: log)
            }
            results += try PrefetchBench(sources: prefetchSources, model: objectModel, dir: dir, repeats: repeats).run(log: log)
            return try report(results)
        }
        if walkObjects > 0 {
            results += try WalkBench(count: walkObjects, dir: dir, backends: try selectedBackends()).run(log: log)
        }
        if objectLayer > 0 {
            results += try ObjectLayerBench(
                count: objectLayer, lookups: min(lookups, objectLayer), dir: dir, repeats: repeats, backends: try selectedBackends()
            ).run(log: log)
            if objectLayerOnly { return try report(results) }
        }
        for backend in try selectedBackends() {
            switch backend {
            case "sqlite": results += try SQLiteBench(data: data, model: objectModel, dir: dir, repeats: repeats).run(log: log)
            default: results += try LMDBBench(data: data, model: objectModel, dir: dir, repeats: repeats).run(log: log)
            }
        }
        if migrationRows > 0 {
            for backend in try selectedBackends() {
                results += try MigrationBench(rows: migrationRows, backend: backend, dir: dir, repeats: repeats).run(log: log)
            }
        }
        if fetchedSources > 0 {
            results += try FetchedPropertyBench(sources: fetchedSources, model: objectModel, dir: dir, repeats: repeats).run(log: log)
        }
        if prefetchSources > 0 {
            results += try PrefetchBench(sources: prefetchSources, model: objectModel, dir: dir, repeats: repeats).run(log: log)
        }
        if splitRows > 0 {
            results += try SplitBench(messages: splitRows, dir: dir).run(log: log)
        }
        try report(results)
    }

    private func report(_ results: [BenchResult]) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(BenchReport(objects: objects, lookups: lookups, results: results)), as: UTF8.self))
        } else {
            print(BenchReport(objects: objects, lookups: lookups, results: results).table)
        }
    }

    private func log(_ message: String) {
        if !json { FileHandle.standardError.write(Data("bench: \(message)\n".utf8)) }
    }
}

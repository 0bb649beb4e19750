import Foundation
import Switchyard

// MARK: - CrashHarness

/// `bench --crash N`: kills a child process (this binary, `--crash-child MODE:BACKEND:PATH`) with SIGKILL at
/// random moments while it saves, creates or migrates a store, N times per case and backend, and after each
/// kill checks that the store opens read-only and read-write with exactly the last committed state or the one
/// in flight. Prints one line per case and a total; fails when any check failed.
struct CrashHarness {
    let kills: Int
    let backends: [String]
    let dir: URL
    let log: (String) -> Void

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let cases = ["save", "create", "migrate", "chain", "split", "copy", "convert", "move", "replace"]

    /// Runs every case; returns the number of failed checks (each is logged).
    func run() throws -> Int {
        var failures = 0
        for backend in backends {
            for mode in Self.cases {
                var failed = 0, landed = 0
                let started = Date()
                let span = mode == "save" ? 0 : try measureSpan(mode: mode, backend: backend)
                for round in 0..<kills {
                    let store = dir.appendingPathComponent("\(mode)-\(round).\(backend)")
                    do {
                        if try kill(mode: mode, backend: backend, store: store, span: span) { landed += 1 }
                    } catch {
                        failed += 1
                        log("FAIL \(backend) \(mode) round \(round): \(error)")
                    }
                    Self.remove(store)
                }
                failures += failed
                log(String(
                    format: "crash %@ %@: %d kills (%d mid-operation), %d failures, %.1f s", backend, mode, kills, landed,
                    failed, Date().timeIntervalSince(started)))
            }
        }
        log("crash: \(kills * backends.count * Self.cases.count) kills, \(failures) failures")
        return failures
    }

    // MARK: - One kill

    /// Prepares, starts the child, kills it, checks. True when the kill landed before the child finished.
    private func kill(mode: String, backend: String, store: URL, span: TimeInterval) throws -> Bool {
        var rng = SystemRandomNumberGenerator()
        if mode == "migrate" { try Self.makeVersion1(store, backend: backend) }
        if mode == "chain" { try Self.makeChainVersion1(store, backend: backend) }
        if mode == "split" { try Self.makeSplitSource(store, backend: backend) }
        if Self.fileCases.contains(mode) { try Self.prepareFileOperation(mode, store, backend: backend) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        child.arguments = ["--crash-child", "\(mode):\(backend):\(store.path)"]
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        var committed = 0
        var transcript = ""
        switch mode {
        case "save":
            // Wait for a random number of commits, then kill somewhere in the next save.
            let target = Int.random(in: 1...12, using: &rng)
            while committed < target, child.isRunning {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                transcript += String(decoding: chunk, as: UTF8.self)
                committed = transcript.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") }.max() ?? 0
            }
            usleep(UInt32.random(in: 0...3_000, using: &rng))
        default:
            // A random moment inside the time a whole run of the child takes.
            let deadline = Date().addingTimeInterval(Double.random(in: 0...span, using: &rng))
            while child.isRunning, Date() < deadline { usleep(300) }
        }
        Foundation.kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        transcript += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if mode == "save" {
            committed = transcript.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") }.max() ?? 0
        }
        switch mode {
        case "save": try Self.checkSave(store, backend: backend, committed: committed)
        case "create": try Self.checkCreate(store, backend: backend)
        case "chain": try Self.checkChain(store, backend: backend)
        case "split": try Self.checkSplit(store, backend: backend)
        case _ where Self.fileCases.contains(mode): try Self.checkFileOperation(mode, store, backend: backend)
        default: try Self.checkMigrate(store, backend: backend)
        }
        return child.terminationReason == .uncaughtSignal
    }

    /// How long the child takes for `mode` when nobody kills it (process start included).
    private func measureSpan(mode: String, backend: String) throws -> TimeInterval {
        let store = dir.appendingPathComponent("span-\(mode).\(backend)")
        defer { Self.remove(store) }
        if mode == "migrate" { try Self.makeVersion1(store, backend: backend) }
        if mode == "chain" { try Self.makeChainVersion1(store, backend: backend) }
        if mode == "split" { try Self.makeSplitSource(store, backend: backend) }
        if Self.fileCases.contains(mode) { try Self.prepareFileOperation(mode, store, backend: backend) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        child.arguments = ["--crash-child", "\(mode):\(backend):\(store.path)"]
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        let started = Date()
        try child.run()
        child.waitUntilExit()
        return Date().timeIntervalSince(started)
    }

    // MARK: - Models

    static func saveModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Entry", attributes: [
                AttributeDescription(name: "seq", type: .integer64, isIndexed: true),
                AttributeDescription(name: "payload", type: .binary),
            ]),
        ])
    }

    static func createModel() throws -> ObjectModel {
        try ObjectModel(entities: (1...40).map { n in
            EntityDescription(name: "Entity\(n)", attributes: (1...5).map { a in
                AttributeDescription(name: "value\(a)", type: a % 2 == 0 ? .string : .integer64, isIndexed: a == 1)
            })
        })
    }

    static func migrateModel(_ version: Int) throws -> ObjectModel {
        let note = version == 1
            ? AttributeDescription(name: "note", type: .string)
            : AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: .string("-"))
        return try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64), note]),
        ])
    }

    static let migrateRows = 20_000

    static func open(_ url: URL, backend: String, model: ObjectModel, readOnly: Bool = false) throws -> any PersistentStore {
        let options = readOnly ? StoreOptions.readOnly : .default
        return backend == "sqlite"
            ? try SQLiteStore(url: url, model: model, configuration: "Default", options: options)
            : try LMDBStore(url: url, model: model, configuration: "Default", options: options)
    }

    static func payload(_ seq: Int64) -> Data { Data(repeating: UInt8(seq % 251), count: 2_048) }

    static func makeVersion1(_ url: URL, backend: String) throws {
        let store = try open(url, backend: backend, model: try migrateModel(1))
        _ = try store.allocatePrimaryKeys(for: "Record", count: migrateRows)
        try store.save(StoreChangeSet(inserts: (1...migrateRows).map {
            StoreRow(entityName: "Record", primaryKey: Int64($0), values: ["number": .integer(Int64($0))])
        }))
    }

    /// A V1 store of the migration chain `bench --chain-rows` measures (V1 → V2 → V3 custom → V4).
    static func makeChainVersion1(_ url: URL, backend: String) throws {
        let store = try open(url, backend: backend, model: try ChainMigrationBench.model(version: 1))
        _ = try store.allocatePrimaryKeys(for: "Record", count: migrateRows)
        try store.save(StoreChangeSet(inserts: (1...migrateRows).map {
            StoreRow(entityName: "Record", primaryKey: Int64($0), values: ["number": .integer(Int64($0)), "text": .string("row number \($0)")])
        }))
    }

    static func remove(_ url: URL) {
        // A split's directory (source and outputs) goes with the first removal.
        for suffix in ["", "-wal", "-shm", ".migrating", ".migrating-wal", ".migrating-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    // MARK: - Checks

    /// Rows 1...n with their payloads, n the last reported commit or the one in flight; then a write works.
    static func checkSave(_ url: URL, backend: String, committed: Int) throws {
        let model = try saveModel()
        for readOnly in [true, false] {
            let store = try open(url, backend: backend, model: model, readOnly: readOnly)
            let rows = try store.fetch(StoreFetchRequest(entityName: "Entry"))
            let seqs = rows.compactMap { row -> Int64? in if case .integer(let s)? = row.values["seq"] { return s } else { return nil } }.sorted()
            guard seqs == (0..<seqs.count).map({ Int64($0 + 1) }), seqs.count == committed || seqs.count == committed + 1 else {
                throw Failure(description: "reported \(committed) commits, store holds seqs \(seqs.prefix(5))… (\(seqs.count)), readOnly \(readOnly)")
            }
            for row in rows {
                guard case .integer(let seq)? = row.values["seq"], case .binary(let data)? = row.values["payload"], data == payload(seq) else {
                    throw Failure(description: "row \(row.primaryKey) has a damaged payload")
                }
            }
            if !readOnly {
                let key = try store.allocatePrimaryKeys(for: "Entry", count: 1).lowerBound
                try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Entry", primaryKey: key, values: ["seq": .integer(-1)])]))
            }
        }
    }

    /// No store, or a whole one that opens read-only and read-write.
    static func checkCreate(_ url: URL, backend: String) throws {
        let data = backend == "lmdb" ? url.appendingPathComponent("data.mdb") : url
        guard FileManager.default.fileExists(atPath: data.path) else { return }
        let model = try createModel()
        for readOnly in [true, false] {
            do {
                let store = try open(url, backend: backend, model: model, readOnly: readOnly)
                _ = try store.count(StoreFetchRequest(entityName: "Entity40"))
            } catch StoreError.notAStore(_, _, let reason) where backend == "lmdb" && readOnly && reason.contains("empty") {
                continue   // an LMDB environment made before its first commit: only a writer initializes it
            }
        }
    }

    /// The old store (version 1, every row) or the migrated one (version 2, every row with its default).
    static func checkMigrate(_ url: URL, backend: String) throws {
        let old = try migrateModel(1), new = try migrateModel(2)
        do {
            let reader = try (try? open(url, backend: backend, model: old, readOnly: true)) ?? open(url, backend: backend, model: new, readOnly: true)
            let stored = try reader.storedModel()
            guard stored == old || stored == new else { throw Failure(description: "the stored model is neither version") }
            let rows = try reader.count(StoreFetchRequest(entityName: "Record"))
            guard rows == migrateRows else { throw Failure(description: "read-only: \(rows) rows, want \(migrateRows)") }
        }
        let writer = try open(url, backend: backend, model: new)
        let defaulted = try writer.count(StoreFetchRequest(entityName: "Record", predicate: try FetchPredicate(format: "note == '-'")))
        guard defaulted == migrateRows else { throw Failure(description: "after migrating: \(defaulted) rows with the default") }
    }

    /// The store is at exactly one version of the chain with every row (read-only), and opening it with the
    /// chain finishes the migration with every row converted.
    static func checkChain(_ url: URL, backend: String) throws {
        let type: StoreType = backend == "sqlite" ? .sqlite : .lmdb
        var versions: [Int] = []
        for version in 1...4 {
            let report = try StoreCompatibility.check(type, at: url, model: try ChainMigrationBench.model(version: version), configuration: "Default")
            if report.report.verdict == .identical { versions.append(version) }
        }
        guard versions.count == 1, let version = versions.first else {
            throw Failure(description: "the store matches versions \(versions) of the chain, not exactly one")
        }
        do {
            let reader = try open(url, backend: backend, model: try ChainMigrationBench.model(version: version), readOnly: true)
            let rows = try reader.count(StoreFetchRequest(entityName: "Record"))
            guard rows == migrateRows else { throw Failure(description: "at V\(version): \(rows) rows, want \(migrateRows)") }
        }
        let coordinator = StoreCoordinator(model: try ChainMigrationBench.model(version: 4))
        try coordinator.setMigrationChain(try ChainMigrationBench.chain())
        let store = try coordinator.addStore(type, configuration: "Default", at: url)
        let converted = try store.count(StoreFetchRequest(entityName: "Record", predicate: try FetchPredicate(format: "length > 10 AND number BEGINSWITH '#'")))
        guard converted == migrateRows else { throw Failure(description: "from V\(version), the finished chain converted \(converted) of \(migrateRows) rows") }
    }

    // MARK: - Split

    static let splitRows = 10_000

    /// One configuration (Default) holding Alpha and Beta: the monolithic store a split breaks up.
    static func splitSourceModel(configurations: Bool = false) throws -> ObjectModel {
        let entities = [
            EntityDescription(name: "Alpha", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "n", type: .integer64, isIndexed: true),
                AttributeDescription(name: "blob", type: .binary, allowsExternalBinaryDataStorage: true),
            ]),
            EntityDescription(name: "Beta", attributes: [
                AttributeDescription(name: "title", type: .string), AttributeDescription(name: "m", type: .double),
            ]),
        ]
        guard configurations else { return try ObjectModel(entities: entities) }
        return try ObjectModel(entities: entities, configurations: [
            ConfigurationDescription(name: "A", entityNames: ["Alpha"]), ConfigurationDescription(name: "B", entityNames: ["Beta"]),
        ])
    }

    /// `dir` (a directory) with `source.<backend>`: splitRows Alphas and splitRows Betas.
    static func makeSplitSource(_ dir: URL, backend: String) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let store = try open(dir.appendingPathComponent("source.\(backend)"), backend: backend, model: try splitSourceModel())
        let alphas = try store.allocatePrimaryKeys(for: "Alpha", count: splitRows)
        let betas = try store.allocatePrimaryKeys(for: "Beta", count: splitRows)
        try store.save(StoreChangeSet(
            inserts: alphas.map { StoreRow(entityName: "Alpha", primaryKey: $0, values: alphaValues($0, prefix: "alpha")) }
                + betas.map { StoreRow(entityName: "Beta", primaryKey: $0, values: ["title": .string("beta \($0)"), "m": .double(Double($0) / 3)]) }))
    }

    /// The split of `dir/source.<backend>` into `A.sqlite` and `B.lmdb` (both kinds of output every time).
    static func splitter(_ dir: URL, backend: String) throws -> StoreSplitter {
        try StoreSplitter(
            source: dir.appendingPathComponent("source.\(backend)"), targetModel: try splitSourceModel(configurations: true),
            destinations: [
                SplitDestination(configuration: "A", url: dir.appendingPathComponent("A.sqlite"), type: .sqlite),
                SplitDestination(configuration: "B", url: dir.appendingPathComponent("B.lmdb"), type: .lmdb),
            ])
    }

    /// The source is untouched; running the same split again finishes or redoes it (no --force), with content
    /// verification, unless the killed run had already finished; the outputs then hold every row.
    static func checkSplit(_ dir: URL, backend: String) throws {
        do {
            let source = try open(dir.appendingPathComponent("source.\(backend)"), backend: backend, model: try splitSourceModel(), readOnly: true)
            for entity in ["Alpha", "Beta"] {
                let rows = try source.count(StoreFetchRequest(entityName: entity))
                guard rows == splitRows else { throw Failure(description: "the source holds \(rows) \(entity) rows, want \(splitRows)") }
            }
        }
        let splitter = try splitter(dir, backend: backend)
        let plan = try splitter.plan()
        do {
            _ = try splitter.run(plan, options: SplitOptions(batchSize: 1_000, verifyContent: true))
        } catch SplitError.outputExists {
            // The killed run had renamed both outputs: they must be whole (counted below).
        }
        let target = try splitSourceModel(configurations: true)
        let a = try SQLiteStore(url: dir.appendingPathComponent("A.sqlite"), model: target, configuration: "A", options: .readOnly)
        let b = try LMDBStore(url: dir.appendingPathComponent("B.lmdb"), model: target, configuration: "B", options: .readOnly)
        let counts = (try a.count(StoreFetchRequest(entityName: "Alpha")), try b.count(StoreFetchRequest(entityName: "Beta")))
        guard counts == (splitRows, splitRows) else { throw Failure(description: "the outputs hold \(counts), want \(splitRows) each") }
    }

    // MARK: - Child

    /// `--crash-child MODE:BACKEND:PATH`: the work that gets killed. `save` commits one row per save forever,
    /// printing "committed N" after each; `create` creates the store; `migrate` opens version 1 with version 2.
    static func child(_ spec: String) throws -> Never {
        let parts = spec.split(separator: ":", maxSplits: 2).map(String.init)
        guard parts.count == 3 else { throw Failure(description: "--crash-child MODE:BACKEND:PATH") }
        let (mode, backend, url) = (parts[0], parts[1], URL(fileURLWithPath: parts[2]))
        switch mode {
        case "save":
            let store = try open(url, backend: backend, model: try saveModel())
            var seq: Int64 = 0
            while true {
                seq += 1
                let key = try store.allocatePrimaryKeys(for: "Entry", count: 1).lowerBound
                try store.save(StoreChangeSet(inserts: [
                    StoreRow(entityName: "Entry", primaryKey: key, values: ["seq": .integer(seq), "payload": .binary(payload(seq))]),
                ]))
                FileHandle.standardOutput.write(Data("committed \(seq)\n".utf8))
            }
        case "create":
            _ = try open(url, backend: backend, model: try createModel())
        case "split":
            let splitter = try splitter(url, backend: backend)
            _ = try splitter.run(try splitter.plan(), options: SplitOptions(batchSize: 1_000))
        case _ where fileCases.contains(mode):
            try fileOperationChild(mode, url, backend: backend)
        case "chain":
            let coordinator = StoreCoordinator(model: try ChainMigrationBench.model(version: 4))
            try coordinator.setMigrationChain(try ChainMigrationBench.chain())
            try coordinator.addStore(backend == "sqlite" ? .sqlite : .lmdb, configuration: "Default", at: url)
        default:
            _ = try open(url, backend: backend, model: try migrateModel(2))
        }
        FileHandle.standardOutput.write(Data("finished\n".utf8))
        exit(0)
    }
}

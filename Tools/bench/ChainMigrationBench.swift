import Foundation
import Switchyard

/// `bench --chain-rows N`: a store of N rows written with V1 is opened by a coordinator on V4 with a migration
/// chain V1 → V2 (inferred: an attribute added) → V3 (custom: a number becomes a string, text is split into a
/// word and its length) → V4 (inferred: an optional attribute added). Reports the time and the process's
/// peak resident memory during the migration (Linux `VmHWM`, reset just before). Goal: under 150 MB at
/// 2,000,000 rows on SQLite and on LMDB.
struct ChainMigrationBench {
    let rows: Int
    let backend: String
    let dir: URL

    static func model(version: Int) throws -> ObjectModel {
        var attributes: [AttributeDescription]
        if version < 3 {
            attributes = [AttributeDescription(name: "number", type: .integer64), AttributeDescription(name: "text", type: .string)]
        } else {
            attributes = [
                AttributeDescription(name: "number", type: .string), AttributeDescription(name: "word", type: .string),
                AttributeDescription(name: "length", type: .integer64),
            ]
        }
        if version >= 2 { attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: .integer(0))) }
        if version >= 4 { attributes.append(AttributeDescription(name: "note", type: .string)) }
        return try ObjectModel(entities: [EntityDescription(name: "Record", attributes: attributes)])
    }

    static func chain() throws -> MigrationChain {
        var chain = try MigrationChain(versions: try (1...4).map { ModelVersion(name: "V\($0)", model: try model(version: $0)) })
        var step = CustomMigration(batchSize: 5_000)
        step.transform("Record") { old, new in
            try new.set("number", try old.value("number", as: Int64.self).map { "#\($0)" })
            let text = try old.value("text", as: String.self) ?? ""
            try new.set("word", text.split(separator: " ").last.map(String.init))
            try new.set("length", Int64(text.count))
        }
        try chain.setCustomStep(to: "V3", step)
        return chain
    }

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let url = dir.appendingPathComponent("chain.\(backend)")
        let type: StoreType = backend == "sqlite" ? .sqlite : .lmdb
        let options = StoreOptions(initialMapSize: 1 << 32)
        log("\(backend): writing \(rows) rows at V1 for the migration chain")
        let writeStart = Date()
        do {
            let store: any PersistentStore = backend == "sqlite"
                ? try SQLiteStore(url: url, model: try Self.model(version: 1), configuration: "Default")
                : try LMDBStore(url: url, model: try Self.model(version: 1), configuration: "Default", options: options)
            try MigrationBench.insertRecords(rows, into: store) { key in ["number": .integer(key), "text": .string("row number \(key)")] }
        }
        let writing = Date().timeIntervalSince(writeStart)
        log("\(backend): migrating \(rows) rows V1 -> V2 -> V3 (custom) -> V4")
        let coordinator = StoreCoordinator(model: try Self.model(version: 4))
        try coordinator.setMigrationChain(try Self.chain())
        let (seconds, mb, anonymousMB) = try Self.measureMemory {
            try coordinator.addStore(type, configuration: "Default", at: url, options: options)
        }
        let count = try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Record"))
        guard count == rows else { throw ValidationFailure(description: "chain migration left \(count) of \(rows) rows") }
        log(String(format: "%@: chain migration of %d rows: %.2f s, peak RSS %.1f MB (anonymous %.1f MB)", backend, rows, seconds, mb, anonymousMB))
        return [BenchResult(
            backend: backend, operation: "migration chain V1→V4, one custom step (\(rows) rows)", baselines: ["writing the V1 rows": writing],
            switchyard: seconds, info: ["peak RSS": String(format: "%.1f MB", mb), "peak anonymous RSS (sampled)": String(format: "%.1f MB", anonymousMB)])]
    }

    /// Runs `body` and returns its time, the process's peak RSS (`VmHWM`, reset just before) and the largest
    /// anonymous RSS sampled meanwhile, in MB: `VmHWM` counts the pages of LMDB's memory map that were read
    /// (file-backed, reclaimable) as well as the heap, so the heap figure is kept apart.
    static func measureMemory(_ body: () throws -> Void) throws -> (seconds: Double, peakMB: Double, anonymousMB: Double) {
        let sampler = AnonymousMemorySampler()
        sampler.start()
        let (seconds, _) = try WalkBench.peak(body)
        let anonymous = sampler.stop()
        return (seconds, Double(WalkBench.status("VmHWM") ?? 0) / 1_048_576, Double(anonymous) / 1_048_576)
    }

    struct ValidationFailure: Error, CustomStringConvertible {
        let description: String
    }
}

/// Samples `RssAnon` of this process every 10 ms on a thread of its own and keeps the largest value.
final class AnonymousMemorySampler: @unchecked Sendable {
    // @unchecked: `peak` and `running` are only touched under `lock`.
    private let lock = NSLock()
    private var peak = 0
    private var running = false
    private let finished = DispatchSemaphore(value: 0)

    func start() {
        lock.withLock { running = true }
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let now = WalkBench.status("RssAnon") ?? 0
                lock.withLock { peak = max(peak, now) }
                usleep(10_000)
            }
            finished.signal()
        }
    }

    /// Stops sampling and returns the largest anonymous resident size seen, in bytes.
    func stop() -> Int {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { max(peak, WalkBench.status("RssAnon") ?? 0) }
    }
}

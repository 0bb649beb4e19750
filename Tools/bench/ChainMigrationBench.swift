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
            var next = 0
            while next < rows {
                let n = min(50_000, rows - next)
                let keys = try store.allocatePrimaryKeys(for: "Record", count: n)
                try store.save(StoreChangeSet(inserts: keys.map { key in
                    StoreRow(entityName: "Record", primaryKey: key, values: ["number": .integer(key), "text": .string("row number \(key)")])
                }))
                next += n
            }
        }
        let writing = Date().timeIntervalSince(writeStart)
        log("\(backend): migrating \(rows) rows V1 -> V2 -> V3 (custom) -> V4")
        let coordinator = StoreCoordinator(model: try Self.model(version: 4))
        try coordinator.setMigrationChain(try Self.chain())
        let (seconds, _) = try WalkBench.peak {
            try coordinator.addStore(type, configuration: "Default", at: url, options: options)
        }
        let peak = WalkBench.status("VmHWM") ?? 0
        let count = try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Record"))
        guard count == rows else { throw ValidationFailure(description: "chain migration left \(count) of \(rows) rows") }
        let mb = Double(peak) / 1_048_576
        log(String(format: "%@: chain migration of %d rows: %.2f s, peak RSS %.1f MB", backend, rows, seconds, mb))
        return [BenchResult(
            backend: backend, operation: "migration chain V1→V4, one custom step (\(rows) rows)", baselines: ["writing the V1 rows": writing],
            switchyard: seconds, info: ["peak RSS": String(format: "%.1f MB", mb)])]
    }

    struct ValidationFailure: Error, CustomStringConvertible {
        let description: String
    }
}

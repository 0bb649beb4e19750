import Foundation
import Switchyard

/// `bench --migration-kinds-rows N`: every kind of migration on an N-row store, on each backend, with its time
/// and the process's peak memory while it runs (Linux `VmHWM`, reset just before, and the largest anonymous
/// figure sampled, since LMDB's file-backed map pages count in `VmHWM` too). Each kind starts from a copy of
/// the same version-1 store; the rows are counted after.
struct MigrationKindsBench {
    let rows: Int
    let backend: String
    let dir: URL

    enum Kind: String, CaseIterable {
        case addWithDefault = "add an attribute with a default"
        case addIndexed = "add an indexed attribute"
        case remove = "remove an attribute"
        case rename = "rename an attribute (renaming identifier)"
        case widen = "widen Integer 32 to Integer 64"
        case renameEntity = "rename the entity (renaming identifier)"
        case custom = "custom step (Integer 32 to String, text split)"
    }

    static func version1() throws -> ObjectModel {
        try ObjectModel(entities: [EntityDescription(name: "Record", attributes: [
            AttributeDescription(name: "number", type: .integer32), AttributeDescription(name: "text", type: .string),
            AttributeDescription(name: "extra", type: .string),
        ])])
    }

    /// The target model of `kind`, and the chain that reaches it when it is not inferred.
    static func target(_ kind: Kind) throws -> (ObjectModel, MigrationChain?) {
        var attributes = [
            AttributeDescription(name: "number", type: .integer32), AttributeDescription(name: "text", type: .string),
            AttributeDescription(name: "extra", type: .string),
        ]
        var entityName = "Record", renamed: String?
        switch kind {
        case .addWithDefault: attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: .integer(0)))
        case .addIndexed: attributes.append(AttributeDescription(name: "rank", type: .integer64, defaultValue: .integer(0), isIndexed: true))
        case .remove: attributes.removeLast()
        case .rename: attributes[2] = AttributeDescription(name: "remark", type: .string, renamingIdentifier: "extra")
        case .widen: attributes[0] = AttributeDescription(name: "number", type: .integer64)
        case .renameEntity: (entityName, renamed) = ("Entry", "Record")
        case .custom:
            attributes = [
                AttributeDescription(name: "number", type: .string), AttributeDescription(name: "word", type: .string),
                AttributeDescription(name: "length", type: .integer64), AttributeDescription(name: "extra", type: .string),
            ]
        }
        let model = try ObjectModel(entities: [EntityDescription(name: entityName, attributes: attributes, renamingIdentifier: renamed)])
        guard kind == .custom else { return (model, nil) }
        var chain = try MigrationChain(versions: [ModelVersion(name: "V1", model: try version1()), ModelVersion(name: "V2", model: model)])
        var step = CustomMigration(batchSize: 5_000)
        step.transform("Record") { old, new in
            try new.set("number", try old.value("number", as: Int64.self).map { "#\($0)" })
            let text = try old.value("text", as: String.self) ?? ""
            try new.set("word", text.split(separator: " ").last.map(String.init))
            try new.set("length", Int64(text.count))
            try new.set("extra", try old.value("extra", as: String.self))
        }
        try chain.setCustomStep(to: "V2", step)
        return (model, chain)
    }

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let type: StoreType = backend == "sqlite" ? .sqlite : .lmdb
        let options = StoreOptions(initialMapSize: 1 << 32)
        let original = dir.appendingPathComponent("kinds-v1.\(backend)")
        log("\(backend): writing \(rows) rows at version 1 for the migration kinds")
        let writeStart = Date()
        do {
            let coordinator = StoreCoordinator(model: try Self.version1())
            let store = try coordinator.addStore(type, configuration: "Default", at: original, options: options)
            try MigrationBench.insertRecords(rows, into: store) { key in
                ["number": .integer(key % 2_000_000_000), "text": .string("row number \(key)"), "extra": .string("x\(key % 97)")]
            }
        }
        let writing = Date().timeIntervalSince(writeStart)
        var results: [BenchResult] = []
        for kind in Kind.allCases {
            let work = dir.appendingPathComponent("kinds-work.\(backend)")
            try? FileManager.default.removeItem(at: work)
            try FileManager.default.copyItem(at: original, to: work)
            let (model, chain) = try Self.target(kind)
            let coordinator = StoreCoordinator(model: model)
            if let chain { try coordinator.setMigrationChain(chain) }
            let (seconds, mb, anonymousMB) = try ChainMigrationBench.measureMemory {
                try coordinator.addStore(type, configuration: "Default", at: work, options: options)
            }
            let count = try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: model.entities[0].name))
            guard count == rows else { throw ChainMigrationBench.ValidationFailure(description: "\(kind.rawValue) left \(count) of \(rows) rows") }
            log(String(format: "%@: %@ (%d rows): %.3f s, peak RSS %.1f MB (anonymous %.1f MB)", backend, kind.rawValue, rows, seconds, mb, anonymousMB))
            results.append(BenchResult(
                backend: backend, operation: "migration: \(kind.rawValue) (\(rows) rows)", baselines: ["writing the rows": writing],
                switchyard: seconds,
                info: ["peak RSS": String(format: "%.1f MB", mb), "peak anonymous RSS (sampled)": String(format: "%.1f MB", anonymousMB)]))
            for store in coordinator.stores { try? coordinator.removeStore(store) }
            try? FileManager.default.removeItem(at: work)
        }
        return results
    }
}

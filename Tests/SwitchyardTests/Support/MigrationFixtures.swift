import Foundation
@testable import Switchyard

/// A small model (Owner 1-n Item, Tag) whose variants exercise one migration change each, and a populated
/// store of its first version.
enum MigrationFixtures {
    static let owners = 3
    static let items = 30
    static let tags = 4

    /// Version 1, or a variant: `change` edits the entities by name before the model is resolved.
    static func model(_ change: (inout [String: EntityDescription]) -> Void = { _ in }) throws -> ObjectModel {
        var entities: [String: EntityDescription] = [
            "Owner": EntityDescription(
                name: "Owner", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [RelationshipDescription(name: "items", destination: "Item", inverse: "owner", isToMany: true)]),
            "Item": EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "title", type: .string),
                    AttributeDescription(name: "count", type: .integer64),
                    AttributeDescription(name: "note", type: .string),
                ],
                relationships: [RelationshipDescription(name: "owner", destination: "Owner", inverse: "items")]),
            "Tag": EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)]),
        ]
        change(&entities)
        return try ObjectModel(entities: entities.values.sorted { $0.name < $1.name })
    }

    /// Creates a store of version 1 at `url` with every row, and closes it.
    static func populate(_ backend: Backend, url: URL?) throws {
        let v1 = try model()
        let store: any PersistentStore
        switch backend {
        case .sqlite: store = try SQLiteStore(url: url!, model: v1, configuration: "Default")
        case .lmdb: store = try LMDBStore(url: url!, model: v1, configuration: "Default")
        case .memory: store = try InMemoryStore(model: v1, configuration: "Default")
        }
        _ = try store.allocatePrimaryKeys(for: "Owner", count: owners)
        _ = try store.allocatePrimaryKeys(for: "Item", count: items)
        _ = try store.allocatePrimaryKeys(for: "Tag", count: tags)
        var rows: [StoreRow] = []
        for o in 1...owners {
            rows.append(StoreRow(entityName: "Owner", primaryKey: Int64(o), version: 1, values: ["name": .string("o\(o)")], toOne: [:]))
        }
        for i in 1...items {
            var values: [String: AttributeValue] = ["title": .string("t\(i)"), "count": .integer(Int64(i))]
            if i % 2 == 0 { values["note"] = .string("n\(i)") }
            rows.append(StoreRow(
                entityName: "Item", primaryKey: Int64(i), version: 1, values: values,
                toOne: ["owner": RowReference(entityName: "Owner", primaryKey: Int64(i % owners + 1))]))
        }
        for t in 1...tags {
            rows.append(StoreRow(entityName: "Tag", primaryKey: Int64(t), version: 1, values: ["label": .string("l\(t)")], toOne: [:]))
        }
        try store.save(StoreChangeSet(inserts: rows))
    }

    /// Opens the store at `url` with `model` (migrating it), as the backend's own initializer does.
    static func open(
        _ backend: Backend, url: URL, model: ObjectModel, progress: MigrationProgressHandler? = nil
    ) throws -> any PersistentStore {
        switch backend {
        case .sqlite: return try SQLiteStore(url: url, model: model, configuration: "Default", migrationProgress: progress)
        case .lmdb: return try LMDBStore(url: url, model: model, configuration: "Default", migrationProgress: progress)
        case .memory: return try InMemoryStore(model: model, configuration: "Default")
        }
    }

    /// Every row of `entity`, by primary key.
    static func rows(_ store: any PersistentStore, _ entity: String) throws -> [Int64: StoreRow] {
        Dictionary(uniqueKeysWithValues: try store.fetch(StoreFetchRequest(entityName: entity)).map { ($0.primaryKey, $0) })
    }

    /// The bytes of every file of a store (a SQLite file and its sidecars, or an LMDB directory's data.mdb).
    static func snapshot(_ url: URL) -> [String: Data] {
        var result: [String: Data] = [:]
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            result["data.mdb"] = FileManager.default.contents(atPath: url.appendingPathComponent("data.mdb").path)
        } else {
            for suffix in ["", "-wal"] { result[suffix] = FileManager.default.contents(atPath: url.path + suffix) }
        }
        return result
    }
}

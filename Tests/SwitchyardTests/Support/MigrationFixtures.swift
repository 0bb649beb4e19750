import Foundation
import Logging
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// A small model (Owner 1-n Item, Tag) whose variants exercise one migration change each, and a populated
/// store of its first version.
enum MigrationFixtures {
    static let owners = 3
    static let items = 30
    static let tags = 4

    /// Version 1, or a variant: `change` edits the entities by name before the model is resolved.
    /// With `configured`, the model declares `Cloud` (Owner, Item) and `Cache` (Tag).
    static func model(configured: Bool = false, _ change: (inout [String: EntityDescription]) -> Void = { _ in }) throws -> ObjectModel {
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
        let names = Set(entities.keys)
        let configurations = configured ? [
            ConfigurationDescription(name: "Cloud", entityNames: ["Owner", "Item"].filter(names.contains)),
            ConfigurationDescription(name: "Cache", entityNames: names.subtracting(["Owner", "Item"]).sorted()),
        ] : []
        return try ObjectModel(entities: entities.values.sorted { $0.name < $1.name }, configurations: configurations)
    }

    /// Creates a store of version 1 at `url` with every row, and closes it.
    /// With `configuration` Cloud or Cache (of the configured model), only that configuration's rows.
    static func populate(_ backend: Backend, url: URL?, items: Int = items, configuration: String = "Default") throws {
        let v1 = try model(configured: configuration != "Default")
        let store: any PersistentStore
        switch backend {
        case .sqlite: store = try SQLiteStore(url: url!, model: v1, configuration: configuration)
        case .lmdb: store = try LMDBStore(url: url!, model: v1, configuration: configuration)
        case .memory: store = try InMemoryStore(model: v1, configuration: configuration)
        case .postgresql: store = try PostgreSQLStore(url: url!, model: v1, configuration: configuration)
        }
        var rows: [StoreRow] = []
        if store.serves("Item") {
            _ = try store.allocatePrimaryKeys(for: "Owner", count: owners)
            _ = try store.allocatePrimaryKeys(for: "Item", count: items)
            for o in 1...owners {
                rows.append(StoreRow(entityName: "Owner", primaryKey: Int64(o), version: 1, values: ["name": .string("o\(o)")], toOne: [:]))
            }
        }
        for i in store.serves("Item") ? Array(1...items) : [] {
            var values: [String: AttributeValue] = ["title": .string("t\(i)"), "count": .integer(Int64(i))]
            if i % 2 == 0 { values["note"] = .string("n\(i)") }
            rows.append(StoreRow(
                entityName: "Item", primaryKey: Int64(i), version: 1, values: values,
                toOne: ["owner": RowReference(entityName: "Owner", primaryKey: Int64(i % owners + 1))]))
        }
        if store.serves("Tag") { _ = try store.allocatePrimaryKeys(for: "Tag", count: tags) }
        for t in store.serves("Tag") ? Array(1...tags) : [] {
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
        case .postgresql: return try PostgreSQLStore(url: url, model: model, configuration: "Default", migrationProgress: progress)
        }
    }

    /// Every row of `entity`, by primary key.
    static func rows(_ store: any PersistentStore, _ entity: String) throws -> [Int64: StoreRow] {
        Dictionary(uniqueKeysWithValues: try store.fetch(StoreFetchRequest(entityName: entity)).map { ($0.primaryKey, $0) })
    }

    /// The bytes of every file of a store (a SQLite file and its sidecars, or an LMDB directory's data.mdb); for
    /// a PostgreSQL store, every table's columns and rows as text, under "schema".
    static func snapshot(_ url: URL) -> [String: Data] {
        var result: [String: Data] = [:]
        if url.scheme?.hasPrefix("postgres") == true {
            let dump = try? postgresValues(url, """
                SELECT string_agg(c.table_name || '.' || c.column_name || ':' || c.data_type, ',' ORDER BY c.table_name, c.ordinal_position)                 FROM information_schema.columns c WHERE c.table_schema = current_schema()
                """)
            var text = dump?.joined() ?? ""
            for table in (try? postgresValues(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1")) ?? [] {
                let rows = try? postgresValues(url, "SELECT string_agg(t::text, '|' ORDER BY t::text) FROM \"\(table)\" t")
                text += "\n\(table): " + (rows?.joined() ?? "")
            }
            result["schema"] = Data(text.utf8)
            return result
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            result["data.mdb"] = FileManager.default.contents(atPath: url.appendingPathComponent("data.mdb").path)
        } else {
            for suffix in ["", "-wal"] { result[suffix] = FileManager.default.contents(atPath: url.path + suffix) }
        }
        return result
    }
}

extension MigrationFixtures {
    /// The first column of every row `sql` returns, as text, in the schema of the PostgreSQL store at `url`.
    static func postgresValues(_ url: URL, _ sql: String) throws -> [String] {
        let location = try PostgreSQLLocation(url, configuration: "tests")
        let connection = try PostgreSQLConnection(location, configuration: "tests", logger: .init(label: "tests") { _ in SwiftLogNoOpLogHandler() })
        return try connection.query(sql).map { row in
            switch try row.makeRandomAccess().columnValue(0) {
            case .null: return "NULL"
            case .integer(let i): return String(i)
            case .real(let d): return String(d)
            case .text(let s): return s
            case .blob(let b): return b.base64EncodedString()
            }
        }
    }

    /// How many rows of `entity` match `predicate`.
    static func count(_ store: any PersistentStore, _ entity: String, _ predicate: String) throws -> Int {
        try store.count(StoreFetchRequest(entityName: entity, predicate: FetchPredicate(format: predicate)))
    }
}

import Foundation
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - Opening and creating

extension PostgreSQLStore {
    struct Opened {
        var schema: SQLiteSchema
        var identifier: UUID
        var createdConfiguration: String?
    }

    /// Reads the store's tables, or creates them when the schema has none, in one transaction that holds an
    /// advisory lock on the schema's name: two processes opening a new store at once create it once, and a
    /// process killed while creating leaves no tables (PostgreSQL's DDL is transactional).
    ///
    /// A disposable store (`StoreOptions.disposable`) written with another model is dropped and created again in
    /// the same transaction: its data is a cache, and PostgreSQL stores are not migrated yet.
    static func openOrCreate(
        _ pool: PostgreSQLPool, model: ObjectModel, entities: [EntityDescription], readOnly: Bool, disposable: Bool
    ) throws -> Opened {
        let location = pool.location
        let configuration = pool.configuration
        return try pool.withTransaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text("switchyard:" + location.schema)])
            var columns: [String: [String]] = [:]
            var tableNames: Set<String> = []
            for row in try connection.query(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
                [.text(location.schema)])
            {
                let cells = row.makeRandomAccess()
                guard case .text(let table) = try cells.columnValue(0), case .text(let column) = try cells.columnValue(1) else { continue }
                columns[table.uppercased(), default: []].append(column)
                tableNames.insert(table)
            }
            if columns.isEmpty {
                if readOnly {
                    throw StoreError.openFailed(
                        path: location.display, configuration: configuration,
                        reason: "there is no store in schema \(location.schema) to open read-only")
                }
                return try create(connection, model: model, entities: entities, location: location, configuration: configuration)
            }
            for required in ["Z_METADATA", "Z_PRIMARYKEY"] where columns[required] == nil {
                throw StoreError.notAStore(
                    path: location.display, expected: .postgreSQL,
                    reason: "schema \(location.schema) of database \(location.database) has tables but no \(required) (tables: "
                        + columns.keys.sorted().prefix(10).joined(separator: ", ") + (columns.count > 10 ? ", …" : "") + ")")
            }
            let metadata = try readMetadata(connection)
            if metadata.storeType != StoreType.postgreSQL.rawValue {
                throw StoreError.notAStore(
                    path: location.display, expected: .postgreSQL,
                    reason: "its metadata names store type \(metadata.storeType), not \(StoreType.postgreSQL.rawValue)")
            }
            let stored = metadata.versionHashes
            let changed = entities.filter { stored[$0.name] != $0.versionHash }.map(\.name)
            if !changed.isEmpty, disposable {
                // Core Data's tables only (Z…): anything else in the schema is not the store's to drop.
                for table in tableNames.sorted() where table.hasPrefix("Z") {
                    try connection.execute("DROP TABLE IF EXISTS \(PostgreSQLConnection.quote(table)) CASCADE")
                }
                return try create(connection, model: model, entities: entities, location: location, configuration: configuration)
            }
            if !changed.isEmpty {
                throw StoreError.schemaMismatch(
                    path: location.display, configuration: configuration,
                    reason: "the store was written with another model (entities changed: \(changed.sorted().joined(separator: ", "))); "
                        + "migrating a PostgreSQL store is not supported yet")
            }
            var numbers: [String: Int64] = [:]
            for row in try connection.query("SELECT \"Z_NAME\", \"Z_ENT\" FROM \"Z_PRIMARYKEY\"") {
                let cells = row.makeRandomAccess()
                guard case .text(let name) = try cells.columnValue(0), let number = try cells.integer(1) else { continue }
                numbers[name] = number
            }
            // Names over 63 bytes are kept shortened (`indexName`): read them back as the names they stand for.
            let expected = try SQLiteSchema.build(
                model: model, storeEntities: entities, numbers: numbers, actualColumns: nil, path: location.display,
                configuration: configuration, externalReferences: false)
            var longByShort: [String: String] = [:]
            for name in expected.identifiers where name.utf8.count > 63 { longByShort[indexName(name).uppercased()] = name }
            if !longByShort.isEmpty {
                columns = Dictionary(
                    columns.map { table, names in
                        (longByShort[table].map { $0.uppercased() } ?? table, names.map { longByShort[$0.uppercased()] ?? $0 })
                    },
                    uniquingKeysWith: { a, b in a + b })
            }
            let schema = try SQLiteSchema.build(
                model: model, storeEntities: entities, numbers: numbers, actualColumns: columns, path: location.display,
                configuration: configuration, externalReferences: false
            ).renamingIdentifiers(indexName)
            var created: String?
            if case .string(let name)? = metadata.additional[configurationKey] { created = name }
            return Opened(schema: schema, identifier: metadata.uuid, createdConfiguration: created)
        }
    }

    /// `Z_METADATA`'s property list.
    static func readMetadata(_ connection: PostgreSQLConnection) throws -> StoreMetadata {
        guard let row = try connection.query("SELECT \"Z_PLIST\" FROM \"Z_METADATA\" ORDER BY \"Z_VERSION\" LIMIT 1").first,
            case .blob(let plist) = try row.makeRandomAccess().columnValue(0),
            let metadata = try StoreMetadata.decode(plist)
        else {
            throw StoreError.notAStore(
                path: connection.location.display, expected: .postgreSQL, reason: "Z_METADATA holds no readable metadata")
        }
        return metadata
    }

    // MARK: - New store

    private static func create(
        _ connection: PostgreSQLConnection, model: ObjectModel, entities: [EntityDescription], location: PostgreSQLLocation,
        configuration: String
    ) throws -> Opened {
        var numbers: [String: Int64] = [:]
        for root in SQLiteSchema.roots(of: entities, in: model) {
            for name in root.selfAndDescendantNames {
                if let entity = model.entity(named: name) { numbers[name] = Int64(entity.entityNumber) }
            }
        }
        let schema = try SQLiteSchema.build(
            model: model, storeEntities: entities, numbers: numbers, actualColumns: nil, path: location.display,
            configuration: configuration, externalReferences: false
        ).renamingIdentifiers(indexName)
        var metadata = StoreMetadata(
            storeType: StoreType.postgreSQL.rawValue, uuid: UUID(), versionHashes: model.versionHashes,
            versionIdentifiers: model.versionIdentifiers)
        metadata.additional[configurationKey] = .string(configuration)
        let q = PostgreSQLConnection.quote
        try connection.execute("CREATE SCHEMA IF NOT EXISTS \(q(location.schema))")
        for table in schema.tables {
            let columns = ["\"Z_PK\" BIGINT PRIMARY KEY", "\"Z_ENT\" INTEGER NOT NULL", "\"Z_OPT\" BIGINT NOT NULL"]
                + table.columns.map { "\(q($0.name)) \(columnType($0.sqlType))" }
            try connection.execute("CREATE TABLE \(q(table.name)) (\(columns.joined(separator: ", ")))")
            for index in table.indexes {
                let terms = index.terms.map { term -> String in
                    switch term.order {
                    case .plain: return q(term.column)
                    case .ascending: return q(term.column) + " ASC"
                    case .descending: return q(term.column) + " DESC"
                    }
                }
                try connection.execute(
                    "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(q(indexName(index.name))) ON \(q(table.name)) (\(terms.joined(separator: ", ")))")
            }
        }
        for join in schema.joinTables {
            let columns = [join.firstColumn, join.secondColumn] + [join.firstOrderColumn, join.secondOrderColumn].compactMap { $0 }
            try connection.execute(
                "CREATE TABLE \(q(join.name)) (" + columns.map { "\(q($0)) BIGINT" }.joined(separator: ", ")
                    + ", PRIMARY KEY (\(q(join.firstColumn)), \(q(join.secondColumn))))")
            try connection.execute(
                "CREATE INDEX \(q(indexName("\(join.name)_\(join.secondColumn)_INDEX"))) ON \(q(join.name)) (\(q(join.secondColumn)), \(q(join.firstColumn)))")
        }
        try connection.execute("CREATE TABLE \"Z_PRIMARYKEY\" (\"Z_ENT\" INTEGER PRIMARY KEY, \"Z_NAME\" TEXT, \"Z_SUPER\" INTEGER, \"Z_MAX\" BIGINT NOT NULL)")
        try connection.execute("CREATE TABLE \"Z_METADATA\" (\"Z_VERSION\" INTEGER PRIMARY KEY, \"Z_UUID\" VARCHAR(255), \"Z_PLIST\" BYTEA)")
        try connection.execute("CREATE TABLE \"Z_MODELCACHE\" (\"Z_CONTENT\" BYTEA)")
        try connection.execute("INSERT INTO \"Z_MODELCACHE\" (\"Z_CONTENT\") VALUES ($1)", [.blob(try ModelCache.encode(model))])
        for layout in schema.entities.values.sorted(by: { $0.number < $1.number }) {
            let parent = model.entity(named: layout.name)?.parentName.flatMap { schema.entities[$0]?.number } ?? 0
            try connection.execute(
                "INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES ($1, $2, $3, 0)",
                [.integer(layout.number), .text(layout.name), .integer(parent)])
        }
        try connection.execute(
            "INSERT INTO \"Z_METADATA\" (\"Z_VERSION\", \"Z_UUID\", \"Z_PLIST\") VALUES (1, $1, $2)",
            [.text(metadata.uuid.uuidString), .blob(try metadata.binaryPropertyList())])
        return Opened(schema: schema, identifier: metadata.uuid, createdConfiguration: configuration)
    }

    /// PostgreSQL's type for a column Core Data declares with `sqliteType`: integers as `BIGINT`, reals, dates
    /// and decimals as `DOUBLE PRECISION` (dates as seconds since 2001, as Core Data keeps them), text as
    /// `TEXT`, blobs as `BYTEA`.
    static func columnType(_ sqliteType: String) -> String {
        switch sqliteType.uppercased() {
        case "INTEGER": return "BIGINT"
        case "FLOAT", "TIMESTAMP", "DECIMAL", "REAL": return "DOUBLE PRECISION"
        case "VARCHAR", "TEXT": return "TEXT"
        default: return "BYTEA"
        }
    }
}

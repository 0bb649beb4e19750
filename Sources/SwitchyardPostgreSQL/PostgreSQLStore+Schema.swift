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
        var migrationReport: CompatibilityReport?
    }

    /// Reads the store's tables, or creates them when the schema has none, in one transaction that holds an
    /// advisory lock on the schema's name: two processes opening a new store at once create it once, and a
    /// process killed while creating leaves no tables (PostgreSQL's DDL is transactional).
    ///
    /// A disposable store (`StoreOptions.disposable`) written with another model is dropped and created again in
    /// the same transaction: its data is a cache. Any other store written with another model is migrated by
    /// `LayoutMigrator` in that same transaction when every change is inferable (PostgreSQL's DDL is
    /// transactional: a crash or an error leaves the old store, and a second process waits on the lock, then
    /// finds the store migrated).
    static func openOrCreate(
        _ pool: PostgreSQLPool, model: ObjectModel, entities: [EntityDescription], readOnly: Bool, disposable: Bool,
        progress: MigrationProgressHandler?
    ) throws -> Opened {
        let location = pool.location
        let configuration = pool.configuration
        return try pool.withTransaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text("switchyard:" + location.schema)])
            let tables = try tableColumns(connection, schema: location.schema)
            let tableNames = Set(tables.keys)
            var columns = Dictionary(tables.map { ($0.key.uppercased(), $0.value) }, uniquingKeysWith: { a, b in a + b })
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
            // The store's tables only: anything else in the schema is not the store's to drop.
            func recreate() throws -> Opened {
                for table in tableNames.sorted() where ownsTable(table) {
                    try connection.execute("DROP TABLE IF EXISTS \(PostgreSQLConnection.quote(table)) CASCADE")
                }
                return try create(connection, model: model, entities: entities, location: location, configuration: configuration)
            }
            var migrationReport: CompatibilityReport?
            if readOnly, !changed.isEmpty {
                // Rows a migration would change are read wrongly until it runs: refused as on every backend. Without a
                // model cache there is no telling what changed, so any change is refused.
                let cached = try readModelCache(connection)
                let reason = cached == nil
                    ? StoreMigration.readOnlyRefusal(changed: changed.sorted(), migratable: true)
                    : StoreMigration.readOnlyMigrationReason(
                        storedHashes: stored, storedModel: { cached }, model: model, configuration: configuration, path: location.display)
                if let reason { throw StoreError.schemaMismatch(path: location.display, configuration: configuration, reason: reason) }
            }
            if stored != model.versionHashes, !readOnly {
                let pending: (old: ObjectModel, report: CompatibilityReport)?
                do {
                    pending = try StoreMigration.pendingMigration(
                        storedHashes: stored, storedModel: { try readModelCache(connection) }, model: model,
                        configuration: configuration, path: location.display)
                } catch StoreError.incompatibleModel where disposable {
                    // A cache: recreated only when the change cannot be migrated.
                    return try recreate()
                }
                if let (old, report) = pending {
                    let migrator = LayoutMigrator(
                        old: old, new: model, configuration: configuration, report: report, path: location.display, progress: progress)
                    let oldEntities = (try? old.entities(inConfiguration: configuration)) ?? old.entities
                    let known = try SQLiteSchema.build(
                        model: old, storeEntities: oldEntities, numbers: try entityNumbers(connection), actualColumns: nil,
                        path: location.display, configuration: configuration, externalReferences: false
                    ).identifiers
                    try migrator.run(PostgreSQLMigrationDatabase(connection, knownNames: known), metadata: metadata)
                    migrationReport = report
                    columns = Dictionary(
                        try tableColumns(connection, schema: location.schema).map { ($0.key.uppercased(), $0.value) },
                        uniquingKeysWith: { a, b in a + b })
                } else if !changed.isEmpty, try readModelCache(connection) == nil {
                    if disposable { return try recreate() }
                    throw StoreError.schemaMismatch(
                        path: location.display, configuration: configuration,
                        reason: "the store was written with another model (entities changed: \(changed.sorted().joined(separator: ", "))) "
                            + "and its Z_MODELCACHE holds no model to migrate from")
                }
            }
            let numbers = try entityNumbers(connection)
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
            if !readOnly { try reconcileUniqueIndexes(connection, schema: schema, location: location, configuration: configuration) }
            var created: String?
            if case .string(let name)? = metadata.additional[configurationKey] { created = name }
            return Opened(schema: schema, identifier: metadata.uuid, createdConfiguration: created, migrationReport: migrationReport)
        }
    }

    /// The schema's tables and their columns, by table name as the server spells it.
    private static func tableColumns(_ connection: PostgreSQLConnection, schema: String) throws -> [String: [String]] {
        var columns: [String: [String]] = [:]
        for row in try connection.query(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
            [.text(schema)])
        {
            let cells = row.makeRandomAccess()
            guard case .text(let table) = try cells.columnValue(0), case .text(let column) = try cells.columnValue(1) else { continue }
            columns[table, default: []].append(column)
        }
        return columns
    }

    /// `Z_PRIMARYKEY`'s entity numbers, by entity name.
    private static func entityNumbers(_ connection: PostgreSQLConnection) throws -> [String: Int64] {
        var numbers: [String: Int64] = [:]
        for row in try connection.query("SELECT \"Z_NAME\", \"Z_ENT\" FROM \"Z_PRIMARYKEY\"") {
            let cells = row.makeRandomAccess()
            guard case .text(let name) = try cells.columnValue(0), let number = try cells.integer(1) else { continue }
            numbers[name] = number
        }
        return numbers
    }

    /// The model `Z_MODELCACHE` holds; nil when it holds none this library can read.
    private static func readModelCache(_ connection: PostgreSQLConnection) throws -> ObjectModel? {
        guard let row = try connection.query("SELECT \"Z_CONTENT\" FROM \"Z_MODELCACHE\" WHERE \"Z_CONTENT\" IS NOT NULL LIMIT 1").first,
            case .blob(let blob) = try row.makeRandomAccess().columnValue(0), !blob.isEmpty
        else { return nil }
        return try? ModelCache.decode(blob, source: "\(connection.location.display) model cache")
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
            for statement in createSQL(table) { try connection.execute(statement) }
        }
        for join in schema.joinTables {
            try connection.execute(createSQL(join))
            try connection.execute(indexSQL(join))
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

    // MARK: - DDL

    /// `CREATE TABLE` for an entity table (names already shortened where over 63 bytes), then its indexes.
    static func createSQL(_ table: SQLiteTableLayout) -> [String] {
        let q = PostgreSQLConnection.quote
        let columns = ["\"Z_PK\" BIGINT PRIMARY KEY", "\"Z_ENT\" INTEGER NOT NULL", "\"Z_OPT\" BIGINT NOT NULL"]
            + table.columns.map { "\(q(indexName($0.name))) \(columnType($0.sqlType))" }
        return ["CREATE TABLE \(q(indexName(table.name))) (\(columns.joined(separator: ", ")))"]
            + table.indexes.map { createSQL($0, ifNotExists: false) }
    }

    /// `CREATE INDEX` for one of Core Data's indexes.
    static func createSQL(_ index: SQLiteIndexSpec, ifNotExists: Bool) -> String {
        let q = { (name: String) in PostgreSQLConnection.quote(indexName(name)) }
        let terms = index.terms.map { term -> String in
            switch term.order {
            case .plain: return q(term.column)
            case .ascending: return q(term.column) + " ASC"
            case .descending: return q(term.column) + " DESC"
            }
        }
        return "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\(q(index.name)) ON \(q(index.table)) (\(terms.joined(separator: ", ")))"
    }

    /// `CREATE TABLE` for a many-to-many join table: its two keys (the primary key) and order columns.
    static func createSQL(_ join: SQLiteJoinTable) -> String {
        let q = { (name: String) in PostgreSQLConnection.quote(indexName(name)) }
        let columns = [join.firstColumn, join.secondColumn] + [join.firstOrderColumn, join.secondOrderColumn].compactMap { $0 }
        return "CREATE TABLE \(q(join.name)) (" + columns.map { "\(q($0)) BIGINT" }.joined(separator: ", ")
            + ", PRIMARY KEY (\(q(join.firstColumn)), \(q(join.secondColumn))))"
    }

    /// The join table's reverse index, so the second end finds its members without a scan.
    static func indexSQL(_ join: SQLiteJoinTable) -> String {
        let q = { (name: String) in PostgreSQLConnection.quote(indexName(name)) }
        return "CREATE INDEX \(q("\(join.name)_\(join.secondColumn)_INDEX")) ON \(q(join.name)) (\(q(join.secondColumn)), \(q(join.firstColumn)))"
    }

    /// PostgreSQL's type for a column Core Data declares with `sqliteType`: integers as `BIGINT`, reals and
    /// dates as `DOUBLE PRECISION` (dates as seconds since 2001, as Core Data keeps them), decimals as `NUMERIC`
    /// (which, as SQLite's NUMERIC affinity, keeps a 64-bit integer exact where a double would round it), text
    /// as `TEXT`, blobs as `BYTEA`.
    static func columnType(_ sqliteType: String) -> String {
        switch sqliteType.uppercased() {
        case "INTEGER": return "BIGINT"
        case "DECIMAL": return "NUMERIC"
        case "FLOAT", "TIMESTAMP", "REAL": return "DOUBLE PRECISION"
        case "VARCHAR", "TEXT": return "TEXT"
        default: return "BYTEA"
        }
    }
}

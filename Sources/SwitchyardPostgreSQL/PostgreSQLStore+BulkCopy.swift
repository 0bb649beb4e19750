import Foundation
import Logging
import SwitchyardStores

// MARK: - Bulk copy

extension PostgreSQLStore: BulkCopyStore {
    /// One `SELECT … WHERE Z_ENT = $1 AND Z_PK > $2 ORDER BY Z_PK LIMIT n` on the table's primary key.
    package func rowBatch(entityName: String, after primaryKey: Int64?, limit: Int) throws -> [StoreRow] {
        let layout = try servedLayout(entityName)
        let filter = PostgreSQLPushdown.Filter(sql: "t0.\"Z_PK\" > $1", parameters: [.integer(primaryKey ?? Int64.min)], isExact: true)
        return try pool.withConnection { connection in
            try selectRows(connection, layout: layout, includesSubentities: false, filter: filter, limit: max(1, limit))
        }
    }

    package func primaryKeyMaxima() throws -> [String: Int64] {
        try pool.withConnection { connection in
            var result: [String: Int64] = [:]
            for row in try connection.query("SELECT \"Z_NAME\", \"Z_MAX\" FROM \"Z_PRIMARYKEY\"") {
                let cells = row.makeRandomAccess()
                guard case .text(let name) = try cells.columnValue(0) else { continue }
                result[name] = try cells.integer(1) ?? 0
            }
            return result
        }
    }

    /// `MIN("Z_PK")` and `MAX("Z_PK")` of each served table (the primary key's index answers both).
    package func primaryKeyRanges() throws -> [String: ClosedRange<Int64>] {
        var tables: [String: String] = [:]
        for name in servedEntityNames {
            guard let entity = model.entity(named: name) else { continue }
            tables[entity.rootName] = schema.table(of: try servedLayout(name)).name
        }
        return try pool.withConnection { connection in
            var result: [String: ClosedRange<Int64>] = [:]
            for (root, table) in tables {
                let quoted = PostgreSQLConnection.quote(table)
                if let row = try connection.query("SELECT MIN(\"Z_PK\"), MAX(\"Z_PK\") FROM \(quoted)").first {
                    let columns = row.makeRandomAccess()
                    if let smallest = try columns.integer(0), let largest = try columns.integer(1) {
                        result[root] = min(smallest, largest)...largest
                    }
                }
            }
            return result
        }
    }

    package func setPrimaryKeyMaxima(_ maxima: [String: Int64]) throws {
        try checkWritable("set Z_MAX")
        try pool.withTransaction { connection in
            for (name, max) in maxima.sorted(by: { $0.key < $1.key }) {
                try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = $1 WHERE \"Z_NAME\" = $2", [.integer(max), .text(name)])
            }
        }
    }

    /// Tables of the schema the store's layout does not map (the app's own, or join tables of relationships the
    /// model lacks), with their row counts.
    package func extraneousItems() throws -> [StoreExtraneousItem] {
        let known = Set(
            (schema.tables.map(\.name) + schema.joinTables.map(\.name)).map { $0.uppercased() }
                + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        return try pool.withConnection { connection in
            var items: [StoreExtraneousItem] = []
            for row in try connection.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1",
                [.text(pool.location.schema)])
            {
                guard case .text(let name) = try row.makeRandomAccess().columnValue(0), !known.contains(name.uppercased()) else { continue }
                let rows = try connection.query("SELECT COUNT(*) FROM \(PostgreSQLConnection.quote(name))").first
                    .flatMap { try $0.makeRandomAccess().integer(0) }.map(Int.init)
                let owner = StoreExtraneousItem.Owner.ofTable(name)
                items.append(StoreExtraneousItem(kind: "table", name: name, rows: rows, reason: owner.reason, owner: owner))
            }
            return items
        }
    }

    /// Drops the entity tables' primary keys and indexes in one transaction: a `COPY` into a table without them
    /// and the indexes built afterwards take about 60% of the server time of a `COPY` maintaining them.
    package func deferIndexes() throws {
        try checkWritable("defer indexes")
        let q = PostgreSQLConnection.quote
        try pool.withTransaction { connection in
            let primaryKeys = try primaryKeyConstraints(connection)
            for table in schema.tables {
                let name = Self.indexName(table.name)
                for index in table.indexes { try connection.execute("DROP INDEX IF EXISTS \(q(Self.indexName(index.name)))") }
                if let constraint = primaryKeys[name] { try connection.execute("ALTER TABLE \(q(name)) DROP CONSTRAINT \(q(constraint))") }
            }
        }
    }

    /// Adds the primary key and the indexes each entity table lacks, in one transaction.
    package func buildDeferredIndexes() throws {
        try checkWritable("build indexes")
        let q = PostgreSQLConnection.quote
        try pool.withTransaction { connection in
            let primaryKeys = try primaryKeyConstraints(connection)
            for table in schema.tables {
                let name = Self.indexName(table.name)
                if primaryKeys[name] == nil { try connection.execute("ALTER TABLE \(q(name)) ADD PRIMARY KEY (\"Z_PK\")") }
                for index in table.indexes { try connection.execute(Self.createSQL(index, ifNotExists: true)) }
            }
        }
    }

    /// The primary key constraint's name by table, for the tables of the store's schema that have one.
    private func primaryKeyConstraints(_ connection: PostgreSQLConnection) throws -> [String: String] {
        var constraints: [String: String] = [:]
        for row in try connection.query(
            "SELECT table_name, constraint_name FROM information_schema.table_constraints WHERE table_schema = $1 AND constraint_type = 'PRIMARY KEY'",
            [.text(pool.location.schema)])
        {
            let cells = row.makeRandomAccess()
            guard case .text(let table) = try cells.columnValue(0), case .text(let constraint) = try cells.columnValue(1) else { continue }
            constraints[table] = constraint
        }
        return constraints
    }

    /// Closes the store's connections; every save has already committed.
    package func closeFiles() throws {
        pool.shutDown()
    }
}

// MARK: - Locations

extension PostgreSQLStore {
    /// How the split tool finds, removes and replaces PostgreSQL stores: a store is the Core Data tables of a
    /// schema; replacing moves the temporary schema's tables into the final schema (after dropping the tables a
    /// store there had) in one transaction, so a crash leaves either store whole.
    static let locations = ServerStoreLocations(
        exists: { url, options in
            try administer(url, options) { connection, schema in
                !(try connection.query(
                    "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'Z_METADATA'",
                    [.text(schema)]).isEmpty)
            }
        },
        remove: { url, options in
            try administer(url, options) { connection, schema in
                try dropCoreDataTables(connection, schema: schema)
            }
        },
        replace: { final, temporary, options in
            let from = try PostgreSQLLocation(temporary, configuration: "").schema
            try administer(final, options) { connection, schema in
                try connection.execute("BEGIN")
                do {
                    try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text("switchyard:" + schema)])
                    try dropCoreDataTables(connection, schema: schema)
                    try connection.execute("CREATE SCHEMA IF NOT EXISTS \(PostgreSQLConnection.quote(schema))")
                    for row in try connection.query(
                        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [.text(from)])
                    {
                        guard case .text(let table) = try row.makeRandomAccess().columnValue(0) else { continue }
                        try connection.execute(
                            "ALTER TABLE \(PostgreSQLConnection.quote(from)).\(PostgreSQLConnection.quote(table)) SET SCHEMA \(PostgreSQLConnection.quote(schema))")
                    }
                    try connection.execute("DROP SCHEMA \(PostgreSQLConnection.quote(from)) RESTRICT")
                    try connection.execute("COMMIT")
                } catch {
                    try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        })

    /// Runs `body` on a connection of its own to the store at `url` (with the TLS of `options` over the URL's,
    /// as the store itself connects), with the store's schema name.
    private static func administer<T>(_ url: URL, _ options: StoreOptions, _ body: (PostgreSQLConnection, String) throws -> T) throws -> T {
        let location = try PostgreSQLLocation(url, configuration: "", options: options)
        let connection = try PostgreSQLConnection(location, configuration: "", logger: Logger(label: "switchyard.postgresql") { _ in SwiftLogNoOpLogHandler() })
        return try body(connection, location.schema)
    }

    /// Drops the Core Data tables (`Z…`, and persistent history's `A…`) of `schema`, and the schema when that leaves it empty (never `public`).
    private static func dropCoreDataTables(_ connection: PostgreSQLConnection, schema: String) throws {
        let q = PostgreSQLConnection.quote
        for row in try connection.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [.text(schema)])
        {
            guard case .text(let table) = try row.makeRandomAccess().columnValue(0), ownsTable(table) else { continue }
            try connection.execute("DROP TABLE IF EXISTS \(q(schema)).\(q(table)) CASCADE")
        }
        if schema != "public",
            try connection.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1", [.text(schema)]).isEmpty
        {
            try connection.execute("DROP SCHEMA IF EXISTS \(q(schema)) RESTRICT")
        }
    }
}

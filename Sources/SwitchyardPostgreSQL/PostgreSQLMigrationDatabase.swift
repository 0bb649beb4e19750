import Foundation
import PostgresNIO
import SwitchyardStores

// MARK: - PostgreSQLMigrationDatabase

/// PostgreSQL's dialect for `LayoutMigrator`, on the connection holding the opening transaction (PostgreSQL's
/// DDL is transactional, so the whole migration commits or leaves the old store): identifiers always quoted
/// and names over 63 bytes shortened as the store creates them (`PostgreSQLStore.indexName`), columns and
/// indexes from the catalog of the store's schema, `INSERT … ON CONFLICT DO NOTHING`.
///
/// Not `Sendable`: it records the long names it shortened, to read them back as the names they stand for.
final class PostgreSQLMigrationDatabase: LayoutMigrationDatabase {
    private let connection: PostgreSQLConnection
    private var longByShort: [String: String]

    /// `knownNames`: the long names the store may already hold shortened (the old layout's identifiers).
    init(_ connection: PostgreSQLConnection, knownNames: Set<String>) {
        self.connection = connection
        longByShort = [:]
        for name in knownNames where name.utf8.count > 63 { longByShort[PostgreSQLStore.indexName(name)] = name }
    }

    func execute(_ sql: String, _ arguments: [ColumnValue]) throws {
        try connection.execute(numberingParameters(sql) { "$\($0)" }, arguments)
    }

    func rows(_ sql: String, _ arguments: [ColumnValue]) throws -> [[ColumnValue]] {
        try connection.query(numberingParameters(sql) { "$\($0)" }, arguments).map { row in
            let cells = row.makeRandomAccess()
            return try (0..<cells.count).map { try cells.columnValue($0) }
        }
    }

    func tableColumns() throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for row in try connection.query(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
            [.text(connection.location.schema)])
        {
            let cells = row.makeRandomAccess()
            guard case .text(let table) = try cells.columnValue(0), case .text(let column) = try cells.columnValue(1) else { continue }
            result[long(table).uppercased(), default: []].append(long(column))
        }
        return result
    }

    func columns(of table: String) throws -> [String] {
        try connection.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position",
            [.text(connection.location.schema), .text(short(table))]
        ).compactMap { row in
            guard case .text(let column) = try row.makeRandomAccess().columnValue(0) else { return nil }
            return long(column)
        }
    }

    func indexes(of table: String) throws -> [(name: String, columns: [String], isConstraint: Bool)] {
        try connection.query(
            """
            SELECT i.relname, \
            (SELECT string_agg(a.attname::text, ',') FROM pg_attribute a WHERE a.attrelid = x.indrelid AND a.attnum = ANY(x.indkey)), \
            EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid) \
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid \
            JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = $1 AND t.relname = $2
            """,
            [.text(connection.location.schema), .text(short(table))]
        ).compactMap { row in
            let cells = row.makeRandomAccess()
            guard case .text(let name) = try cells.columnValue(0) else { return nil }
            var columns: [String] = []
            if case .text(let list) = try cells.columnValue(1) { columns = list.split(separator: ",").map { long(String($0)) } }
            return (long(name), columns, try cells.integer(2) == 1)
        }
    }

    func quote(_ identifier: String) -> String { PostgreSQLConnection.quote(short(identifier)) }

    func createTable(_ table: SQLiteTableLayout) throws {
        for statement in PostgreSQLStore.createSQL(table) { try connection.execute(statement) }
    }

    func createIndexIfMissing(_ index: SQLiteIndexSpec) throws {
        try connection.execute(PostgreSQLStore.createSQL(index, ifNotExists: true))
    }

    func createJoinTable(_ join: SQLiteJoinTable) throws {
        try connection.execute(PostgreSQLStore.createSQL(join))
        try createJoinIndex(join)
    }

    func createJoinIndex(_ join: SQLiteJoinTable) throws {
        try connection.execute(PostgreSQLStore.indexSQL(join))
    }

    /// PostgreSQL (11 and later) stores a constant `DEFAULT` in the catalog: adding the column is O(1) and
    /// rows written before it read the default.
    func addColumn(_ column: String, sqliteType: String, defaultValue: ColumnValue?, to table: String) throws {
        let clause = defaultValue.flatMap(Self.literal).map { " DEFAULT " + $0 } ?? ""
        try connection.execute("ALTER TABLE \(quote(table)) ADD COLUMN \(quote(column)) \(PostgreSQLStore.columnType(sqliteType))\(clause)")
    }

    /// Dropping a column drops the indexes that use it.
    func dropColumn(_ column: String, from table: String) throws {
        try connection.execute("ALTER TABLE \(quote(table)) DROP COLUMN \(quote(column))")
    }

    func insertIgnoringDuplicates(into table: String, columns: String, select: String) throws {
        try connection.execute("INSERT INTO \(quote(table)) (\(columns)) \(select) ON CONFLICT DO NOTHING")
    }

    // MARK: - Names and literals

    private func short(_ name: String) -> String {
        let short = PostgreSQLStore.indexName(name)
        if short != name { longByShort[short] = name }
        return short
    }

    private func long(_ name: String) -> String { longByShort[name] ?? name }

    /// A constant as SQL text, for a column `DEFAULT` (DDL takes no bound parameters).
    private static func literal(_ value: ColumnValue) -> String? {
        switch value {
        case .null: return nil
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? "\(d)::double precision" : nil
        case .text(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "'\\x" + data.map { String(format: "%02x", $0) }.joined() + "'::bytea"
        }
    }
}

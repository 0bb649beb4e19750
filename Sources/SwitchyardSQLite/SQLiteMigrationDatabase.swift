import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - SQLiteMigrationDatabase

/// SQLite's dialect for `LayoutMigrator`: Core Data's own DDL (`SQLiteTableLayout.createSQL`), columns and
/// indexes from `pragma_table_info` / `pragma_index_list`, `INSERT OR IGNORE`.
struct SQLiteMigrationDatabase: LayoutMigrationDatabase {
    let db: Database

    func execute(_ sql: String, _ arguments: [ColumnValue]) throws {
        try db.execute(sql: sql, arguments: StatementArguments(arguments.map(SQLiteValueCoding.databaseValue)))
    }

    func rows(_ sql: String, _ arguments: [ColumnValue]) throws -> [[ColumnValue]] {
        try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments.map(SQLiteValueCoding.databaseValue))).map { row in
            row.databaseValues.map(SQLiteValueCoding.columnValue)
        }
    }

    func tableColumns() throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
            result[table.uppercased()] = try columns(of: table)
        }
        return result
    }

    func columns(of table: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
    }

    func indexes(of table: String) throws -> [(name: String, columns: [String], isConstraint: Bool)] {
        try Row.fetchAll(db, sql: "SELECT name, origin FROM pragma_index_list(?)", arguments: [table]).map { row in
            let name: String = row[0]
            let origin: String = row[1]
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?)", arguments: [name])
            return (name, columns, origin != "c")
        }
    }

    func quote(_ identifier: String) -> String { SQLiteNames.quote(identifier) }

    func createTable(_ table: SQLiteTableLayout) throws {
        try db.execute(sql: table.createSQL)
        for index in table.indexes { try db.execute(sql: index.createSQL) }
    }

    func createIndexIfMissing(_ index: SQLiteIndexSpec) throws {
        let sql = index.createSQL
        try db.execute(sql: sql.replacingOccurrences(of: "INDEX ", with: "INDEX IF NOT EXISTS ", options: .anchored, range: sql.range(of: "INDEX ")))
    }

    func createJoinTable(_ join: SQLiteJoinTable) throws {
        try db.execute(sql: join.createSQL)
        try createJoinIndex(join)
    }

    func createJoinIndex(_ join: SQLiteJoinTable) throws {
        try db.execute(sql: join.indexSQL)
    }

    /// An added column with a constant `DEFAULT` costs O(1) whatever the row count: SQLite reads the default
    /// for rows written before the column.
    func addColumn(_ column: String, sqliteType: String, defaultValue: ColumnValue?, to table: String) throws {
        let clause = defaultValue.flatMap(Self.literal).map { " DEFAULT " + $0 } ?? ""
        try db.execute(sql: "ALTER TABLE \(quote(table)) ADD COLUMN \(SQLiteNames.ddl(column)) \(sqliteType)\(clause)")
    }

    /// Drops the indexes that use the column, then the column; where SQLite cannot drop it (a constraint),
    /// empties it.
    func dropColumn(_ column: String, from table: String) throws {
        for index in try indexes(of: table) where index.columns.contains(where: { $0.uppercased() == column.uppercased() }) && !index.isConstraint {
            try db.execute(sql: "DROP INDEX IF EXISTS \(quote(index.name))")
        }
        do {
            try db.execute(sql: "ALTER TABLE \(quote(table)) DROP COLUMN \(quote(column))")
        } catch {
            try db.execute(sql: "UPDATE \(quote(table)) SET \(quote(column)) = NULL")
        }
    }

    func insertIgnoringDuplicates(into table: String, columns: String, select: String) throws {
        try db.execute(sql: "INSERT OR IGNORE INTO \(quote(table)) (\(columns)) \(select)")
    }

    /// A constant as SQL text, for a column `DEFAULT` (DDL takes no bound parameters).
    private static func literal(_ value: ColumnValue) -> String? {
        switch value {
        case .null: return nil
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? "\(d)" : nil
        case .text(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }
}

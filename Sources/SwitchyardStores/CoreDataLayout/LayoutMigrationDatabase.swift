import Foundation

// MARK: - LayoutMigrationDatabase

/// What `LayoutMigrator` needs of a database holding Core Data's SQL layout (SQLite, PostgreSQL), inside the
/// transaction the migration runs in. Each store supplies its dialect: how identifiers are quoted, which types
/// and literals columns get, how a table's columns and indexes are listed.
package protocol LayoutMigrationDatabase {
    /// Runs one statement; each `?` outside quotes stands for the next argument.
    func execute(_ sql: String, _ arguments: [ColumnValue]) throws
    /// The rows a query returns; each `?` outside quotes stands for the next argument.
    func rows(_ sql: String, _ arguments: [ColumnValue]) throws -> [[ColumnValue]]
    /// Every table's columns (real spellings), by upper-cased table name.
    func tableColumns() throws -> [String: [String]]
    /// A table's columns (real spellings), in order.
    func columns(of table: String) throws -> [String]
    /// A table's indexes: name, indexed columns, and whether a constraint (a primary key) created it.
    func indexes(of table: String) throws -> [(name: String, columns: [String], isConstraint: Bool)]
    /// An identifier as SQL text.
    func quote(_ identifier: String) -> String
    /// Creates an entity table and its indexes.
    func createTable(_ table: SQLiteTableLayout) throws
    /// Creates an index unless one of its name exists.
    func createIndexIfMissing(_ index: SQLiteIndexSpec) throws
    /// Creates a many-to-many join table and its reverse index.
    func createJoinTable(_ join: SQLiteJoinTable) throws
    /// Creates a join table's reverse index.
    func createJoinIndex(_ join: SQLiteJoinTable) throws
    /// Adds a column of Core Data's `sqliteType`; `defaultValue` becomes its `DEFAULT`, which existing rows read.
    func addColumn(_ column: String, sqliteType: String, defaultValue: ColumnValue?, to table: String) throws
    /// Drops a column of an entity table (and the indexes that use it), or empties it where it cannot be dropped.
    func dropColumn(_ column: String, from table: String) throws
    /// `INSERT INTO table (columns) SELECT …` skipping rows whose primary key is already there.
    func insertIgnoringDuplicates(into table: String, columns: String, select: String) throws
}

extension LayoutMigrationDatabase {
    /// The first column of the first row, as an integer (0 when there is none).
    func integer(_ sql: String, _ arguments: [ColumnValue] = []) throws -> Int64 {
        guard case .integer(let value)? = try rows(sql, arguments).first?.first else { return 0 }
        return value
    }

    func execute(_ sql: String) throws { try execute(sql, []) }

    /// Whether a table of that name (any case) exists.
    func tableExists(_ name: String) throws -> Bool {
        try tableColumns()[name.uppercased()] != nil
    }

    /// `Z_PRIMARYKEY`'s entity numbers, by entity name.
    func entityNumbers() throws -> [String: Int64] {
        var numbers: [String: Int64] = [:]
        for row in try rows("SELECT \"Z_ENT\", \"Z_NAME\" FROM \"Z_PRIMARYKEY\"", []) where row.count == 2 {
            guard case .integer(let number) = row[0], case .text(let name) = row[1] else { continue }
            numbers[name] = number
        }
        return numbers
    }
}

/// Replaces each `?` outside quotes in `sql` with `replacement(n)` (n from 1), for drivers that number
/// parameters (`$1`).
package func numberingParameters(_ sql: String, _ replacement: (Int) -> String) -> String {
    var result = ""
    var quote: Character?
    var n = 0
    for c in sql {
        if let q = quote {
            if c == q { quote = nil }
            result.append(c)
        } else if c == "'" || c == "\"" {
            quote = c
            result.append(c)
        } else if c == "?" {
            n += 1
            result += replacement(n)
        } else {
            result.append(c)
        }
    }
    return result
}

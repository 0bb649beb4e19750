import Foundation
internal import GRDB

// MARK: - SQLiteLeadingIndexes

/// The indexes a store's file has, by table and the column each leads with (`pragma_index_list` and
/// `pragma_index_info`): which long `IN` lists may drive a query through an index
/// (`SQLPredicateCompiler.drivingList`). Read from the file rather than the model: a Core Data store may lack an
/// index its model declares (an index added in a version that needed no migration), and a query pinned to a
/// missing index fails to prepare.
package struct SQLiteLeadingIndexes: Sendable {
    /// One index, by the table and column it was found under.
    package struct Index: Sendable, Hashable {
        package let table: String
        package let column: String
        package let name: String
    }

    /// Index names by table, then upper-cased first column (SQLite's names are case-insensitive).
    private var byTable: [String: [String: String]] = [:]

    /// No indexes: every `IN` list stays an `IN`.
    package init() {}

    /// The indexes of `tables` as the file has them now. Partial indexes (which serve only some rows), indexes
    /// on an expression and indexes whose first column has another collation than `BINARY` are left out: with
    /// `INDEXED BY` SQLite would still prepare a statement over such an index and scan it whole once per value.
    static func read(_ db: Database, tables: [String]) throws -> SQLiteLeadingIndexes {
        var indexes = SQLiteLeadingIndexes()
        for table in tables {
            let rows = try Row.fetchAll(db, sql: """
                SELECT l.name, i.name FROM pragma_index_list(?) AS l JOIN pragma_index_xinfo(l.name) AS i
                WHERE i.seqno = 0 AND i.key = 1 AND i.coll = 'BINARY' AND l.partial = 0 AND i.name IS NOT NULL
                ORDER BY l.seq
                """, arguments: [table])
            var columns: [String: String] = [:]
            for row in rows {
                guard let name = row[0] as String?, let column = row[1] as String? else { continue }
                if columns[column.uppercased()] == nil { columns[column.uppercased()] = name }
            }
            if !columns.isEmpty { indexes.byTable[table] = columns }
        }
        return indexes
    }

    /// An index of `table` whose first column is `column`.
    package func index(table: String, column: String) -> Index? {
        byTable[table]?[column.uppercased()].map { Index(table: table, column: column, name: $0) }
    }

    /// Whether `error` is SQLite refusing the index a statement names (`INDEXED BY`): gone, or unable to serve.
    static func isRefusal(_ error: DatabaseError) -> Bool {
        guard error.resultCode == .SQLITE_ERROR, let message = error.message else { return false }
        return message.hasPrefix("no such index") || message.hasPrefix("no query solution")
    }

    /// Stops offering `index` (SQLite refused to use it).
    package mutating func forget(_ index: Index) {
        byTable[index.table]?[index.column.uppercased()] = nil
    }
}

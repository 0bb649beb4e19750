import Foundation

// MARK: - Rows that break a uniqueness constraint

extension LayoutMigrationDatabase {
    /// The error for rows of `table` that break the uniqueness constraint the unique index `spec` enforces, or nil
    /// when none do: the constraint and one value found in more than one row (rows with a null in the constraint
    /// never clash, as in SQLite and PostgreSQL). Asked before the index is made — by a migration, or when a model
    /// version adds the constraint — so every SQL store says it the same way, not as its own UNIQUE error.
    package func duplicateRefusal(
        for spec: SQLiteIndexSpec, in table: SQLiteTableLayout, path: String, configuration: String
    ) throws -> StoreError? {
        let columns = spec.terms.map(\.column)
        let list = columns.map(quote).joined(separator: ", ")
        let sql = "SELECT \(list) FROM \(quote(table.name)) WHERE "
            + columns.map { "\(quote($0)) IS NOT NULL" }.joined(separator: " AND ")
            + " GROUP BY \(list) HAVING COUNT(*) > 1 LIMIT 1"
        guard let row = try rows(sql, []).first else { return nil }
        let values = row.map { value -> String in
            switch value {
            case .text(let text): return "'\(text)'"
            case .integer(let number): return String(number)
            case .real(let number): return String(number)
            case .blob(let data): return "\(data.count) bytes"
            case .null: return "nil"
            }
        }
        let upper = Set(columns.map { $0.uppercased() })
        let constraint = table.uniqueConstraints.first { Set($0.columns.map { $0.uppercased() }) == upper }
        return StoreError.openFailed(
            path: path, configuration: configuration,
            reason: StoreMigration.duplicatesReason(
                entity: constraint?.entity ?? table.name, properties: constraint?.properties ?? columns, values: values))
    }
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Unique indexes of an existing store

extension PostgreSQLStore {
    /// Brings an existing store's unique indexes in line with the model's uniqueness constraints, inside the
    /// opening transaction, as `SQLiteStore` does: a constraint is not part of an entity's version hash, so a
    /// model version that adds or removes one opens the store without a migration. Indexes are matched by their
    /// columns, and only Core Data's constraint indexes are dropped; rows that already break an added constraint fail the open (checked before the index is made, so
    /// the error names a duplicated value) and the transaction leaves the store as it was.
    static func reconcileUniqueIndexes(
        _ connection: PostgreSQLConnection, schema: SQLiteSchema, location: PostgreSQLLocation, configuration: String
    ) throws {
        var existing: [String: (table: String, columns: Set<String>)] = [:]
        let sql = """
            SELECT ic.relname, t.relname, a.attname FROM pg_index ix
            JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
            JOIN pg_class ic ON ic.oid = ix.indexrelid
            JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(ix.indkey)
            WHERE n.nspname = $1 AND ix.indisunique AND NOT ix.indisprimary
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid)
            """
        for row in try connection.query(sql, [.text(location.schema)]) {
            let cells = row.makeRandomAccess()
            guard case .text(let index) = try cells.columnValue(0), case .text(let table) = try cells.columnValue(1),
                case .text(let column) = try cells.columnValue(2)
            else { continue }
            existing[index, default: (table.uppercased(), [])].columns.insert(column.uppercased())
        }
        for table in schema.tables {
            let mine = existing.filter { $0.value.table == table.name.uppercased() }
            let wanted = table.indexes.filter(\.isUnique)
            let wantedColumns = wanted.map { Set($0.terms.map { $0.column.uppercased() }) }
            // Only Core Data's constraint indexes (`Z_<Entity>_UNIQUE_…`, or the shortened form of a long one) go;
            // a unique index an administrator added stays.
            let ours = Set(table.indexes.map { indexName($0.name).uppercased() })
            for (name, index) in mine.sorted(by: { $0.key < $1.key })
            where !wantedColumns.contains(index.columns) && (name.uppercased().contains("_UNIQUE_") || ours.contains(name.uppercased())) {
                try connection.execute("DROP INDEX \(PostgreSQLConnection.quote(location.schema)).\(PostgreSQLConnection.quote(name))")
            }
            for (spec, columns) in zip(wanted, wantedColumns) where !mine.values.contains(where: { $0.columns == columns }) {
                if let refusal = try PostgreSQLMigrationDatabase(connection, knownNames: []).duplicateRefusal(
                    for: spec, in: table, path: location.display, configuration: configuration)
                {
                    throw refusal
                }
                try connection.execute(createSQL(spec, ifNotExists: false))
            }
        }
    }
}

import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - Unique indexes of an existing store

extension SQLiteStore {
    /// Brings an existing store's unique indexes in line with the model's uniqueness constraints, as Core Data's
    /// lightweight migration does when a model version adds or removes one. A constraint is not part of this
    /// library's entity version hashes, so the store opens without a migration; without this, SQLite went on
    /// refusing duplicates of a removed constraint and accepting duplicates of an added one (which LMDB and memory,
    /// which read the constraints from the model, refuse).
    ///
    /// Only Core Data's constraint indexes (`Z_<Entity>_UNIQUE_<properties>`) are ever dropped, and an index is
    /// matched by its columns, so other unique indexes stay; a constraint whose columns the table does not have
    /// under the model's names is left alone. The plan is made again inside the write transaction (another
    /// process may have done it meanwhile); rows that already break an added constraint make the open fail,
    /// naming a duplicated value, with the store unchanged.
    static func reconcileUniqueIndexes(_ pool: DatabasePool, schema: SQLiteSchema, path: String, configuration: String) throws {
        guard try !pool.read({ db in try uniqueIndexPlan(db, schema: schema).isEmpty }) else { return }
        do {
            try pool.write { db in
                let plan = try uniqueIndexPlan(db, schema: schema)
                for name in plan.drop { try db.execute(sql: "DROP INDEX IF EXISTS \(SQLiteNames.quote(name))") }
                for (spec, table) in plan.create {
                    do {
                        try db.execute(sql: spec.createSQL)
                    } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                        throw try SQLiteMigrationDatabase(db: db).duplicateRefusal(
                            for: spec, in: table, path: path, configuration: configuration) ?? error
                    }
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw mapError(error, path: path, configuration: configuration)
        }
    }

    /// Unique indexes to drop (Core Data constraint indexes no constraint of the model wants) and to create.
    private struct UniqueIndexPlan {
        var drop: [String] = []
        var create: [(spec: SQLiteIndexSpec, table: SQLiteTableLayout)] = []
        var isEmpty: Bool { drop.isEmpty && create.isEmpty }
    }

    private static func uniqueIndexPlan(_ db: Database, schema: SQLiteSchema) throws -> UniqueIndexPlan {
        var plan = UniqueIndexPlan()
        for table in schema.tables {
            let quoted = SQLiteNames.quote(table.name)
            let actual = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(quoted))").compactMap { ($0["name"] as String?)?.uppercased() })
            var existing: [(name: String, columns: Set<String>)] = []
            for row in try Row.fetchAll(db, sql: "PRAGMA index_list(\(quoted))") {
                // Only indexes made by CREATE INDEX ("c"), not a table's own UNIQUE or PRIMARY KEY.
                guard (row["unique"] as Int?) == 1, (row["origin"] as String?) == "c", let name = row["name"] as String? else { continue }
                // An expression has no column name: such an index is not one of Core Data's.
                let columns = try String?.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?)", arguments: [name])
                guard !columns.contains(nil) else { continue }
                existing.append((name, Set(columns.compactMap { $0?.uppercased() })))
            }
            let wanted = table.indexes.filter(\.isUnique)
            let wantedColumns = wanted.map { Set($0.terms.map { $0.column.uppercased() }) }
            plan.drop += existing.filter { index in
                let upper = index.name.uppercased()
                return upper.hasPrefix("Z_") && upper.contains("_UNIQUE_") && !wantedColumns.contains(index.columns)
            }.map(\.name)
            for (spec, columns) in zip(wanted, wantedColumns)
            where columns.isSubset(of: actual) && !existing.contains(where: { $0.columns == columns }) {
                plan.create.append((spec, table))
            }
        }
        return plan
    }
}

import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardStores

// MARK: - Batch statements

extension SQLiteStore: BatchWritingStore {
    /// `UPDATE <table> SET <columns>, Z_OPT = Z_OPT + 1 WHERE Z_PK IN (<matching keys>) RETURNING Z_PK, Z_ENT`
    /// in one write transaction. Nil when a value goes to an attribute with external storage (its files are
    /// written row by row).
    package func batchUpdate(
        _ request: StoreFetchRequest, values: [String: AttributeValue], naming: Bool
    ) throws -> (count: Int, rows: [RowReference])? {
        try checkWritable("batch update")
        let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        var assignments: [(column: String, value: DatabaseValue)] = []
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let index = layout.attributeIndex[name] else { return nil }
            let attribute = layout.attributes[index]
            if attribute.isExternal { return nil }
            guard let encoded = SQLiteValueCoding.encode(value, as: attribute.type) else { return nil }
            assignments.append((attribute.column, encoded))
        }
        guard !assignments.isEmpty else { return nil }
        let naming = try naming || tracksHistory || read(discoverHistory)
        let (sql, arguments) = try batchStatement(
            "UPDATE", request, layout: layout,
            set: " SET " + assignments.map { "\(SQLiteNames.quote($0.column)) = ?" }.joined(separator: ", ") + ", \"Z_OPT\" = \"Z_OPT\" + 1",
            setArguments: assignments.map(\.value), naming: naming)
        return try tracer.measure({ "SQLite batch update \(tracer.describe(request)): \($0.count) rows" }) {
            try write("batch update") { db in
                do {
                    let changed = try changedRows(db, sql: sql, arguments: arguments, naming: naming)
                    try recordBatch(changed.rows, kind: .update, keys: values.keys.sorted(), db: db)
                    return changed
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                    throw StoreError.uniquenessViolation(
                        path: displayPath, configuration: configurationName, entity: layout.name,
                        properties: values.keys.sorted(), values: values.keys.sorted().map { values[$0]!.description })
                }
            }
        }
    }

    /// `DELETE FROM <table> WHERE Z_PK IN (<matching keys>) RETURNING Z_PK, Z_ENT` in one write transaction.
    /// Nil when the entity has attributes with external storage (their files go with the rows).
    package func batchDelete(_ request: StoreFetchRequest, naming: Bool) throws -> (count: Int, rows: [RowReference])? {
        try checkWritable("batch delete")
        let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        if layout.attributes.contains(where: \.isExternal) { return nil }
        let naming = try naming || tracksHistory || read(discoverHistory)
        let (sql, arguments) = try batchStatement("DELETE FROM", request, layout: layout, set: "", setArguments: [], naming: naming)
        return try tracer.measure({ "SQLite batch delete \(tracer.describe(request)): \($0.count) rows" }) {
            try write("batch delete") { db in
                let changed = try changedRows(db, sql: sql, arguments: arguments, naming: naming)
                try recordBatch(changed.rows, kind: .delete, keys: [], db: db)
                return changed
            }
        }
    }

    /// Records a batch statement's rows in persistent history, when the store tracks it.
    private func recordBatch(_ rows: [RowReference], kind: HistoryChangeKind, keys: [String], db: Database) throws {
        guard tracksHistory, !rows.isEmpty else { return }
        try recordHistory(
            .recording(rows.map { StoredHistoryChange(kind: kind, entityName: $0.entityName, primaryKey: $0.primaryKey, updatedKeys: keys) }),
            db: db)
    }

    /// `<verb> <table> AS t0<set> WHERE <filter>`, or with `WHERE Z_PK IN (<matching keys>)` when the predicate
    /// needs joins (which UPDATE and DELETE cannot have); `RETURNING Z_PK, Z_ENT` when `naming` the rows.
    private func batchStatement(
        _ verb: String, _ request: StoreFetchRequest, layout: SQLiteEntityLayout, set: String, setArguments: [DatabaseValue],
        naming: Bool
    ) throws -> (String, [DatabaseValue]) {
        let filter = try compiler.batchFilter(try request.prepared(forStore: identifier, model: model))
        let table = SQLiteNames.quote(schema.table(of: layout).name)
        let returning = naming ? " RETURNING \"Z_PK\", \"Z_ENT\"" : ""
        if let keys = filter.matchingKeys {
            return ("\(verb) \(table)\(set) WHERE \"Z_PK\" IN (\(keys.sql))" + returning, setArguments + keys.arguments)
        }
        let condition = filter.whereClause ?? SQLFragment("")
        return ("\(verb) \(table) AS t0\(set)\(condition.sql)" + returning, setArguments + condition.arguments)
    }

    /// Runs a batch statement: the number of rows it changed and, when `naming`, the rows it returned
    /// (`RETURNING Z_PK, Z_ENT`) by entity.
    private func changedRows(_ db: Database, sql: String, arguments: [DatabaseValue], naming: Bool) throws -> (count: Int, rows: [RowReference]) {
        guard naming else {
            try db.execute(sql: sql, arguments: StatementArguments(arguments))
            return (db.changesCount, [])
        }
        let names = Dictionary(uniqueKeysWithValues: schema.entities.values.map { ($0.number, $0.name) })
        var result: [RowReference] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try rows.next() {
            let entity: Int64 = row[1]
            result.append(RowReference(entityName: names[entity] ?? "", primaryKey: row[0]))
        }
        return (result.count, result)
    }
}

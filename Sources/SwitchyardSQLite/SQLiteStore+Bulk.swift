import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - Bulk copy

extension SQLiteStore: BulkCopyStore {
    /// One `SELECT ... WHERE Z_ENT = ? AND Z_PK > ? ORDER BY Z_PK LIMIT ?` on the table's primary key.
    package func rowBatch(entityName: String, after primaryKey: Int64?, limit: Int) throws -> [StoreRow] {
        let layout = try servedLayout(entityName)
        guard let projection = schema.exactProjections[layout.name] else {
            throw StoreError.entityNotInStore(path: displayPath, configuration: configurationName, entity: entityName)
        }
        let table = SQLiteNames.quote(schema.table(of: layout).name)
        let sql = "SELECT \(projection.selectList) FROM \(table) AS t0 WHERE t0.\"Z_ENT\" = ? AND t0.\"Z_PK\" > ? "
            + "ORDER BY t0.\"Z_PK\" LIMIT ?"
        return try read { db in
            let statement = try db.cachedStatement(sql: sql)
            var decoder = SQLiteRowDecoder(projection: projection, entityNames: schema.entityNamesByNumber, externalData: externalData)
            return try decoder.rows(
                of: statement, arguments: [layout.number.databaseValue, (primaryKey ?? Int64.min).databaseValue, limit.databaseValue])
        }
    }

    package func primaryKeyMaxima() throws -> [String: Int64] {
        try read { db in
            var result: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY") {
                guard case .string(let name) = (row[0] as DatabaseValue).storage else { continue }
                if case .int64(let max) = (row[1] as DatabaseValue).storage { result[name] = max } else { result[name] = 0 }
            }
            return result
        }
    }

    /// `MIN(Z_PK)` and `MAX(Z_PK)` of each served table, as two subqueries so the primary key's own index
    /// answers each (one `SELECT MIN(...), MAX(...)` would scan).
    package func primaryKeyRanges() throws -> [String: ClosedRange<Int64>] {
        var tables: [String: String] = [:]
        for entity in entities {
            tables[entity.rootName] = schema.table(of: try servedLayout(entity.name)).name
        }
        return try read { db in
            var result: [String: ClosedRange<Int64>] = [:]
            for (root, table) in tables {
                // Both from the table's primary-key index: two seeks, no scan.
                let sql = "SELECT (SELECT MIN(Z_PK) FROM \(SQLiteNames.quote(table))), (SELECT MAX(Z_PK) FROM \(SQLiteNames.quote(table)))"
                if let row = try Row.fetchOne(db, sql: sql), let smallest = row[0] as Int64?, let largest = row[1] as Int64? {
                    result[root] = min(smallest, largest)...largest
                }
            }
            return result
        }
    }

    package func setPrimaryKeyMaxima(_ maxima: [String: Int64]) throws {
        try write("set Z_MAX") { db in
            for (name, max) in maxima.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = ?", arguments: [max, name])
            }
        }
    }

    /// Tables the schema does not map (Core Data's persistent-history `ACHANGE`..., CloudKit mirroring's
    /// `ANSCK...`, join tables of relationships the model lacks, the app's own), every trigger, and
    /// `Z_PRIMARYKEY` rows of entities outside the model (`Z_ENT >= 16000`), each with its owner.
    package func extraneousItems() throws -> [StoreExtraneousItem] {
        let known = Set(
            (schema.tables.map(\.name) + schema.joinTables.map(\.name)).map { $0.uppercased() }
                + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        return try read { db in
            var items: [StoreExtraneousItem] = []
            let objects = try Row.fetchAll(db, sql: "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY type, name")
            for object in objects {
                guard case .string(let type) = (object[0] as DatabaseValue).storage,
                    case .string(let name) = (object[1] as DatabaseValue).storage
                else { continue }
                if type == "trigger" {
                    items.append(StoreExtraneousItem(
                        kind: "trigger", name: name, rows: nil, reason: StoreExtraneousItem.Owner.trigger.reason, owner: .trigger))
                } else if !known.contains(name.uppercased()), !name.hasPrefix("sqlite_") {
                    let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(SQLiteNames.quote(name))") ?? 0
                    let owner = StoreExtraneousItem.Owner.ofTable(name)
                    items.append(StoreExtraneousItem(kind: "table", name: name, rows: rows, reason: owner.reason, owner: owner))
                }
            }
            for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT") {
                guard case .int64(let number) = (row[0] as DatabaseValue).storage,
                    case .string(let name) = (row[1] as DatabaseValue).storage
                else { continue }
                let owner = StoreExtraneousItem.Owner.ofEntity(name)
                items.append(StoreExtraneousItem(
                    kind: "entity", name: "\(name) (Z_ENT \(number))", rows: nil, reason: owner.reason, owner: owner))
            }
            return items
        }
    }

    package func refuseInsideOwnTransaction(_ operation: String) throws {
        if state.isEnteredByCurrentThread {
            throw StoreError.insideOwnTransaction(path: displayPath, configuration: configurationName, operation: operation)
        }
    }

    /// Checkpoints the WAL into the main file and closes every connection, so the file alone is the store.
    package func closeFiles() throws {
        // Closed first, so no read or write starts from here; those in flight end before the last checkpoint.
        try checkOpen()
        try refuseInsideOwnTransaction("close the store (to move, replace or remove its files)")
        state.close()
        do {
            if !isReadOnly { try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) } }
        } catch {
            // Nothing was closed: the store goes on.
            state.reopen()
            throw mapError(error)
        }
        do {
            // A failed close may have closed some connections (GRDB closes the writer first): the store stays closed.
            try pool.close()
        } catch {
            throw mapError(error)
        }
    }
}

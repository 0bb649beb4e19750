import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardStores

// MARK: - SQLite-to-SQLite link copy

extension SQLiteStore {
    /// Copies one to-many relationship's links and positions from `source` without decoding them, after the
    /// rows of both ends are in this store: a many-to-many's join rows (`INSERT ... SELECT` from the attached
    /// source's join table, columns matched end to end, since table and column names embed entity numbers that
    /// may differ between the two stores), or an ordered to-many's `Z_FOK_` positions (`UPDATE` of the members'
    /// table from the source's). Batches bounded by `batchSize` keys, each one transaction. A link is copied
    /// only when both its rows are here. Returns the links copied (members with a position, for an ordered
    /// to-many with a to-one inverse).
    package func copyLinks(_ spec: BulkLinkCopySpec, from source: SQLiteStore, batchSize: Int) throws -> Int {
        try checkWritable("copy links")
        if let index = schema.joinByEnd[spec.targetEnd.key] {
            return try copyJoinRows(spec, into: schema.joinTables[index], from: source, batchSize: batchSize)
        }
        return try copyPositions(spec, from: source, batchSize: batchSize)
    }

    // MARK: - Join rows

    private func copyJoinRows(
        _ spec: BulkLinkCopySpec, into target: SQLiteJoinTable, from source: SQLiteStore, batchSize: Int
    ) throws -> Int {
        guard let sourceIndex = source.schema.joinByEnd[spec.sourceEnd.key] else {
            throw StoreError.unknownProperty(
                path: source.displayPath, configuration: configurationName, entity: spec.sourceEnd.entityName, property: spec.sourceEnd.relationship.name)
        }
        let from = source.schema.joinTables[sourceIndex]
        let reflexive = target.first.key == target.second.key
        // The source end each target end is copied from, and the source columns of that end's row and order.
        func sourceEnd(of end: RelationshipEnd) -> RelationshipEnd {
            end.key == spec.targetEnd.key ? spec.sourceEnd : spec.sourceInverse
        }
        func copiesOrder(of end: RelationshipEnd) -> Bool {
            end.key == spec.targetEnd.key ? spec.ordered : spec.inverseOrdered
        }
        let firstSource = sourceEnd(of: target.first)
        let sourceIsFirst = reflexive || firstSource.key == from.first.key
        var columns = [target.firstColumn, target.secondColumn]
        var expressions = sourceIsFirst ? [from.firstColumn, from.secondColumn] : [from.secondColumn, from.firstColumn]
        let orders = sourceIsFirst
            ? [from.firstOrderColumn, from.secondOrderColumn] : [from.secondOrderColumn, from.firstOrderColumn]
        for (index, (end, column)) in [(target.first, target.firstOrderColumn), (target.second, target.secondOrderColumn)].enumerated() {
            guard let column, let order = orders[index], copiesOrder(of: end), !(reflexive && index == 1) else { continue }
            columns.append(column)
            expressions.append(order)
        }
        guard let firstLayout = schema.entities[target.first.entityName],
            let secondLayout = schema.entities[target.second.entityName]
        else {
            throw StoreError.entityNotInStore(path: displayPath, configuration: configurationName, entity: target.first.entityName)
        }
        let alias = "switchyard_source"
        let table = "\(alias).\(SQLiteNames.quote(from.name))"
        // Batches follow the source's first column: the primary key's prefix, so each boundary is an index walk.
        let walk = "s." + SQLiteNames.quote(from.firstColumn)
        func exists(_ layout: SQLiteEntityLayout, _ column: String) -> String {
            "EXISTS (SELECT 1 FROM main.\(SQLiteNames.quote(self.schema.table(of: layout).name)) AS r "
                + "WHERE r.\"Z_PK\" = s.\(SQLiteNames.quote(column)))"
        }
        let insert = "INSERT INTO main.\(SQLiteNames.quote(target.name)) (\(columns.map(SQLiteNames.quote).joined(separator: ", "))) "
            + "SELECT \(expressions.map { "s." + SQLiteNames.quote($0) }.joined(separator: ", ")) FROM \(table) AS s "
            + "WHERE \(walk) > ? AND \(walk) <= ? AND \(exists(firstLayout, expressions[0])) AND \(exists(secondLayout, expressions[1]))"
        let boundary = "SELECT \(walk) FROM \(table) AS s WHERE \(walk) > ? ORDER BY \(walk) LIMIT 1 OFFSET ?"
        return try inBatches(attaching: source, as: alias, boundary: boundary, statement: insert, batchSize: batchSize)
    }

    // MARK: - Positions of an ordered to-many with a to-one inverse

    private func copyPositions(_ spec: BulkLinkCopySpec, from source: SQLiteStore, batchSize: Int) throws -> Int {
        let inverse = spec.targetInverse.relationship.name
        guard let member = schema.entities[spec.targetInverse.entityName], let index = member.toOneIndex[inverse] else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: spec.targetInverse.entityName, property: inverse)
        }
        let toOne = member.toOnes[index]
        guard spec.ordered, let order = toOne.orderColumn else { return 0 }
        let sourceInverse = spec.sourceInverse.relationship.name
        guard let sourceMember = source.schema.entities[spec.sourceInverse.entityName],
            let sourceIndex = sourceMember.toOneIndex[sourceInverse]
        else {
            throw StoreError.unknownProperty(path: source.displayPath, configuration: configurationName, entity: spec.sourceInverse.entityName, property: sourceInverse)
        }
        // A source without the column kept no order: its members read by primary key, as they will here.
        guard let sourceOrder = sourceMember.toOnes[sourceIndex].orderColumn else { return 0 }
        let alias = "switchyard_source"
        let table = SQLiteNames.quote(schema.table(of: member).name)
        let sourceTable = "\(alias).\(SQLiteNames.quote(source.schema.table(of: sourceMember).name))"
        let family = member.familyNumbers.map(String.init).joined(separator: ", ")
        let update = "UPDATE main.\(table) SET \(SQLiteNames.quote(order)) = (SELECT s.\(SQLiteNames.quote(sourceOrder)) "
            + "FROM \(sourceTable) AS s WHERE s.\"Z_PK\" = \(table).\"Z_PK\") "
            + "WHERE \"Z_PK\" > ? AND \"Z_PK\" <= ? AND \(SQLiteNames.quote(toOne.column)) IS NOT NULL AND \"Z_ENT\" IN (\(family))"
        let boundary = "SELECT \"Z_PK\" FROM main.\(table) WHERE \"Z_PK\" > ? ORDER BY \"Z_PK\" LIMIT 1 OFFSET ?"
        return try inBatches(attaching: source, as: alias, boundary: boundary, statement: update, batchSize: batchSize)
    }

    // MARK: - Batches

    /// Attaches `source` read-only as `alias` and runs `statement` once per key range, each in its own
    /// transaction: `boundary` (arguments: the previous bound, `batchSize - 1`) gives the range's upper key,
    /// `statement` takes the range (exclusive low, inclusive high). Returns the rows changed.
    private func inBatches(
        attaching source: SQLiteStore, as alias: String, boundary: String, statement: String, batchSize: Int
    ) throws -> Int {
        let attachURI = SQLiteStore.readOnlyURI(path: source.location.path, isWAL: source.isWAL)
        do {
            return try pool.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS \(alias)", arguments: [attachURI])
                defer { try? db.execute(sql: "DETACH DATABASE \(alias)") }
                var changed = 0
                var low = Int64.min
                while true {
                    let high = try Int64.fetchOne(db, sql: boundary, arguments: [low, max(0, batchSize - 1)]) ?? Int64.max
                    try db.inTransaction(.immediate) {
                        try db.execute(sql: statement, arguments: [low, high])
                        changed += db.changesCount
                        return .commit
                    }
                    if high == Int64.max { break }
                    low = high
                }
                return changed
            }
        } catch {
            throw mapError(error)
        }
    }
}

import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardStores

// MARK: - To-many members

extension SQLiteStore {
    /// Members of a to-many relationship for a batch of sources: one SELECT per 500 sources, through the join
    /// table for a many-to-many, through the members' foreign key otherwise; ordered by `Z_FOK_` when the
    /// relationship is ordered.
    public func relatedReferences(of sources: [RowReference], relationship: String) throws -> [RowReference: [RowReference]] {
        guard let first = sources.first else { return [:] }
        let end = try toManyEnd(relationship, of: first.entityName)
        if model.isToManyWithoutInverse(end.relationship), schema.hiddenKeys[end.key] == nil, isReadOnly {
            // A read-only store written before Switchyard kept this relationship: nothing was ever stored.
            return Dictionary(sources.map { ($0, []) }, uniquingKeysWith: { a, _ in a })
        }
        guard let destination = schema.entities[end.relationship.destinationEntityName] else {
            throw StoreError.entityNotInStore(
                path: displayPath, configuration: configurationName, entity: end.relationship.destinationEntityName)
        }
        let destinationTable = SQLiteNames.quote(schema.table(of: destination).name)
        let from: String, sourceColumn: String
        var orderColumn: String?
        if let side = schema.join(end.key) {
            from = "\(SQLiteNames.quote(side.table)) AS j JOIN \(destinationTable) AS d ON d.\"Z_PK\" = j.\(SQLiteNames.quote(side.memberColumn))"
            sourceColumn = "j.\(SQLiteNames.quote(side.sourceColumn))"
            orderColumn = side.orderColumn.map { "j.\(SQLiteNames.quote($0))" }
        } else if let hidden = schema.hiddenKeys[end.key] {
            from = "\(destinationTable) AS d"
            sourceColumn = "d.\(SQLiteNames.quote(hidden.column))"
            orderColumn = hidden.orderColumn.map { "d.\(SQLiteNames.quote($0))" }
        } else if model.isInverseBackedToMany(end.relationship), let inverse = end.relationship.inverseName,
            let index = destination.toOneIndex[inverse]
        {
            let mapping = destination.toOnes[index]
            from = "\(destinationTable) AS d"
            sourceColumn = "d.\(SQLiteNames.quote(mapping.column))"
            orderColumn = mapping.orderColumn.map { "d.\(SQLiteNames.quote($0))" }
        } else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: first.entityName, property: relationship)
        }
        if !end.relationship.isOrdered { orderColumn = nil }
        let family = compiler.entityFilter(destination, alias: "d", includesSubentities: true).map { " AND " + $0 } ?? ""
        let order = orderColumn.map { "\($0) IS NULL, \($0), " } ?? ""
        var bySource: [Int64: [RowReference]] = [:]
        let keys = Array(Set(sources.map(\.primaryKey))).sorted()
        try read { db in
            var start = 0
            while start < keys.count {
                let chunk = Array(keys[start..<min(start + 500, keys.count)])
                start += chunk.count
                let sql = "SELECT \(sourceColumn), d.\"Z_PK\", d.\"Z_ENT\" FROM \(from) WHERE \(sourceColumn) IN ("
                    + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")\(family) ORDER BY \(sourceColumn), \(order)d.\"Z_PK\""
                let statement = try db.cachedStatement(sql: sql)
                let rows = try Row.fetchCursor(statement, arguments: StatementArguments(chunk))
                while let row = try rows.next() {
                    guard case .int64(let owner) = (row[0] as DatabaseValue).storage,
                        case .int64(let pk) = (row[1] as DatabaseValue).storage,
                        case .int64(let number) = (row[2] as DatabaseValue).storage,
                        let name = schema.entityNamesByNumber[number]
                    else { continue }
                    bySource[owner, default: []].append(RowReference(entityName: name, primaryKey: pk))
                }
            }
        }
        var result: [RowReference: [RowReference]] = [:]
        for source in sources { result[source] = bySource[source.primaryKey] ?? [] }
        return result
    }

    /// The declaring end of persistent to-many `relationship` of `entityName`, or `StoreError.unknownProperty`.
    package func toManyEnd(_ relationship: String, of entityName: String) throws -> RelationshipEnd {
        guard let end = model.end(of: relationship, from: entityName), end.relationship.isToMany, !end.relationship.isTransient else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: entityName, property: relationship)
        }
        return end
    }

    // MARK: - Saving links and orders

    /// Inside a save's transaction, after the row changes: drops the links of deleted rows, then applies link
    /// deletes, link inserts and orders.
    func applyRelationshipChanges(_ changes: StoreChangeSet, deleted: [RowDeletion], db: Database) throws {
        if !schema.joinTables.isEmpty {
            for deletion in deleted {
                for join in schema.joinTables {
                    for (end, column) in [(join.first, join.firstColumn), (join.second, join.secondColumn)]
                    where model.entity(deletion.entityName, isKindOf: end.entityName) {
                        try db.cachedStatement(sql: "DELETE FROM \(SQLiteNames.quote(join.name)) WHERE \(SQLiteNames.quote(column)) = ?")
                            .execute(arguments: [deletion.primaryKey])
                    }
                }
            }
        }
        if !schema.hiddenKeys.isEmpty {
            // Members of a deleted owner's to-many without inverse no longer belong to it.
            for deletion in deleted {
                for (endKey, hidden) in schema.hiddenKeys.sorted(by: { $0.key < $1.key }) {
                    guard let owner = endKey.split(separator: ".").first, model.entity(deletion.entityName, isKindOf: String(owner))
                    else { continue }
                    try db.cachedStatement(sql: hiddenClearSQL(hidden, where: "\(SQLiteNames.quote(hidden.column)) = ?"))
                        .execute(arguments: [deletion.primaryKey])
                }
            }
        }
        for link in changes.linkDeletes {
            if let hidden = try hiddenKey(of: link) {
                try db.cachedStatement(sql: hiddenClearSQL(hidden, where: "\"Z_PK\" = ? AND \(SQLiteNames.quote(hidden.column)) = ?"))
                    .execute(arguments: [link.destination.primaryKey, link.source.primaryKey])
                continue
            }
            let (side, reflexive) = try joinSide(link)
            let statement = try db.cachedStatement(
                sql: "DELETE FROM \(SQLiteNames.quote(side.table)) WHERE \(SQLiteNames.quote(side.sourceColumn)) = ? AND \(SQLiteNames.quote(side.memberColumn)) = ?")
            try statement.execute(arguments: [link.source.primaryKey, link.destination.primaryKey])
            if reflexive { try statement.execute(arguments: [link.destination.primaryKey, link.source.primaryKey]) }
        }
        for link in changes.linkInserts {
            if let hidden = try hiddenKey(of: link) {
                // One owner per member: the foreign key moves; a new owner's list gives no position until ordered.
                let position = hidden.orderColumn.map { ", \(SQLiteNames.quote($0)) = NULL" } ?? ""
                try db.cachedStatement(
                    sql: "UPDATE \(SQLiteNames.quote(hidden.table)) SET \(SQLiteNames.quote(hidden.column)) = ?\(position) "
                        + "WHERE \"Z_PK\" = ? AND \(SQLiteNames.quote(hidden.column)) IS NOT ?")
                    .execute(arguments: [link.source.primaryKey, link.destination.primaryKey, link.source.primaryKey])
                continue
            }
            let (side, reflexive) = try joinSide(link)
            let statement = try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO \(SQLiteNames.quote(side.table)) (\(SQLiteNames.quote(side.sourceColumn)), \(SQLiteNames.quote(side.memberColumn))) VALUES (?, ?)")
            try statement.execute(arguments: [link.source.primaryKey, link.destination.primaryKey])
            if reflexive { try statement.execute(arguments: [link.destination.primaryKey, link.source.primaryKey]) }
        }
        for order in changes.orders {
            let end = try toManyEnd(order.relationship, of: order.source.entityName)
            guard end.relationship.isOrdered else {
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: order.source.entityName, property: order.relationship)
            }
            let sql: String, clear: String
            if let side = schema.join(end.key) {
                guard let column = side.orderColumn else { continue }
                sql = "UPDATE \(SQLiteNames.quote(side.table)) SET \(SQLiteNames.quote(column)) = ? "
                    + "WHERE \(SQLiteNames.quote(side.sourceColumn)) = ? AND \(SQLiteNames.quote(side.memberColumn)) = ?"
                clear = "UPDATE \(SQLiteNames.quote(side.table)) SET \(SQLiteNames.quote(column)) = NULL "
                    + "WHERE \(SQLiteNames.quote(side.sourceColumn)) = ?"
            } else if let hidden = schema.hiddenKeys[end.key] {
                guard let column = hidden.orderColumn else { continue }
                sql = "UPDATE \(SQLiteNames.quote(hidden.table)) SET \(SQLiteNames.quote(column)) = ? "
                    + "WHERE \(SQLiteNames.quote(hidden.column)) = ? AND \"Z_PK\" = ?"
                clear = "UPDATE \(SQLiteNames.quote(hidden.table)) SET \(SQLiteNames.quote(column)) = NULL "
                    + "WHERE \(SQLiteNames.quote(hidden.column)) = ?"
            } else if let inverse = end.relationship.inverseName,
                let destination = schema.entities[end.relationship.destinationEntityName],
                let index = destination.toOneIndex[inverse]
            {
                let mapping = destination.toOnes[index]
                // An existing Core Data store without the column keeps no order.
                guard let column = mapping.orderColumn else { continue }
                sql = "UPDATE \(SQLiteNames.quote(schema.table(of: destination).name)) SET \(SQLiteNames.quote(column)) = ? "
                    + "WHERE \(SQLiteNames.quote(mapping.column)) = ? AND \"Z_PK\" = ?"
                clear = "UPDATE \(SQLiteNames.quote(schema.table(of: destination).name)) SET \(SQLiteNames.quote(column)) = NULL "
                    + "WHERE \(SQLiteNames.quote(mapping.column)) = ?"
            } else {
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: order.source.entityName, property: order.relationship)
            }
            // Members the order leaves out keep no position (they read after the others), as on every backend.
            try db.cachedStatement(sql: clear).execute(arguments: [order.source.primaryKey])
            let statement = try db.cachedStatement(sql: sql)
            for (i, member) in order.members.enumerated() {
                try statement.execute(arguments: [Int64(i + 1), order.source.primaryKey, member.primaryKey])
            }
        }
    }

    /// The hidden foreign key of a link's relationship when it is a to-many without inverse (checking the member
    /// is of its destination); `nil` for any other relationship.
    private func hiddenKey(of link: RelationshipLink) throws -> SQLiteHiddenKey? {
        guard let end = try link.endWithoutInverse(in: model, path: displayPath, configuration: configurationName) else { return nil }
        guard let hidden = schema.hiddenKeys[end.key] else {
            throw StoreError.unknownProperty(
                path: displayPath, configuration: configurationName, entity: link.source.entityName,
                property: "\(end.key) (its members' table is not in this store)")
        }
        return hidden
    }

    /// `UPDATE` clearing a hidden foreign key (and its position) in the rows `condition` selects.
    private func hiddenClearSQL(_ hidden: SQLiteHiddenKey, where condition: String) -> String {
        let position = hidden.orderColumn.map { ", \(SQLiteNames.quote($0)) = NULL" } ?? ""
        return "UPDATE \(SQLiteNames.quote(hidden.table)) SET \(SQLiteNames.quote(hidden.column)) = NULL\(position) WHERE \(condition)"
    }

    /// The join table of a link's relationship seen from its source, and whether the relationship is its own
    /// inverse (then each link is kept both ways round, so either row finds the other through the same
    /// columns); `StoreError.unknownProperty` for a relationship without a join table.
    private func joinSide(_ link: RelationshipLink) throws -> (SQLiteJoinTable.Side, Bool) {
        guard let end = model.end(of: link.relationship, from: link.source.entityName), let index = schema.joinByEnd[end.key] else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: link.source.entityName, property: link.relationship)
        }
        let join = schema.joinTables[index]
        return (join.side(from: end.key), join.first.key == join.second.key)
    }
}

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
        guard schema.membersSQL(of: end, destination: destination, model: model, placeholders: ["?"]) != nil else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: first.entityName, property: relationship)
        }
        var bySource: [Int64: [RowReference]] = [:]
        let keys = Array(Set(sources.map(\.primaryKey))).sorted()
        try read { db in
            var start = 0
            while start < keys.count {
                let chunk = Array(keys[start..<min(start + 500, keys.count)])
                start += chunk.count
                guard let sql = schema.membersSQL(
                    of: end, destination: destination, model: model, placeholders: Array(repeating: "?", count: chunk.count))
                else { return }
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
                    try db.cachedStatement(sql: schema.hiddenClearSQL(hidden, where: "\(SQLiteNames.quote(hidden.column)) = ?"))
                        .execute(arguments: [deletion.primaryKey])
                }
            }
        }
        for link in changes.linkDeletes {
            if let hidden = try schema.hiddenKey(of: link, model: model, path: displayPath, configuration: configurationName) {
                try db.cachedStatement(sql: schema.hiddenClearSQL(hidden, where: "\"Z_PK\" = ? AND \(SQLiteNames.quote(hidden.column)) = ?"))
                    .execute(arguments: [link.destination.primaryKey, link.source.primaryKey])
                continue
            }
            let (side, reflexive) = try schema.joinSide(of: link, model: model, path: displayPath, configuration: configurationName)
            let statement = try db.cachedStatement(
                sql: "DELETE FROM \(SQLiteNames.quote(side.table)) WHERE \(SQLiteNames.quote(side.sourceColumn)) = ? AND \(SQLiteNames.quote(side.memberColumn)) = ?")
            try statement.execute(arguments: [link.source.primaryKey, link.destination.primaryKey])
            if reflexive { try statement.execute(arguments: [link.destination.primaryKey, link.source.primaryKey]) }
        }
        for link in changes.linkInserts {
            if let hidden = try schema.hiddenKey(of: link, model: model, path: displayPath, configuration: configurationName) {
                // One owner per member: the foreign key moves; a new owner's list gives no position until ordered.
                let position = hidden.orderColumn.map { ", \(SQLiteNames.quote($0)) = NULL" } ?? ""
                try db.cachedStatement(
                    sql: "UPDATE \(SQLiteNames.quote(hidden.table)) SET \(SQLiteNames.quote(hidden.column)) = ?\(position) "
                        + "WHERE \"Z_PK\" = ? AND \(SQLiteNames.quote(hidden.column)) IS NOT ?")
                    .execute(arguments: [link.source.primaryKey, link.destination.primaryKey, link.source.primaryKey])
                continue
            }
            let (side, reflexive) = try schema.joinSide(of: link, model: model, path: displayPath, configuration: configurationName)
            let statement = try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO \(SQLiteNames.quote(side.table)) (\(SQLiteNames.quote(side.sourceColumn)), \(SQLiteNames.quote(side.memberColumn))) VALUES (?, ?)")
            try statement.execute(arguments: [link.source.primaryKey, link.destination.primaryKey])
            if reflexive { try statement.execute(arguments: [link.destination.primaryKey, link.source.primaryKey]) }
        }
        for order in changes.orders {
            let end = try toManyEnd(order.relationship, of: order.source.entityName)
            let table: String, column: String, sourceColumn: String, memberColumn: String
            switch schema.orderColumns(of: end) {
            case let .columns(t, c, source, member): (table, column, sourceColumn, memberColumn) = (t, c, source, member)
            case .notKept: continue
            case .unknown:
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: order.source.entityName, property: order.relationship)
            }
            let q = SQLiteNames.quote
            let sql = "UPDATE \(q(table)) SET \(q(column)) = ? WHERE \(q(sourceColumn)) = ? AND \(q(memberColumn)) = ?"
            let clear = "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(sourceColumn)) = ?"
            // Members the order leaves out keep no position (they read after the others), as on every backend.
            try db.cachedStatement(sql: clear).execute(arguments: [order.source.primaryKey])
            let statement = try db.cachedStatement(sql: sql)
            for (i, member) in order.members.enumerated() {
                try statement.execute(arguments: [Int64(i + 1), order.source.primaryKey, member.primaryKey])
            }
        }
    }
}

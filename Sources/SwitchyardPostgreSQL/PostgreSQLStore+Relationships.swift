import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Saving links and orders

extension PostgreSQLStore {
    /// Inside a save's transaction, after the row changes: drops the links of deleted rows, then applies link
    /// deletes, link inserts and orders (the same steps, in the same order, as the SQLite store).
    func applyRelationshipChanges(_ changes: StoreChangeSet, connection: PostgreSQLConnection) throws {
        let q = PostgreSQLConnection.quote
        for deletion in changes.deletes {
            for join in schema.joinTables {
                for (end, column) in [(join.first, join.firstColumn), (join.second, join.secondColumn)]
                where model.entity(deletion.entityName, isKindOf: end.entityName) {
                    try connection.execute("DELETE FROM \(q(join.name)) WHERE \(q(column)) = $1", [.integer(deletion.primaryKey)])
                }
            }
            // Members of a deleted owner's to-many without inverse no longer belong to it.
            for (endKey, hidden) in schema.hiddenKeys.sorted(by: { $0.key < $1.key }) {
                guard let owner = endKey.split(separator: ".").first, model.entity(deletion.entityName, isKindOf: String(owner)) else { continue }
                try connection.execute(schema.hiddenClearSQL(hidden, where: "\(q(hidden.column)) = $1"), [.integer(deletion.primaryKey)])
            }
        }
        for link in changes.linkDeletes {
            if let hidden = try schema.hiddenKey(of: link, model: model, path: displayPath, configuration: configurationName) {
                try connection.execute(
                    schema.hiddenClearSQL(hidden, where: "\"Z_PK\" = $1 AND \(q(hidden.column)) = $2"),
                    [.integer(link.destination.primaryKey), .integer(link.source.primaryKey)])
                continue
            }
            let (side, reflexive) = try schema.joinSide(of: link, model: model, path: displayPath, configuration: configurationName)
            let sql = "DELETE FROM \(q(side.table)) WHERE \(q(side.sourceColumn)) = $1 AND \(q(side.memberColumn)) = $2"
            try connection.execute(sql, [.integer(link.source.primaryKey), .integer(link.destination.primaryKey)])
            if reflexive { try connection.execute(sql, [.integer(link.destination.primaryKey), .integer(link.source.primaryKey)]) }
        }
        for link in changes.linkInserts {
            if let hidden = try schema.hiddenKey(of: link, model: model, path: displayPath, configuration: configurationName) {
                // One owner per member: the foreign key moves; a new owner's list gives no position until ordered.
                let position = hidden.orderColumn.map { ", \(q($0)) = NULL" } ?? ""
                try connection.execute(
                    "UPDATE \(q(hidden.table)) SET \(q(hidden.column)) = $1\(position) "
                        + "WHERE \"Z_PK\" = $2 AND \(q(hidden.column)) IS DISTINCT FROM $1",
                    [.integer(link.source.primaryKey), .integer(link.destination.primaryKey)])
                continue
            }
            let (side, reflexive) = try schema.joinSide(of: link, model: model, path: displayPath, configuration: configurationName)
            let sql = "INSERT INTO \(q(side.table)) (\(q(side.sourceColumn)), \(q(side.memberColumn))) VALUES ($1, $2) ON CONFLICT DO NOTHING"
            try connection.execute(sql, [.integer(link.source.primaryKey), .integer(link.destination.primaryKey)])
            if reflexive { try connection.execute(sql, [.integer(link.destination.primaryKey), .integer(link.source.primaryKey)]) }
        }
        for order in changes.orders {
            let end = try toManyEnd(order.relationship, of: order.source.entityName)
            let table: String, column: String, sourceColumn: String, memberColumn: String
            switch schema.orderColumns(of: end) {
            case let .columns(t, c, source, member): (table, column, sourceColumn, memberColumn) = (t, c, source, member)
            case .notKept: continue
            case .unknown: throw unknownLink(order.source.entityName, order.relationship)
            }
            // Members the order leaves out keep no position (they read after the others), as on every backend.
            try connection.execute(
                "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(sourceColumn)) = $1", [.integer(order.source.primaryKey)])
            guard !order.members.isEmpty else { continue }
            // One statement for the whole list: (position, member) pairs joined in.
            var parameters: [ColumnValue] = [.integer(order.source.primaryKey)]
            var pairs: [String] = []
            for (i, member) in order.members.enumerated() {
                parameters += [.integer(Int64(i + 1)), .integer(member.primaryKey)]
                pairs.append("($\(parameters.count - 1)::bigint, $\(parameters.count)::bigint)")
            }
            try connection.execute(
                "UPDATE \(q(table)) AS t SET \(q(column)) = v.position FROM (VALUES \(pairs.joined(separator: ", "))) AS v(position, member) "
                    + "WHERE t.\(q(sourceColumn)) = $1 AND t.\(q(memberColumn)) = v.member",
                parameters)
        }
    }

    private func unknownLink(_ entity: String, _ relationship: String) -> StoreError {
        StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: entity, property: relationship)
    }
}

import Foundation
import SwitchyardModel

// MARK: - Inverses gained or lost

extension LayoutMigrator {
    /// Moves each member's owner for the to-manys of `table`'s members that gain a new to-one inverse (the hidden
    /// key `Z<n><REL>` and its position `Z_FOK_<n><REL>` -> the inverse's key, position and entity columns) or
    /// lose theirs with the to-one (its key and position -> the hidden ones), as Core Data's inferred mapping
    /// keeps the members. Runs once the new columns exist and before the old ones are dropped: the hidden ones
    /// here (the model no longer lists them), the removed to-one's with its other columns. Returns the columns it
    /// emptied that the new layout does not use, for the caller to drop.
    func moveInverseOwners(
        _ db: some LayoutMigrationDatabase, table: SQLiteTableLayout, columnsByEntity: [String: [String: String]],
        oldColumns: [String: [String: String]], movedAside: [String: String], numbers: [String: Int64]
    ) throws -> [String] {
        let realColumns = try db.columns(of: table.name)
        /// The real spelling of an upper-cased column name, if the table has it.
        func real(_ upper: String) -> String? { realColumns.first { $0.uppercased() == upper } }
        /// The old hidden key (or position) column of `former`, its owner numbered as after entity renames.
        func hidden(_ former: RelationshipEnd, ordered: Bool) -> String? {
            let owner = report.entities.first { $0.oldName == former.entityName }?.name ?? former.entityName
            return SQLiteHiddenKey.existingColumn(
                of: former.relationship.name, ownerNumber: numbers[owner], ordered: ordered, among: realColumns)
        }
        var emptied: [String] = []
        for move in inverseMoves {
            guard let destination = new.entity(named: move.end.relationship.destinationEntityName),
                SQLiteNames.table(for: destination.rootName).uppercased() == table.name.uppercased()
            else { continue }
            let t = db.quote(table.name)
            var sets: [String] = []
            let from: String
            switch move.conversion {
            case .keysFromOwners(let inverse):
                guard let declaring = ([destination] + new.ancestors(of: destination)).first(where: { e in
                    e.relationships.contains { $0.name == inverse }
                }), let key = columnsByEntity[declaring.name]?[inverse], let oldKey = hidden(move.former, ordered: false)
                else { throw unplaced(move, "its hidden key column (Z<n>\(move.former.relationship.name.uppercased())) is not in table \(table.name), or not only once") }
                from = oldKey
                sets.append("\(db.quote(key)) = \(db.quote(oldKey))")
                if let position = columnsByEntity[declaring.name]?[inverse + "\u{0}order"], let oldPosition = hidden(move.former, ordered: true) {
                    sets.append("\(db.quote(position)) = \(db.quote(oldPosition))")
                }
                if let entityColumn = columnsByEntity[declaring.name]?[inverse + "\u{0}entity"],
                    let owner = new.entity(named: move.end.entityName), let ownerRoot = new.entity(named: owner.rootName)
                {
                    // The owner's entity number, as a to-one to an entity with subentities keeps it.
                    let ownerTable = db.quote(SQLiteNames.table(for: ownerRoot.name))
                    sets.append("\(db.quote(entityColumn)) = (SELECT o.\"Z_ENT\" FROM \(ownerTable) AS o WHERE o.\"Z_PK\" = \(t).\(db.quote(oldKey)))")
                }
                emptied.append(oldKey)
                if let oldPosition = hidden(move.former, ordered: true) { emptied.append(oldPosition) }
            case .ownersFromKeys(let former):
                // The removed to-one's columns as the old model laid them out: numbered (ZOWNER1) when another
                // entity of the table declares a to-one of its name.
                let formerColumns = formerColumns(of: former, destinationOf: move.former, oldColumns: oldColumns)
                    .map { (key: movedAside[$0.key.uppercased()] ?? $0.key, position: $0.position.map { movedAside[$0.uppercased()] ?? $0 }) }
                let keyName = formerColumns?.key ?? SQLiteNames.column(for: former)
                guard let key = columnsByEntity[destination.name]?[SQLiteHiddenKey.property(move.end.key)],
                    let oldKey = real(keyName.uppercased())
                else { throw unplaced(move, "the key column \(keyName) of its removed inverse is not in table \(table.name)") }
                from = oldKey
                sets.append("\(db.quote(key)) = \(db.quote(oldKey))")
                if let position = columnsByEntity[destination.name]?[SQLiteHiddenKey.orderProperty(move.end.key)],
                    let oldPosition = real((formerColumns?.position ?? "Z_FOK_" + former).uppercased())
                {
                    sets.append("\(db.quote(position)) = \(db.quote(oldPosition))")
                }
            }
            // The destination's rows only: the table may hold other entities of its tree.
            let family = destination.selfAndDescendantNames.compactMap { numbers[$0] }.map(String.init).joined(separator: ", ")
            let rows = "\(db.quote(from)) IS NOT NULL AND \"Z_ENT\" IN (\(family.isEmpty ? "NULL" : family))"
            let total = Int(try db.integer("SELECT COUNT(*) FROM \(t) WHERE \(rows)"))
            try db.execute("UPDATE \(t) SET \(sets.joined(separator: ", ")) WHERE \(rows)")
            try progress?(MigrationProgress(path: path, entity: destination.name, done: total, total: total))
        }
        let expected = Set(table.columns.map { $0.name.uppercased() })
        return emptied.filter { !expected.contains($0.uppercased()) }
    }

    /// The key and position columns the old model gave the to-one `name` of `end`'s destination (or of the
    /// ancestor declaring it), from the old layout of this table (`oldColumns`); nil when it has no such to-one.
    private func formerColumns(
        of name: String, destinationOf end: RelationshipEnd, oldColumns: [String: [String: String]]
    ) -> (key: String, position: String?)? {
        guard let destination = old.entity(named: end.relationship.destinationEntityName),
            let declaring = ([destination] + old.ancestors(of: destination)).first(where: { $0.relationship(named: name) != nil }),
            let columns = oldColumns[declaring.name], let key = columns[name]
        else { return nil }
        return (key, columns[name + "\u{0}order"])
    }

    /// A to-many whose members' owners cannot be found where the old model keeps them: the migration stops (its
    /// transaction leaves the store as it was) rather than open the store without them.
    private func unplaced(_ move: StoreMigration.InverseMove, _ why: String) -> StoreError {
        StoreError.schemaMismatch(
            path: path, configuration: configuration,
            reason: "cannot migrate \(move.end.key) (its to-one inverse \(move.conversion.isGained ? "added" : "removed")): \(why); "
                + "the store was left as it was")
    }
}

extension ModelDiff.InverseConversion {
    /// True when the to-many gains its inverse.
    var isGained: Bool {
        if case .keysFromOwners = self { return true }
        return false
    }
}

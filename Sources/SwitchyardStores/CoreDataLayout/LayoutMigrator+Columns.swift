import Foundation
import SwitchyardModel

// MARK: - Columns

extension LayoutMigrator {
    /// Renames the columns of renamed properties, adds the missing ones, and drops those of removed
    /// properties (with the indexes that use them). Returns the columns added with a `DEFAULT` that already
    /// gives every existing row its value.
    func alignColumns(
        _ db: some LayoutMigrationDatabase, table: SQLiteTableLayout, columnsByEntity: [String: [String: String]],
        changes: [String: EntityChange], oldNumbers: [String: Int64], numbers: [String: Int64]
    ) throws -> Set<String> {
        var defaulted: Set<String> = []
        let quotedTable = db.quote(table.name)
        // Every entity whose rows the table holds, so a column DEFAULT cannot reach another entity's rows.
        let tableNumbers = Set(try db.rows("SELECT DISTINCT \"Z_ENT\" FROM \(quotedTable)", []).compactMap { row -> Int64? in
            if case .integer(let n)? = row.first { return n }
            return nil
        })
        // Columns numbered differently by the new model (a repeated name gained or lost by an earlier entity of
        // the tree) first, so every later step finds each property's column under its new name.
        let before = oldColumns(of: table, changes: changes, oldNumbers: oldNumbers)
        let renumbered = try renumberColumns(db, table: table, columnsByEntity: columnsByEntity, changes: changes, oldColumns: before)
        var actual = Set(try db.columns(of: table.name).map { $0.uppercased() })
        // Which property each expected column belongs to, to find a renamed property's old column.
        var owner: [String: (entity: String, property: String)] = [:]
        for (entity, columns) in columnsByEntity {
            for (property, column) in columns { owner[column.uppercased()] = (entity, property) }
        }
        func rename(_ oldColumn: String, to newColumn: String) throws {
            try db.execute("ALTER TABLE \(quotedTable) RENAME COLUMN \(db.quote(oldColumn)) TO \(db.quote(newColumn))")
            actual.remove(oldColumn.uppercased())
            actual.insert(newColumn.uppercased())
        }
        for spec in table.columns where !actual.contains(spec.name.uppercased()) {
            if let (entity, property) = owner[spec.name.uppercased()] {
                if property.hasSuffix("\u{0}order") {
                    // The position column follows a renamed to-one: Z_FOK_<OLD> -> Z_FOK_<NEW>.
                    let rel = String(property.dropLast("\u{0}order".count))
                    if let oldName = changes[entity].flatMap({ StoreMigration.oldPropertyNames($0)[rel] }),
                        actual.contains("Z_FOK_" + oldName.uppercased())
                    {
                        let oldColumn = try db.columns(of: table.name).first { $0.uppercased() == "Z_FOK_" + oldName.uppercased() } ?? ""
                        try rename(oldColumn, to: spec.name)
                        continue
                    }
                } else if property.hasPrefix("\u{0}hidden:") || property.hasPrefix("\u{0}hiddenorder:") {
                    // A renamed to-many without inverse: its hidden key Z<n><OLD> (Z_FOK_<n><OLD>) is renamed.
                    let ordered = property.hasPrefix("\u{0}hiddenorder:")
                    let endKey = property.drop { $0 != ":" }.dropFirst()
                    let parts = endKey.split(separator: ".", maxSplits: 1).map(String.init)
                    // Only when it had no inverse before either: one that loses its inverse in this migration has
                    // no hidden key yet (`moveInverseOwners` fills the new one), and a `Z<n><OLD>` found then is
                    // another owner's to-many of that name.
                    if parts.count == 2, let oldName = changes[parts[0]].flatMap({ StoreMigration.oldPropertyNames($0)[parts[1]] }),
                        let formerRelationship = old.entity(named: changes[parts[0]]?.oldName ?? parts[0])?.relationship(named: oldName),
                        old.isToManyWithoutInverse(formerRelationship)
                    {
                        if let oldColumn = SQLiteHiddenKey.existingColumn(
                            of: oldName, ownerNumber: numbers[parts[0]], ordered: ordered, among: try db.columns(of: table.name))
                        {
                            try rename(oldColumn, to: spec.name)
                            continue
                        }
                    }
                } else if property.hasSuffix("\u{0}entity") {
                    // Real stores number the entity column differently; any Z<n>_<REL> is the same column, but not
                    // another subentity's of the same name (Z<n>_<REL> for Z<n>_<REL>1).
                    let rel = String(property.dropLast("\u{0}entity".count))
                    if actual.contains(where: { SQLiteNames.isEntityColumn($0, of: rel, numberedAs: spec.name) }) {
                        continue
                    }
                } else if let oldName = changes[entity].flatMap({ StoreMigration.oldPropertyNames($0)[property] }) {
                    let oldColumn = SQLiteNames.column(for: oldName)
                    if actual.contains(oldColumn.uppercased()) {
                        try rename(oldColumn, to: spec.name)
                        continue
                    }
                }
            }
            var defaultValue: ColumnValue?
            if let (entityName, property) = owner[spec.name.uppercased()], let entity = new.entity(named: entityName),
                changes[entityName]?.properties.contains(where: { $0.kind == .added && $0.name == property && !$0.isRelationship }) == true,
                let attribute = entity.attribute(named: property), let value = attribute.defaultValue,
                let encoded = ColumnValue.encode(value.normalizedForObject(attribute.type) ?? value, as: attribute.type), encoded != .null,
                tableNumbers.isSubset(of: Set(entity.selfAndDescendantNames.compactMap { numbers[$0] }))
            {
                // O(1) whatever the row count: rows written before the column read its default.
                defaultValue = encoded
                defaulted.insert(spec.name.uppercased())
            }
            try db.addColumn(spec.name, sqliteType: spec.sqlType, defaultValue: defaultValue, to: table.name)
            actual.insert(spec.name.uppercased())
        }
        // Members' owners moving between a to-one inverse's key and a hidden key, before either column goes.
        for column in try moveInverseOwners(
            db, table: table, columnsByEntity: columnsByEntity, oldColumns: before, movedAside: renumbered.aside, numbers: numbers) {
            try drop(db, table: table.name, column: column.uppercased())
            actual.remove(column.uppercased())
        }
        let expected = Set(table.columns.map { $0.name.uppercased() })
        // Positions the old model kept here (a to-one whose inverse was an ordered to-many) that the new one
        // does not: the to-many is no longer ordered, or the to-one went. Only those: a column this library
        // cannot account for is never dropped.
        var oldPositions: Set<String> = []
        for name in table.entityNames {
            guard let entity = old.entity(named: changes[name]?.oldName ?? name) else { continue }
            for relationship in entity.relationships where !relationship.isToMany {
                if let inverse = old.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    oldPositions.insert("Z_FOK_" + relationship.name.uppercased())
                }
            }
        }
        for column in actual.sorted() where oldPositions.contains(column) && !expected.contains(column) {
            try drop(db, table: table.name, column: column)
            actual.remove(column)
        }
        for name in table.entityNames {
            guard let change = changes[name] else { continue }
            for p in change.properties where p.kind == .removed || p.kind == .toOneBecameToMany {
                let base = SQLiteNames.column(for: p.oldName ?? p.name).uppercased()
                let doomed = actual.filter { column in
                    guard !expected.contains(column) else { return false }
                    if column == base { return true }
                    // The removed to-one's entity column, Z<n>_<REL>.
                    let rel = "_" + String(base.dropFirst())
                    return p.isRelationship && column.hasPrefix("Z") && column.hasSuffix(rel)
                        && column.dropFirst().dropLast(rel.count).allSatisfy(\.isNumber) && column.count > rel.count + 1
                }
                for column in doomed {
                    try drop(db, table: table.name, column: column)
                    actual.remove(column)
                }
            }
        }
        // The old layout's columns no kept property uses, under whatever name (numbered: ZOWNER1, Z_FOK_OWNER1),
        // and those moved aside for a renumbered one.
        for column in actual.sorted() where renumbered.unclaimed.contains(column) && !expected.contains(column) {
            try drop(db, table: table.name, column: column)
            actual.remove(column)
        }
        for spare in renumbered.aside.values.sorted() where actual.contains(spare.uppercased()) {
            try drop(db, table: table.name, column: spare.uppercased())
            actual.remove(spare.uppercased())
        }
        return defaulted
    }

    /// Drops an upper-cased column by its real spelling.
    private func drop(_ db: some LayoutMigrationDatabase, table: String, column: String) throws {
        let real = try db.columns(of: table).first { $0.uppercased() == column } ?? column
        try db.dropColumn(real, from: table)
    }

    // MARK: - Data

    /// Writes what the entity's changes need into its rows, in primary-key batches with progress.
    func fill(
        _ db: some LayoutMigrationDatabase, entity: EntityDescription, change: EntityChange, table: String, columns: [String: String],
        builder: SQLiteLayoutBuilder, numbers: [String: Int64], defaulted: Set<String>
    ) throws {
        let family = entity.selfAndDescendantNames.compactMap { numbers[$0] }
        guard !family.isEmpty else { return }
        let inFamily = "\"Z_ENT\" IN (\(family.map(String.init).joined(separator: ", ")))"
        var updates: [(set: String, condition: String, arguments: [ColumnValue])] = []
        for p in change.properties {
            if !p.isRelationship, p.kind == .added || p.kind == .becameRequired,
                let attribute = entity.attribute(named: p.name), let value = attribute.defaultValue,
                let column = columns[p.name], !(p.kind == .added && defaulted.contains(column.uppercased()))
            {
                // A model default, as an object is given it (a Float at single precision).
                guard let encoded = ColumnValue.encode(value.normalizedForObject(attribute.type) ?? value, as: attribute.type) else {
                    throw StoreError.invalidValue(
                        path: path, configuration: configuration, entity: entity.name, attribute: attribute.name, value: "\(value)",
                        expected: "\(attribute.type.rawValue) (the default value used to migrate existing rows)")
                }
                updates.append(("\(db.quote(column)) = ?", "\(db.quote(column)) IS NULL", [encoded]))
            }
            if p.isRelationship, p.kind == .toManyBecameToOne, let fill = inverseFill(
                db, entity: entity, relationship: p.name, table: table, columns: columns, builder: builder, numbers: numbers)
            {
                updates.append((fill, "1 = 1", []))
            }
        }
        let quoted = db.quote(table)
        func count() throws -> Int { Int(try db.integer("SELECT COUNT(*) FROM \(quoted) WHERE \(inFamily)")) }
        guard !updates.isEmpty else {
            if change.properties.contains(where: { $0.kind == .added && columns[$0.name].map { defaulted.contains($0.uppercased()) } == true }) {
                let total = try count()
                try progress?(MigrationProgress(path: path, entity: entity.name, done: total, total: total))
            }
            return
        }
        let total = try count()
        let bounds = try db.rows("SELECT MIN(\"Z_PK\"), MAX(\"Z_PK\") FROM \(quoted) WHERE \(inFamily)", []).first ?? []
        guard total > 0, bounds.count == 2, case .integer(let low) = bounds[0], case .integer(let high) = bounds[1] else {
            try progress?(MigrationProgress(path: path, entity: entity.name, done: 0, total: 0))
            return
        }
        var start = low
        var done = 0
        while start <= high {
            let end = start + Int64(StoreMigration.batchSize)
            for update in updates {
                try db.execute(
                    "UPDATE \(quoted) SET \(update.set) WHERE \(inFamily) AND \"Z_PK\" >= ? AND \"Z_PK\" < ? AND \(update.condition)",
                    update.arguments + [.integer(start), .integer(end)])
            }
            // The batch's rows, counted through the primary key's range: O(batch), not O(rows so far).
            done += Int(try db.integer(
                "SELECT COUNT(*) FROM \(quoted) WHERE \(inFamily) AND \"Z_PK\" >= ? AND \"Z_PK\" < ?", [.integer(start), .integer(end)]))
            try progress?(MigrationProgress(path: path, entity: entity.name, done: min(done, total), total: total))
            start = end
        }
    }

    /// `ZREL = (the destination whose inverse to-one points here)`, for a to-many that became a to-one; nil
    /// when the inverse is not a to-one stored in this store.
    private func inverseFill(
        _ db: some LayoutMigrationDatabase, entity: EntityDescription, relationship name: String, table: String,
        columns: [String: String], builder: SQLiteLayoutBuilder, numbers: [String: Int64]
    ) -> String? {
        guard let relationship = entity.relationship(named: name), let column = columns[name],
            let inverseName = relationship.inverseName, let destination = new.entity(named: relationship.destinationEntityName),
            let inverse = destination.relationship(named: inverseName), !inverse.isToMany,
            let destinationRoot = new.entity(named: destination.rootName)
        else { return nil }
        let (destinationTable, destinationColumns) = builder.table(root: destinationRoot)
        let declaring = ([destination] + new.ancestors(of: destination)).first { e in e.relationships.contains { $0.name == inverseName } }
        guard let declaring, let inverseColumn = destinationColumns[declaring.name]?[inverseName] else { return nil }
        let destinationFamily = destination.selfAndDescendantNames.compactMap { numbers[$0] }.map(String.init).joined(separator: ", ")
        let t = db.quote(table)
        let select = "SELECT d.\"Z_PK\" FROM \(db.quote(destinationTable.name)) AS d WHERE d.\(db.quote(inverseColumn)) = \(t).\"Z_PK\" AND d.\"Z_ENT\" IN (\(destinationFamily)) ORDER BY d.\"Z_PK\" LIMIT 1"
        var set = "\(db.quote(column)) = (\(select))"
        if let entityColumn = columns[name + "\u{0}entity"] {
            set += ", \(db.quote(entityColumn)) = (\(select.replacingOccurrences(of: "SELECT d.\"Z_PK\"", with: "SELECT d.\"Z_ENT\"")))"
        }
        return set
    }
}

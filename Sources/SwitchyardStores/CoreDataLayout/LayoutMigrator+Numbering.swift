import Foundation
import SwitchyardModel

// MARK: - Numbered columns

extension LayoutMigrator {
    /// The columns the old model laid out for each (entity, property key) of the table's tree, by old entity
    /// name: what the store was opened with before this migration.
    func oldColumns(of table: SQLiteTableLayout, changes: [String: EntityChange], oldNumbers: [String: Int64]) -> [String: [String: String]] {
        let oldRootName = changes[table.rootName]?.oldName ?? table.rootName
        guard let oldRoot = old.entity(named: oldRootName), oldRoot.parentName == nil else { return [:] }
        return SQLiteLayoutBuilder(model: old, numbers: oldNumbers).table(root: oldRoot).1
    }

    /// What renumbering found: the columns it moved aside (upper-cased old name -> temporary real name), and the
    /// upper-cased columns of the old layout that no property of the new one keeps (removed properties, positions of
    /// a to-many no longer ordered, entities gone), for the caller to drop once nothing reads them.
    struct Renumbering {
        var aside: [String: String] = [:]
        var unclaimed: Set<String> = []
    }

    /// Renames the columns of properties that stay but whose column the new model names differently.
    ///
    /// Core Data numbers a name repeated in one table (`Cat.owner` and `Dog.owner` in `ZPET`: `ZOWNER`, `ZOWNER1`,
    /// and their entity columns `Z7_OWNER`, `Z7_OWNER1`) in the order of the tree. A model version that adds such a
    /// property to an entity earlier in that order, removes it from one, or renames one, shifts the numbers:
    /// without this the store would read one entity's values as another's (before 2026-12-02, the cats' owners
    /// became the new ant property's, and the cats had none). Each kept property's column is found by the name
    /// the old layout gave it (a renamed property's under its old name), and renamed in two steps, so names may
    /// swap or shift along. A column the new layout no longer uses that stands where a kept one must go is moved
    /// aside first. Our indexes over a moved column are dropped, for `run` to make them again over the right one.
    func renumberColumns(
        _ db: some LayoutMigrationDatabase, table: SQLiteTableLayout, columnsByEntity: [String: [String: String]],
        changes: [String: EntityChange], oldColumns: [String: [String: String]]
    ) throws -> Renumbering {
        guard !oldColumns.isEmpty else { return Renumbering() }
        let actual = Dictionary(try db.columns(of: table.name).map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
        /// The real column of the old layout's `name`: exactly, or for an entity column, the one numbered alike
        /// whatever its destination number (real stores number it differently).
        func source(_ name: String, entityColumnOf relationship: String?) -> String? {
            if actual[name.uppercased()] != nil { return name.uppercased() }
            guard let relationship else { return nil }
            return actual.keys.sorted().first { SQLiteNames.isEntityColumn($0, of: relationship, numberedAs: name) }
        }
        var moves: [(from: String, to: String)] = []
        var claimed: Set<String> = []
        for name in table.entityNames {
            guard let own = columnsByEntity[name], let before = oldColumns[changes[name]?.oldName ?? name] else { continue }
            let renamed = changes[name].map(StoreMigration.oldPropertyNames) ?? [:]
            for (key, column) in own where !key.hasPrefix("\u{0}") {
                let property = String(key.prefix { $0 != "\u{0}" })
                let oldProperty = renamed[property] ?? property
                let isEntityColumn = key.hasSuffix("\u{0}entity")
                guard let was = before[oldProperty + key.dropFirst(property.count)],
                    let from = source(was, entityColumnOf: isEntityColumn ? oldProperty : nil)
                else { continue }
                claimed.insert(from)
                if from == column.uppercased() { continue }
                // A real store's entity column under another destination number, numbered as the new layout wants.
                if isEntityColumn, oldProperty == property, actual[was.uppercased()] == nil,
                    SQLiteNames.isEntityColumn(from, of: property, numberedAs: column)
                {
                    continue
                }
                moves.append((actual[from] ?? from, column))
            }
        }
        var result = Renumbering()
        for columns in oldColumns.values {
            for (key, column) in columns where !key.hasPrefix("\u{0}") {
                if key.hasSuffix("\u{0}entity") {
                    let property = String(key.prefix { $0 != "\u{0}" })
                    if let real = source(column, entityColumnOf: property), !claimed.contains(real) { result.unclaimed.insert(real) }
                } else if !claimed.contains(column.uppercased()) {
                    result.unclaimed.insert(column.uppercased())
                }
            }
        }
        guard !moves.isEmpty else { return result }

        let quotedTable = db.quote(table.name)
        func rename(_ from: String, _ to: String) throws {
            try db.execute("ALTER TABLE \(quotedTable) RENAME COLUMN \(db.quote(from)) TO \(db.quote(to))")
        }
        let sources = Set(moves.map { $0.from.uppercased() })
        for move in moves {
            let target = move.to.uppercased()
            guard let occupant = actual[target], !sources.contains(target) else { continue }
            guard result.unclaimed.contains(target) else {
                throw StoreError.schemaMismatch(
                    path: path, configuration: configuration,
                    reason: "cannot renumber column \(move.from) of table \(table.name) to \(move.to): the table has a column \(occupant) "
                        + "the old model does not account for; the store was left as it was")
            }
            var spare = "Z_MOVED_" + target
            while actual[spare.uppercased()] != nil { spare += "_" }
            try rename(occupant, spare)
            result.aside[target] = spare
        }
        for (i, move) in moves.enumerated() { try rename(move.from, "Z_RENUMBERING_\(i)") }
        for (i, move) in moves.enumerated() { try rename("Z_RENUMBERING_\(i)", move.to) }

        // An index follows its column through a rename but keeps its name, which the new layout may give to an
        // index over another column: drop ours whose columns are no longer the ones their name stands for.
        let wanted = Dictionary(table.indexes.map { ($0.name.uppercased(), $0.terms.map { $0.column.uppercased() }) }, uniquingKeysWith: { a, _ in a })
        for index in try db.indexes(of: table.name) where !index.isConstraint {
            guard let columns = wanted[index.name.uppercased()], columns != index.columns.map({ $0.uppercased() }) else { continue }
            try db.execute("DROP INDEX \(db.quote(index.name))")
        }
        return result
    }
}

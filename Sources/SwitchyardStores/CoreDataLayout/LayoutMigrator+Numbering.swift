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

    /// Renames the columns of properties that stay but whose column the new model numbers differently.
    ///
    /// Core Data numbers a name repeated in one table (`Cat.owner` and `Dog.owner` in `ZPET`: `ZOWNER`, `ZOWNER1`,
    /// and their entity columns `Z7_OWNER`, `Z7_OWNER1`) in the order of the tree. A model version that adds such a
    /// property to an entity earlier in that order, or removes it from one, shifts the numbers: without this the
    /// store would read one entity's values as another's (before 2026-12-02, the cats' owners became the new ant
    /// property's, and the cats had none). Renamed in two steps, so names may swap or shift along. The column of a
    /// removed property that stands where a kept one must go is moved aside first; returns those, by upper-cased
    /// old name, for the inverse moves to read and the caller to drop.
    func renumberColumns(
        _ db: some LayoutMigrationDatabase, table: SQLiteTableLayout, columnsByEntity: [String: [String: String]],
        changes: [String: EntityChange], oldColumns: [String: [String: String]]
    ) throws -> [String: String] {
        guard !oldColumns.isEmpty else { return [:] }
        let actual = Dictionary(try db.columns(of: table.name).map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var moves: [(from: String, to: String)] = []
        for name in table.entityNames {
            guard let own = columnsByEntity[name], let before = oldColumns[changes[name]?.oldName ?? name] else { continue }
            let renamed = changes[name].map(StoreMigration.oldPropertyNames) ?? [:]
            for (key, column) in own where !key.hasPrefix("\u{0}") {
                let property = String(key.prefix { $0 != "\u{0}" })
                // A renamed property's column follows its new name in `alignColumns`.
                guard renamed[property] == nil, let was = before[key] else { continue }
                let source: String?
                if key.hasSuffix("\u{0}entity") {
                    // Real stores number the destination differently: the column numbered as before, whatever its n.
                    source = actual.keys.sorted().first { SQLiteNames.isEntityColumn($0, of: property, numberedAs: was) }
                    if let source, SQLiteNames.isEntityColumn(source, of: property, numberedAs: column) { continue }
                } else {
                    guard was.uppercased() != column.uppercased() else { continue }
                    source = actual[was.uppercased()] == nil ? nil : was.uppercased()
                }
                if let source, let real = actual[source] { moves.append((real, column)) }
            }
        }
        guard !moves.isEmpty else { return [:] }

        let quotedTable = db.quote(table.name)
        func rename(_ from: String, _ to: String) throws {
            try db.execute("ALTER TABLE \(quotedTable) RENAME COLUMN \(db.quote(from)) TO \(db.quote(to))")
        }
        let sources = Set(moves.map { $0.from.uppercased() })
        let removed = removedColumns(of: table, changes: changes, oldColumns: oldColumns)
        var aside: [String: String] = [:]
        for move in moves {
            let target = move.to.uppercased()
            guard let occupant = actual[target], !sources.contains(target) else { continue }
            guard removed.contains(target) else {
                throw StoreError.schemaMismatch(
                    path: path, configuration: configuration,
                    reason: "cannot renumber column \(move.from) of table \(table.name) to \(move.to): the table has a column \(occupant) "
                        + "the old model does not account for; the store was left as it was")
            }
            var spare = "Z_MOVED_" + target
            while actual[spare.uppercased()] != nil { spare += "_" }
            try rename(occupant, spare)
            aside[target] = spare
        }
        for (i, move) in moves.enumerated() { try rename(move.from, "Z_RENUMBERING_\(i)") }
        for (i, move) in moves.enumerated() { try rename("Z_RENUMBERING_\(i)", move.to) }
        return aside
    }

    /// The upper-cased old columns of properties the new model no longer stores there: removed, made to-many,
    /// or of an entity the table no longer holds.
    func removedColumns(of table: SQLiteTableLayout, changes: [String: EntityChange], oldColumns: [String: [String: String]]) -> Set<String> {
        var result: Set<String> = []
        let kept = Dictionary(table.entityNames.map { (changes[$0]?.oldName ?? $0, $0) }, uniquingKeysWith: { a, _ in a })
        for (oldEntity, columns) in oldColumns {
            guard let newEntity = kept[oldEntity] else {
                result.formUnion(columns.values.map { $0.uppercased() })
                continue
            }
            let gone = Set((changes[newEntity]?.properties ?? [])
                .filter { $0.kind == .removed || $0.kind == .toOneBecameToMany }.map { $0.oldName ?? $0.name })
            for (key, column) in columns where gone.contains(String(key.prefix { $0 != "\u{0}" })) {
                result.insert(column.uppercased())
            }
        }
        return result
    }
}

import Foundation
import SwitchyardModel

// MARK: - Join tables

extension LayoutMigrator {
    /// Brings the many-to-many join tables in line with the new model, inside the migration's transaction:
    /// a table the new model finds (under either end's name) only gains or loses `Z_FOK_` order columns; a
    /// pair whose relationship or entity was renamed gets its old table renamed (table and columns, `O(1)`);
    /// a new pair gets its table and reverse index; a table no new pair uses is dropped.
    ///
    /// Names embed the store's entity numbers (`Z_PRIMARYKEY`), which a migration never changes for an entity
    /// it keeps (a rename keeps the number, an added entity takes a free one), so a model whose numbering
    /// shifted still finds its tables. Members that gain an order keep primary-key order: their position is
    /// NULL, which reads after positioned members, by primary key — as in a store that never had positions.
    func alignJoinTables(
        _ db: some LayoutMigrationDatabase, oldNumbers: [String: Int64], numbers: [String: Int64], newEntities: [EntityDescription]
    ) throws {
        var actual = try db.tableColumns()
        var kept: Set<String> = []
        let storeRoots = Set(newEntities.map(\.rootName))
        for (first, second) in new.manyToManyPairs(touching: newEntities) {
            guard let a = new.entity(named: first.entityName), let b = new.entity(named: second.entityName),
                storeRoots.contains(a.rootName), storeRoots.contains(b.rootName)
            else { continue }
            let target = SQLiteJoinTable.expected(first: first, second: second, numbers: numbers, model: new)
            let swapped = SQLiteJoinTable.expected(first: second, second: first, numbers: numbers, model: new)
            if let found = target.resolved(in: actual) {
                try alignOrderColumns(db, found: found, expected: target)
                kept.insert(found.name.uppercased())
            } else if let found = swapped.resolved(in: actual) {
                try alignOrderColumns(db, found: found, expected: swapped)
                kept.insert(found.name.uppercased())
            } else if let (oldJoin, oldKeys) = formerJoin(first: first, second: second, oldNumbers: oldNumbers, actual: actual),
                !kept.contains(oldJoin.name.uppercased())
            {
                try rename(db, oldJoin, to: target, oldKeys: oldKeys)
                kept.insert(target.name.uppercased())
            } else {
                try db.createJoinTable(target)
                try fillFromFormerToOnes(db, target, oldNumbers: oldNumbers, numbers: numbers)
                kept.insert(target.name.uppercased())
            }
            actual = try db.tableColumns()
        }
        // Pairs of the old model whose table nothing claimed: removed relationships (or entities).
        let oldEntities = old.entities.filter { oldNumbers[$0.name] != nil }
        for (first, second) in old.manyToManyPairs(touching: oldEntities) {
            let join = SQLiteJoinTable.expected(first: first, second: second, numbers: oldNumbers, model: old)
            let swapped = SQLiteJoinTable.expected(first: second, second: first, numbers: oldNumbers, model: old)
            guard let found = join.resolved(in: actual) ?? swapped.resolved(in: actual),
                !kept.contains(found.name.uppercased())
            else { continue }
            let links = Int(try db.integer("SELECT COUNT(*) FROM \(db.quote(found.name))"))
            try db.execute("DROP TABLE \(db.quote(found.name))")
            actual[found.name.uppercased()] = nil
            try progress?(MigrationProgress(path: path, entity: first.entityName, done: links, total: links))
        }
    }

    /// The old model's join table of the pair whose new ends are `first` and `second` (through entity and
    /// relationship renames), resolved in the database, with the old end key of each new end.
    private func formerJoin(
        first: RelationshipEnd, second: RelationshipEnd, oldNumbers: [String: Int64], actual: [String: [String]]
    ) -> (SQLiteJoinTable, [String: String])? {
        guard let oldFirst = formerEnd(first), let oldSecond = formerEnd(second),
            let pair = old.manyToManyEnds(of: oldFirst.relationship.name, from: oldFirst.entityName),
            Set([pair.first.key, pair.second.key]) == Set([oldFirst.key, oldSecond.key])
        else { return nil }
        let join = SQLiteJoinTable.expected(first: pair.first, second: pair.second, numbers: oldNumbers, model: old)
        let swapped = SQLiteJoinTable.expected(first: pair.second, second: pair.first, numbers: oldNumbers, model: old)
        guard let found = join.resolved(in: actual) ?? swapped.resolved(in: actual) else { return nil }
        // A relationship that is its own inverse has one key for both ends.
        let keys = Dictionary([(first.key, oldFirst.key), (second.key, oldSecond.key)], uniquingKeysWith: { a, _ in a })
        return (found, keys)
    }

    /// The old model's end a new end was (its entity and relationship possibly renamed).
    private func formerEnd(_ end: RelationshipEnd) -> RelationshipEnd? {
        StoreMigration.formerEnd(of: end, report: report, old: old)
    }

    /// Fills a new join table from the foreign keys of an end that was a to-one (a to-one that became
    /// to-many with a to-many inverse): one link per row whose key is set, and, where the other end was an
    /// ordered to-many kept by those keys, its positions. Runs before the key columns are dropped.
    private func fillFromFormerToOnes(
        _ db: some LayoutMigrationDatabase, _ join: SQLiteJoinTable, oldNumbers: [String: Int64], numbers: [String: Int64]
    ) throws {
        let ends = join.first.key == join.second.key ? [join.first] : [join.first, join.second]
        for end in ends {
            guard let former = formerEnd(end), !former.relationship.isToMany,
                let declaring = old.entity(named: former.entityName), let oldRoot = old.entity(named: declaring.rootName),
                let entity = new.entity(named: end.entityName)
            else { continue }
            let (_, oldColumns) = SQLiteLayoutBuilder(model: old, numbers: oldNumbers).table(root: oldRoot)
            let table = SQLiteNames.table(for: entity.rootName)
            let real = Dictionary(try db.columns(of: table).map { ($0.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
            guard let key = oldColumns[former.entityName]?[former.relationship.name].flatMap({ real[$0.uppercased()] }) else { continue }
            let family = entity.selfAndDescendantNames.compactMap { numbers[$0] }.map(String.init).joined(separator: ", ")
            guard !family.isEmpty else { continue }
            let side = join.side(from: end.key)
            var columns = [side.sourceColumn, side.memberColumn]
            var values = ["Z_PK", key]
            // The other end's positions lived next to the key (Z_FOK_<REL>); they become its join order column.
            let other = end.key == join.first.key ? join.second : join.first
            if other.key != end.key, let order = join.side(from: other.key).orderColumn,
                let position = oldColumns[former.entityName]?[former.relationship.name + "\u{0}order"].flatMap({ real[$0.uppercased()] })
            {
                columns.append(order)
                values.append(position)
            }
            let quotedColumns = columns.map(db.quote).joined(separator: ", ")
            let source = "FROM \(db.quote(table)) WHERE \(db.quote(key)) IS NOT NULL AND \"Z_ENT\" IN (\(family))"
            try db.insertIgnoringDuplicates(
                into: join.name, columns: quotedColumns, select: "SELECT \(values.map(db.quote).joined(separator: ", ")) \(source)")
            if join.first.key == join.second.key {
                // A relationship that is its own inverse keeps each link both ways round.
                try db.insertIgnoringDuplicates(
                    into: join.name, columns: quotedColumns, select: "SELECT \(db.quote(key)), \"Z_PK\" \(source)")
            }
            let links = Int(try db.integer("SELECT COUNT(*) FROM \(db.quote(join.name))"))
            try progress?(MigrationProgress(path: path, entity: end.entityName, done: links, total: links))
        }
    }

    /// Renames an old join table and its columns to the new names; order columns follow their end, are added
    /// for an end that became ordered and dropped for one that no longer is; the reverse index is rebuilt.
    private func rename(_ db: some LayoutMigrationDatabase, _ oldJoin: SQLiteJoinTable, to target: SQLiteJoinTable, oldKeys: [String: String]) throws {
        if oldJoin.name.uppercased() != target.name.uppercased() {
            try db.execute("ALTER TABLE \(db.quote(oldJoin.name)) RENAME TO \(db.quote(target.name))")
        }
        let table = db.quote(target.name)
        // (old column, new column) per end; a reflexive pair has one key for both ends, so map column by column.
        var moves: [(from: String?, to: String?)] = []
        if target.first.key == target.second.key {
            moves = [(oldJoin.firstColumn, target.firstColumn), (oldJoin.secondColumn, target.secondColumn),
                     (oldJoin.firstOrderColumn, target.firstOrderColumn), (oldJoin.secondOrderColumn, target.secondOrderColumn)]
        } else {
            for end in [target.first, target.second] {
                let before = oldJoin.side(from: oldKeys[end.key] ?? end.key), after = target.side(from: end.key)
                moves.append((before.sourceColumn, after.sourceColumn))
                moves.append((before.orderColumn, after.orderColumn))
            }
        }
        // Through temporary names first, so a column may take a name another one is giving up.
        var pending: [(temporary: String, final: String)] = []
        for (i, move) in moves.enumerated() {
            switch (move.from, move.to) {
            case let (from?, to?) where from.uppercased() != to.uppercased():
                let temporary = "Z_MIGRATING_\(i)"
                try db.execute("ALTER TABLE \(table) RENAME COLUMN \(db.quote(from)) TO \(db.quote(temporary))")
                pending.append((temporary, to))
            case let (from?, nil):
                try db.execute("ALTER TABLE \(table) DROP COLUMN \(db.quote(from))")
            case let (nil, to?):
                try db.addColumn(to, sqliteType: "INTEGER", defaultValue: nil, to: target.name)
            default:
                break
            }
        }
        for (temporary, final) in pending {
            try db.execute("ALTER TABLE \(table) RENAME COLUMN \(db.quote(temporary)) TO \(db.quote(final))")
        }
        for index in try db.indexes(of: target.name) where !index.isConstraint {
            try db.execute("DROP INDEX \(db.quote(index.name))")
        }
        try db.createJoinIndex(target)
    }

    /// Adds the order columns `expected` has and `found` (the same table in the database) lacks, and drops
    /// order columns no end uses any more.
    private func alignOrderColumns(_ db: some LayoutMigrationDatabase, found: SQLiteJoinTable, expected: SQLiteJoinTable) throws {
        for (have, want) in [(found.firstOrderColumn, expected.firstOrderColumn), (found.secondOrderColumn, expected.secondOrderColumn)] {
            if have == nil, let want {
                try db.addColumn(want, sqliteType: "INTEGER", defaultValue: nil, to: found.name)
            }
        }
        // Found columns may carry Core Data's numeric suffix; the ones just added are spelled as expected.
        let wanted = Set([found.firstOrderColumn ?? expected.firstOrderColumn, found.secondOrderColumn ?? expected.secondOrderColumn]
            .compactMap { $0?.uppercased() })
        // Only the order columns this pair's ends would have (Z_FOK_ + a key column's name, perhaps with
        // Core Data's numeric suffix): a column this library cannot account for is never dropped.
        let ours = Set([expected.firstColumn, expected.secondColumn, found.firstColumn, found.secondColumn]
            .map { "Z_FOK_" + $0.dropFirst(2).uppercased() })
        for column in try db.columns(of: found.name) {
            let upper = column.uppercased()
            let isOurs = ours.contains { upper.hasPrefix($0) && upper.dropFirst($0.count).allSatisfy(\.isNumber) }
            if isOurs && !wanted.contains(upper) {
                try db.execute("ALTER TABLE \(db.quote(found.name)) DROP COLUMN \(db.quote(column))")
            }
        }
    }
}

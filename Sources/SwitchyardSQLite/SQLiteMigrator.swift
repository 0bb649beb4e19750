import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - SQLiteStore migration

extension SQLiteStore {
    /// Decides, on the read-only probe connection before anything opens the file for writing, whether the
    /// store's model differs from `model`. Returns the migration to run when every change is inferable; nil
    /// when the store is identical or compatible (then it is not touched, so a real Core Data store stays Core
    /// Data's) or has no readable model cache (the table layout decides); throws
    /// `StoreError.incompatibleModel` otherwise.
    static func plannedMigration(
        _ db: Database, path: String, model: ObjectModel, configuration: String, progress: MigrationProgressHandler?
    ) throws -> SQLiteMigrator? {
        let metadata = try readMetadata(db, path: path)
        let pending = try StoreMigration.pendingMigration(
            storedHashes: metadata.versionHashes,
            storedModel: {
                guard try db.tableExists("Z_MODELCACHE"),
                    let blob = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE WHERE Z_CONTENT IS NOT NULL LIMIT 1"),
                    !blob.isEmpty
                else { return nil }
                // A cache this library cannot read leaves the decision to the table layout, as with no cache.
                return try? ModelCache.decode(blob, source: "\(path) model cache")
            }, model: model, configuration: configuration, path: path)
        guard let (old, report) = pending else { return nil }
        return SQLiteMigrator(old: old, new: model, configuration: configuration, report: report, path: path, progress: progress)
    }
}

// MARK: - SQLiteMigrator

/// Applies an inferable `CompatibilityReport` to a Core Data-layout database inside the caller's transaction:
/// renames tables and columns, adds columns (O(1) in SQLite), fills defaults and to-many -> to-one keys in
/// primary-key batches, deletes removed entities' rows, drops removed columns, creates, renames or drops
/// many-to-many join tables and `Z_FOK_` order columns, creates missing indexes, and records the new model's
/// hashes and model cache.
package struct SQLiteMigrator {
    package let old: ObjectModel
    package let new: ObjectModel
    package let configuration: String
    package let report: CompatibilityReport
    package let path: String
    package let progress: MigrationProgressHandler?

    /// Migrates in one IMMEDIATE transaction: a crash or an error leaves the old store.
    func run(in pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let metadata = try SQLiteStore.readMetadata(db, path: path)
                // Another process may have migrated the store between the probe and this write lock.
                if metadata.versionHashes == new.versionHashes { return .rollback }
                try run(db, metadata: metadata)
                return .commit
            }
        }
    }

    private func run(_ db: Database, metadata: StoreMetadata) throws {
        var numbers = try primaryKeyNumbers(db)
        let oldNumbers = numbers
        let changes = Dictionary(report.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let newEntities = (try? new.entities(inConfiguration: configuration)) ?? new.entities

        // Entity renames: Z_PRIMARYKEY names, and the table of a renamed root.
        for change in report.entities where change.kind == .renamed {
            guard let oldName = change.oldName, let number = numbers[oldName] else { continue }
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_NAME = ? WHERE Z_ENT = ?", arguments: [change.name, number])
            numbers[oldName] = nil
            numbers[change.name] = number
            if new.entity(named: change.name)?.parentName == nil, try tableExists(db, SQLiteNames.table(for: oldName)) {
                try db.execute(sql: "ALTER TABLE \(SQLiteNames.quote(SQLiteNames.table(for: oldName))) RENAME TO \(SQLiteNames.quote(SQLiteNames.table(for: change.name)))")
            }
        }

        // Removed entities: their rows, their Z_PRIMARYKEY row, and a table no entity uses any more.
        let removed = Set(report.entities.filter { $0.kind == .removed }.map(\.name))
        for name in removed.sorted() {
            guard let entity = old.entity(named: name), let number = numbers[name] else { continue }
            let table = currentTableName(ofOldRoot: entity.rootName)
            if try tableExists(db, table) {
                let tree = Set([entity.rootName] + (old.entity(named: entity.rootName)?.descendantNames ?? []))
                if tree.isSubset(of: removed) {
                    try db.execute(sql: "DROP TABLE \(SQLiteNames.quote(table))")
                } else {
                    let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(SQLiteNames.quote(table)) WHERE Z_ENT = ?", arguments: [number]) ?? 0
                    try db.execute(sql: "DELETE FROM \(SQLiteNames.quote(table)) WHERE Z_ENT = ?", arguments: [number])
                    try progress?(MigrationProgress(path: path, entity: name, done: total, total: total))
                }
            }
            try db.execute(sql: "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [number])
            numbers[name] = nil
        }

        // Added entities (parents come first in entity-number order): a number no other entity uses.
        for entity in newEntities.flatMap({ [$0] + $0.descendantNames.compactMap(new.entity(named:)) })
            .sorted(by: { $0.entityNumber < $1.entityNumber }) where numbers[entity.name] == nil
        {
            // Core Data reserves 16000 and up for its own entities (persistent history, CloudKit mirroring).
            let used = Set(numbers.values)
            let number = used.contains(Int64(entity.entityNumber))
                ? (used.filter { $0 < 16000 }.max() ?? 0) + 1 : Int64(entity.entityNumber)
            let parent = entity.parentName.flatMap { numbers[$0] } ?? 0
            try db.execute(
                sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                arguments: [number, entity.name, parent])
            numbers[entity.name] = number
        }

        // Join tables need only the entity numbers, which are final now.
        try alignJoinTables(db, oldNumbers: oldNumbers, numbers: numbers, newEntities: newEntities)

        // Tables and columns, then the data each change needs.
        let builder = SQLiteLayoutBuilder(model: new, numbers: numbers)
        for root in SQLiteSchema.roots(of: newEntities, in: new) {
            let (table, columnsByEntity) = builder.table(root: root)
            guard try tableExists(db, table.name) else {
                try db.execute(sql: table.createSQL)
                for index in table.indexes { try db.execute(sql: index.createSQL) }
                continue
            }
            let defaulted = try alignColumns(
                db, table: table, columnsByEntity: columnsByEntity, changes: changes, numbers: numbers)
            for name in table.entityNames {
                guard let entity = new.entity(named: name), let change = changes[name] else { continue }
                try fill(db, entity: entity, change: change, table: table.name, columns: columnsByEntity[name] ?? [:],
                         builder: builder, numbers: numbers, defaulted: defaulted)
            }
            for index in table.indexes {
                try db.execute(sql: index.createSQL.replacingOccurrences(of: "INDEX ", with: "INDEX IF NOT EXISTS ", options: .anchored, range: index.createSQL.range(of: "INDEX ")))
            }
        }

        let plist = try StoreMigration.migratedMetadata(metadata, model: new).binaryPropertyList()
        try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [plist])
        if !(try db.tableExists("Z_MODELCACHE")) { try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)") }
        try db.execute(sql: "DELETE FROM Z_MODELCACHE")
        try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [try ModelCache.encode(new)])
    }

    // MARK: - Columns

    /// Renames the columns of renamed properties, adds the missing ones, and drops those of removed
    /// properties (with the indexes that use them). Returns the columns added with a `DEFAULT` that already
    /// gives every existing row its value.
    private func alignColumns(
        _ db: Database, table: SQLiteTableLayout, columnsByEntity: [String: [String: String]],
        changes: [String: EntityChange], numbers: [String: Int64]
    ) throws -> Set<String> {
        var defaulted: Set<String> = []
        // Every entity whose rows the table holds, so a column DEFAULT cannot reach another entity's rows.
        let tableNumbers = Set(try Int64.fetchAll(db, sql: "SELECT DISTINCT Z_ENT FROM \(SQLiteNames.quote(table.name))"))
        let quotedTable = SQLiteNames.quote(table.name)
        var actual = Set(try columns(db, table.name).map { $0.uppercased() })
        // Which property each expected column belongs to, to find a renamed property's old column.
        var owner: [String: (entity: String, property: String)] = [:]
        for (entity, columns) in columnsByEntity {
            for (property, column) in columns { owner[column.uppercased()] = (entity, property) }
        }
        for spec in table.columns where !actual.contains(spec.name.uppercased()) {
            if let (entity, property) = owner[spec.name.uppercased()] {
                if property.hasSuffix("\u{0}order") {
                    // The position column follows a renamed to-one: Z_FOK_<OLD> -> Z_FOK_<NEW>.
                    let rel = String(property.dropLast("\u{0}order".count))
                    if let oldName = changes[entity].flatMap({ StoreMigration.oldPropertyNames($0)[rel] }),
                        actual.contains("Z_FOK_" + oldName.uppercased())
                    {
                        let oldColumn = try columns(db, table.name).first { $0.uppercased() == "Z_FOK_" + oldName.uppercased() } ?? ""
                        try db.execute(sql: "ALTER TABLE \(quotedTable) RENAME COLUMN \(SQLiteNames.quote(oldColumn)) TO \(SQLiteNames.quote(spec.name))")
                        actual.remove(oldColumn.uppercased())
                        actual.insert(spec.name.uppercased())
                        continue
                    }
                } else if property.hasPrefix("\u{0}hidden:") || property.hasPrefix("\u{0}hiddenorder:") {
                    // A renamed to-many without inverse: its hidden key Z<n><OLD> (Z_FOK_<n><OLD>) is renamed.
                    let ordered = property.hasPrefix("\u{0}hiddenorder:")
                    let endKey = property.drop { $0 != ":" }.dropFirst()
                    let parts = endKey.split(separator: ".", maxSplits: 1).map(String.init)
                    if parts.count == 2, let oldName = changes[parts[0]].flatMap({ StoreMigration.oldPropertyNames($0)[parts[1]] }) {
                        let prefix = ordered ? "Z_FOK_" : "Z", suffix = oldName.uppercased()
                        let candidates = try columns(db, table.name).filter { column in
                            let upper = column.uppercased()
                            guard upper.hasPrefix(prefix), upper.hasSuffix(suffix), upper.count > prefix.count + suffix.count else { return false }
                            return upper.dropFirst(prefix.count).dropLast(suffix.count).allSatisfy(\.isNumber)
                        }
                        if candidates.count == 1, let oldColumn = candidates.first {
                            try db.execute(sql: "ALTER TABLE \(quotedTable) RENAME COLUMN \(SQLiteNames.quote(oldColumn)) TO \(SQLiteNames.quote(spec.name))")
                            actual.remove(oldColumn.uppercased())
                            actual.insert(spec.name.uppercased())
                            continue
                        }
                    }
                } else if property.hasSuffix("\u{0}entity") {
                    // Real stores number the entity column differently; any Z<n>_<REL> is the same column.
                    let rel = String(property.dropLast("\u{0}entity".count)).uppercased()
                    if actual.contains(where: { $0.hasPrefix("Z") && $0.hasSuffix("_" + rel) && $0.dropFirst().dropLast(rel.count + 1).allSatisfy(\.isNumber) }) {
                        continue
                    }
                } else if let oldName = changes[entity].flatMap({ StoreMigration.oldPropertyNames($0)[property] }) {
                    let oldColumn = SQLiteNames.column(for: oldName)
                    if actual.contains(oldColumn.uppercased()) {
                        try db.execute(sql: "ALTER TABLE \(quotedTable) RENAME COLUMN \(SQLiteNames.quote(oldColumn)) TO \(SQLiteNames.quote(spec.name))")
                        actual.remove(oldColumn.uppercased())
                        actual.insert(spec.name.uppercased())
                        continue
                    }
                }
            }
            var clause = ""
            if let (entityName, property) = owner[spec.name.uppercased()], let entity = new.entity(named: entityName),
                changes[entityName]?.properties.contains(where: { $0.kind == .added && $0.name == property && !$0.isRelationship }) == true,
                let attribute = entity.attribute(named: property), let value = attribute.defaultValue,
                let literal = SQLiteValueCoding.encode(value, as: attribute.type).flatMap(Self.literal),
                tableNumbers.isSubset(of: Set(entity.selfAndDescendantNames.compactMap { numbers[$0] }))
            {
                // O(1) whatever the row count: SQLite reads the default for rows written before the column.
                clause = " DEFAULT " + literal
                defaulted.insert(spec.name.uppercased())
            }
            try db.execute(sql: "ALTER TABLE \(quotedTable) ADD COLUMN \(SQLiteNames.ddl(spec.name)) \(spec.sqlType)\(clause)")
            actual.insert(spec.name.uppercased())
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
            try dropColumn(db, table: table.name, column: column)
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
                    try dropColumn(db, table: table.name, column: column)
                    actual.remove(column)
                }
            }
        }
        return defaulted
    }

    /// A constant as SQL text, for a column `DEFAULT` (DDL takes no bound parameters).
    private static func literal(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .null: return nil
        case .int64(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : nil
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    /// Drops a column and the indexes that use it; where SQLite cannot drop it (a constraint), empties it.
    private func dropColumn(_ db: Database, table: String, column: String) throws {
        let indexes = try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list(?)", arguments: [table])
        for index in indexes {
            let used = try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?)", arguments: [index])
            if used.contains(where: { $0.uppercased() == column }) {
                try db.execute(sql: "DROP INDEX IF EXISTS \(SQLiteNames.quote(index))")
            }
        }
        let real = try columns(db, table).first { $0.uppercased() == column } ?? column
        do {
            try db.execute(sql: "ALTER TABLE \(SQLiteNames.quote(table)) DROP COLUMN \(SQLiteNames.quote(real))")
        } catch {
            try db.execute(sql: "UPDATE \(SQLiteNames.quote(table)) SET \(SQLiteNames.quote(real)) = NULL")
        }
    }

    // MARK: - Data

    /// Writes what the entity's changes need into its rows, in primary-key batches with progress.
    private func fill(
        _ db: Database, entity: EntityDescription, change: EntityChange, table: String, columns: [String: String],
        builder: SQLiteLayoutBuilder, numbers: [String: Int64], defaulted: Set<String>
    ) throws {
        let family = entity.selfAndDescendantNames.compactMap { numbers[$0] }
        guard !family.isEmpty else { return }
        let inFamily = "Z_ENT IN (\(family.map(String.init).joined(separator: ", ")))"
        var updates: [(set: String, condition: String, arguments: [DatabaseValue])] = []
        for p in change.properties {
            if !p.isRelationship, p.kind == .added || p.kind == .becameRequired,
                let attribute = entity.attribute(named: p.name), let value = attribute.defaultValue,
                let column = columns[p.name], !(p.kind == .added && defaulted.contains(column.uppercased()))
            {
                guard let encoded = SQLiteValueCoding.encode(value, as: attribute.type) else {
                    throw StoreError.invalidValue(
                        path: path, configuration: configuration, entity: entity.name, attribute: attribute.name, value: "\(value)",
                        expected: "\(attribute.type.rawValue) (the default value used to migrate existing rows)")
                }
                updates.append(("\(SQLiteNames.quote(column)) = ?", "\(SQLiteNames.quote(column)) IS NULL", [encoded]))
            }
            if p.isRelationship, p.kind == .toManyBecameToOne, let fill = inverseFill(
                entity: entity, relationship: p.name, table: table, columns: columns, builder: builder, numbers: numbers)
            {
                updates.append((fill, "1", []))
            }
        }
        let quoted = SQLiteNames.quote(table)
        guard !updates.isEmpty else {
            if change.properties.contains(where: { $0.kind == .added && columns[$0.name].map { defaulted.contains($0.uppercased()) } == true }) {
                let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quoted) WHERE \(inFamily)") ?? 0
                try progress?(MigrationProgress(path: path, entity: entity.name, done: total, total: total))
            }
            return
        }
        let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quoted) WHERE \(inFamily)") ?? 0
        let bounds = try Row.fetchOne(db, sql: "SELECT MIN(Z_PK), MAX(Z_PK) FROM \(quoted) WHERE \(inFamily)")
        guard total > 0, let low: Int64 = bounds?[0], let high: Int64 = bounds?[1] else {
            try progress?(MigrationProgress(path: path, entity: entity.name, done: 0, total: 0))
            return
        }
        var start = low
        var done = 0
        while start <= high {
            let end = start + Int64(StoreMigration.batchSize)
            for update in updates {
                try db.execute(
                    sql: "UPDATE \(quoted) SET \(update.set) WHERE \(inFamily) AND Z_PK >= ? AND Z_PK < ? AND \(update.condition)",
                    arguments: StatementArguments(update.arguments + [start.databaseValue, end.databaseValue]))
            }
            // The batch's rows, counted through the primary key's range: O(batch), not O(rows so far).
            done += try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM \(quoted) WHERE \(inFamily) AND Z_PK >= ? AND Z_PK < ?", arguments: [start, end]) ?? 0
            try progress?(MigrationProgress(path: path, entity: entity.name, done: min(done, total), total: total))
            start = end
        }
    }

    /// `ZREL = (the destination whose inverse to-one points here)`, for a to-many that became a to-one; nil
    /// when the inverse is not a to-one stored in this store.
    private func inverseFill(
        entity: EntityDescription, relationship name: String, table: String, columns: [String: String],
        builder: SQLiteLayoutBuilder, numbers: [String: Int64]
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
        let t = SQLiteNames.quote(table)
        let select = "SELECT d.Z_PK FROM \(SQLiteNames.quote(destinationTable.name)) AS d WHERE d.\(SQLiteNames.quote(inverseColumn)) = \(t).Z_PK AND d.Z_ENT IN (\(destinationFamily)) ORDER BY d.Z_PK LIMIT 1"
        var set = "\(SQLiteNames.quote(column)) = (\(select))"
        if let entityColumn = columns[name + "\u{0}entity"] {
            set += ", \(SQLiteNames.quote(entityColumn)) = (\(select.replacingOccurrences(of: "SELECT d.Z_PK", with: "SELECT d.Z_ENT")))"
        }
        return set
    }

    // MARK: - Helpers

    private func primaryKeyNumbers(_ db: Database) throws -> [String: Int64] {
        try SQLiteStore.entityNumbers(db)
    }

    /// The table an old root's rows are in after entity renames.
    private func currentTableName(ofOldRoot root: String) -> String {
        if let renamed = report.entities.first(where: { $0.oldName == root && $0.kind == .renamed }) {
            return SQLiteNames.table(for: renamed.name)
        }
        return SQLiteNames.table(for: root)
    }

    private func tableExists(_ db: Database, _ name: String) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [name]) ?? 0 > 0
    }

    private func columns(_ db: Database, _ table: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
    }
}

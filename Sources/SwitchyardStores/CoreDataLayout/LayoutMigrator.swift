import Foundation
import SwitchyardModel
import SwitchyardModelFiles

// MARK: - LayoutMigrator

/// Applies an inferable `CompatibilityReport` to a database in Core Data's SQL layout (SQLite, PostgreSQL),
/// inside the caller's transaction: renames tables and columns, adds columns, fills defaults and to-many ->
/// to-one keys in primary-key batches, deletes removed entities' rows, drops removed columns, creates, renames
/// or drops many-to-many join tables and `Z_FOK_` order columns, creates missing indexes, and records the new
/// model's hashes and model cache. The one place that decides how the layout follows a model change; each store
/// supplies its dialect through `LayoutMigrationDatabase`.
package struct LayoutMigrator: Sendable {
    package let old: ObjectModel
    package let new: ObjectModel
    package let configuration: String
    package let report: CompatibilityReport
    package let path: String
    package let progress: MigrationProgressHandler?
    /// The to-manys whose members' owners move between a hidden key and a to-one inverse (computed once for
    /// every table).
    let inverseMoves: [StoreMigration.InverseMove]

    package init(
        old: ObjectModel, new: ObjectModel, configuration: String, report: CompatibilityReport, path: String,
        progress: MigrationProgressHandler?
    ) {
        self.old = old
        self.new = new
        self.configuration = configuration
        self.report = report
        self.path = path
        self.progress = progress
        self.inverseMoves = StoreMigration.inverseMoves(report: report, old: old, new: new)
    }

    /// Migrates the layout and writes `metadata` (the new model's hashes) and the model cache. The caller
    /// holds the transaction: an error or a crash leaves the old store.
    package func run(_ db: some LayoutMigrationDatabase, metadata: StoreMetadata) throws {
        var numbers = try db.entityNumbers()
        let oldNumbers = numbers
        let changes = Dictionary(report.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let newEntities = (try? new.entities(inConfiguration: configuration)) ?? new.entities

        // Entity renames: Z_PRIMARYKEY names, and the table of a renamed root.
        for change in report.entities where change.kind == .renamed {
            guard let oldName = change.oldName, let number = numbers[oldName] else { continue }
            try db.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_NAME\" = ? WHERE \"Z_ENT\" = ?", [.text(change.name), .integer(number)])
            numbers[oldName] = nil
            numbers[change.name] = number
            if new.entity(named: change.name)?.parentName == nil, try db.tableExists(SQLiteNames.table(for: oldName)) {
                try db.execute("ALTER TABLE \(db.quote(SQLiteNames.table(for: oldName))) RENAME TO \(db.quote(SQLiteNames.table(for: change.name)))")
            }
        }

        // Removed entities: their rows, their Z_PRIMARYKEY row, and a table no entity uses any more.
        let removed = Set(report.entities.filter { $0.kind == .removed }.map(\.name))
        for name in removed.sorted() {
            guard let entity = old.entity(named: name), let number = numbers[name] else { continue }
            let table = currentTableName(ofOldRoot: entity.rootName)
            if try db.tableExists(table) {
                let quoted = db.quote(table)
                let tree = Set([entity.rootName] + (old.entity(named: entity.rootName)?.descendantNames ?? []))
                if tree.isSubset(of: removed) {
                    try db.execute("DROP TABLE \(quoted)")
                } else {
                    let total = Int(try db.integer("SELECT COUNT(*) FROM \(quoted) WHERE \"Z_ENT\" = ?", [.integer(number)]))
                    try db.execute("DELETE FROM \(quoted) WHERE \"Z_ENT\" = ?", [.integer(number)])
                    try progress?(MigrationProgress(path: path, entity: name, done: total, total: total))
                }
            }
            try db.execute("DELETE FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = ?", [.integer(number)])
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
                "INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES (?, ?, ?, 0)",
                [.integer(number), .text(entity.name), .integer(parent)])
            numbers[entity.name] = number
        }

        // Join tables need only the entity numbers, which are final now.
        try alignJoinTables(db, oldNumbers: oldNumbers, numbers: numbers, newEntities: newEntities)

        // Tables and columns, then the data each change needs.
        let builder = SQLiteLayoutBuilder(model: new, numbers: numbers)
        for root in SQLiteSchema.roots(of: newEntities, in: new) {
            let (table, columnsByEntity) = builder.table(root: root)
            guard try db.tableExists(table.name) else {
                try db.createTable(table)
                continue
            }
            let defaulted = try alignColumns(
                db, table: table, columnsByEntity: columnsByEntity, changes: changes, oldNumbers: oldNumbers, numbers: numbers)
            try dropUniqueIndexes(overFilledColumnsOf: table, columnsByEntity: columnsByEntity, changes: changes, in: db)
            for name in table.entityNames {
                guard let entity = new.entity(named: name), let change = changes[name] else { continue }
                try fill(db, entity: entity, change: change, table: table.name, columns: columnsByEntity[name] ?? [:],
                         builder: builder, numbers: numbers, defaulted: defaulted)
            }
            // A constraint new to the table (a model version added it, perhaps over a key the migration just wrote,
            // such as a to-many's new inverse): rows that already break it stop the migration, the store left as
            // it was.
            let existing = Set(try db.indexes(of: table.name).map { $0.name.uppercased() })
            for index in table.indexes {
                if index.isUnique, !existing.contains(index.name.uppercased()),
                    let refusal = try db.duplicateRefusal(for: index, in: table, path: path, configuration: configuration)
                {
                    throw refusal
                }
                try db.createIndexIfMissing(index)
            }
        }

        let plist = try StoreMigration.migratedMetadata(metadata, model: new).binaryPropertyList()
        try db.execute("UPDATE \"Z_METADATA\" SET \"Z_PLIST\" = ?", [.blob(plist)])
        try db.execute("DELETE FROM \"Z_MODELCACHE\"")
        try db.execute("INSERT INTO \"Z_MODELCACHE\" (\"Z_CONTENT\") VALUES (?)", [.blob(try ModelCache.encode(new))])
    }

    // MARK: - Helpers

    /// Drops the table's unique indexes over a column `fill` writes (an added or newly required attribute's
    /// default, a to-many made a to-one): made again after the fill, each is checked for duplicates first (see
    /// `run`), so rows the fill makes equal are refused naming the constraint rather than as the database's own
    /// UNIQUE error.
    private func dropUniqueIndexes(
        overFilledColumnsOf table: SQLiteTableLayout, columnsByEntity: [String: [String: String]], changes: [String: EntityChange],
        in db: some LayoutMigrationDatabase
    ) throws {
        var filled: Set<String> = []
        for name in table.entityNames {
            guard let change = changes[name], let columns = columnsByEntity[name] else { continue }
            for p in change.properties where [.added, .becameRequired, .toManyBecameToOne].contains(p.kind) {
                if let column = columns[p.name] { filled.insert(column.uppercased()) }
            }
        }
        guard !filled.isEmpty else { return }
        let unique = Set(table.indexes.filter(\.isUnique).map { Set($0.terms.map { $0.column.uppercased() }) })
        let ours = Set(table.indexes.map { $0.name.uppercased() })
        for index in try db.indexes(of: table.name) where !index.isConstraint && ours.contains(index.name.uppercased()) {
            let columns = Set(index.columns.map { $0.uppercased() })
            guard unique.contains(columns), !columns.isDisjoint(with: filled) else { continue }
            try db.execute("DROP INDEX \(db.quote(index.name))")
        }
    }

    /// The table an old root's rows are in after entity renames.
    private func currentTableName(ofOldRoot root: String) -> String {
        if let renamed = report.entities.first(where: { $0.oldName == root && $0.kind == .renamed }) {
            return SQLiteNames.table(for: renamed.name)
        }
        return SQLiteNames.table(for: root)
    }

}

import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardStores

// MARK: - Primary keys

extension SQLiteStore {
    /// Reserves `count` keys above the inheritance root's `Z_MAX` and records the new maximum in the same
    /// transaction, so keys are never handed out twice, even after deletes or by another process.
    public func allocatePrimaryKeys(for entityName: String, count: Int) throws -> ClosedRange<Int64> {
        try checkWritable("allocate primary keys")
        let layout = try servedLayout(entityName)
        guard count > 0 else {
            throw StoreError.invalidValue(
                path: displayPath, configuration: configurationName, entity: entityName, attribute: "primary key count", value: String(count),
                expected: "a positive number of keys")
        }
        guard let root = schema.entities[layout.rootName] else {
            throw StoreError.schemaMismatch(
                path: displayPath, configuration: configurationName,
                reason: "Z_PRIMARYKEY has no row for \(layout.rootName), the inheritance root of \(entityName)")
        }
        return try write("allocate primary keys") { db in try advanceMax(of: root.number, named: root.name, by: count, db: db) }
    }

    /// Raises `Z_PRIMARYKEY.Z_MAX` of entity number `number` by `count` inside the caller's write transaction and
    /// returns the keys it reserved: an entity's primary keys, or Core Data's history counters (16001–16003).
    func advanceMax(of number: Int64, named name: String, by count: Int, db: Database) throws -> ClosedRange<Int64> {
        let statement = try db.cachedStatement(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = COALESCE(Z_MAX, 0) + ? WHERE Z_ENT = ? RETURNING Z_MAX")
        guard let max = try Int64.fetchOne(statement, arguments: [Int64(count), number]) else {
            throw StoreError.schemaMismatch(
                path: displayPath, configuration: configurationName, reason: "Z_PRIMARYKEY has no row with Z_ENT = \(number) (\(name))")
        }
        return (max - Int64(count) + 1)...max
    }
}

// MARK: - Save

extension SQLiteStore {
    /// Saves with at most this many inserts encode them all before taking the write lock.
    package static let insertsEncodedFirst = 10_000

    /// An update's statement and arguments, and the columns of uniqueness constraints it writes.
    private struct EncodedUpdate {
        var sql: String
        var arguments: [DatabaseValue]
        var layout: SQLiteEntityLayout
        var constrained: [String]
    }

    /// An insert with its values already encoded, so the write lock is held only for SQLite work.
    private struct EncodedInsert {
        var layoutName: String
        var arguments: [DatabaseValue]
        var row: StoreRow
    }

    /// Applies deletes, then updates, then inserts, then links and orders in one IMMEDIATE transaction (deletes first so a save that
    /// replaces an object by a new one with the same unique values succeeds). Any failure rolls back everything.
    public func save(_ changes: StoreChangeSet) throws {
        try tracer.measure({ _ in "SQLite save: \(changes.traceSummary)" }) { try saveChanges(changes) }
    }

    private func saveChanges(_ changes: StoreChangeSet) throws {
        try checkWritable("save")
        if changes.isEmpty { return }
        // External data files written for this save: removed again if it does not commit.
        var newFiles: [String] = []
        do {
            let released = try saveChanges(changes, newFiles: &newFiles)
            // Files whose values this save replaced or deleted, once nothing refers to them any more.
            externalData.remove(released)
        } catch {
            externalData.remove(newFiles)
            throw error
        }
    }

    /// The save proper; returns the external data files it released.
    private func saveChanges(_ changes: StoreChangeSet, newFiles: inout [String]) throws -> [String] {
        // Inserts are encoded before the write lock is taken, so it is held for SQLite work only — up to a point:
        // a large save is encoded row by row inside the transaction instead, so its memory does not grow by an
        // encoded copy of every row. Rows with external binary data are always encoded first (their files are
        // written and synced then).
        let encodesFirst = changes.inserts.count <= Self.insertsEncodedFirst
            || changes.inserts.contains { (try? servedLayout($0.entityName))?.attributes.contains(where: \.isExternal) ?? true }
        var inserts: [EncodedInsert] = []
        if encodesFirst {
            inserts.reserveCapacity(changes.inserts.count)
            for row in changes.inserts {
                let layout = try servedLayout(row.entityName)
                inserts.append(EncodedInsert(layoutName: layout.name, arguments: try encodeInsert(row, layout: layout, newFiles: &newFiles), row: row))
            }
        }
        // `values` read once per update: a context's update builds the dictionary on each read.
        let updates = try changes.updates.map { update in
            let values = update.values
            return (update, values, try encodeUpdate(update, values: values, newFiles: &newFiles))
        }
        let deletes = try changes.deletes.map { ($0, try servedLayout($0.entityName)) }
        let history = tracksHistory ? StoredHistoryTransaction.recording(changes, model: model) : nil

        return try write("save") { db in
            var released: [String] = []
            for (deletion, layout) in deletes {
                released += try externalFiles(db, layout: layout, primaryKey: deletion.primaryKey, attributes: nil)
                let table = SQLiteNames.quote(schema.table(of: layout).name)
                let statement = try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \"Z_PK\" = ? AND \"Z_OPT\" = ?")
                try statement.execute(arguments: [deletion.primaryKey, deletion.expectedVersion])
                if db.changesCount == 0 {
                    try throwConflict(db, layout: layout, primaryKey: deletion.primaryKey, expected: deletion.expectedVersion)
                }
            }
            // The external data files the updates replace, read before any column is cleared below.
            for (update, values, encoded) in updates where encoded.layout.attributes.contains(where: \.isExternal) {
                released += try externalFiles(db, layout: encoded.layout, primaryKey: update.primaryKey, attributes: Set(values.keys))
            }
            try clearConstrainedColumns(updates, db: db)
            for (update, values, encoded) in updates {
                let statement = try db.cachedStatement(sql: encoded.sql)
                try bind(encoded.arguments, to: statement)
                try execute(
                    statement, layout: encoded.layout, primaryKey: update.primaryKey, values: RowValues(values),
                    toOne: update.toOne.compactMapValues { $0 })
                if db.changesCount == 0 {
                    try throwConflict(db, layout: encoded.layout, primaryKey: update.primaryKey, expected: update.expectedVersion)
                }
            }
            // Inserts usually come grouped by entity: keep the statement of the current entity at hand.
            var current: (name: String, statement: Statement, layout: SQLiteEntityLayout)?
            // The highest key inserted per inheritance root, for keys that did not come from this store's
            // `allocatePrimaryKeys` (a copy, a caller's own numbering): Z_MAX is raised past them below.
            var highest: [String: Int64] = [:]
            var currentHighest: Int64 = .min
            func insert(_ row: StoreRow, layoutName: String, arguments: [DatabaseValue]) throws {
                if current?.name != layoutName {
                    guard let layout = schema.entities[layoutName] else { return }
                    if let previous = current?.layout.rootName { highest[previous] = max(highest[previous] ?? .min, currentHighest) }
                    current = (layoutName, try db.cachedStatement(sql: layout.insertSQL), layout)
                    currentHighest = .min
                }
                guard let (_, statement, layout) = current else { return }
                try bind(arguments, to: statement)
                try execute(statement, layout: layout, primaryKey: row.primaryKey, values: row.values, toOne: row.toOne)
                if row.primaryKey > currentHighest { currentHighest = row.primaryKey }
            }
            if encodesFirst {
                for encoded in inserts { try insert(encoded.row, layoutName: encoded.layoutName, arguments: encoded.arguments) }
            } else {
                for row in changes.inserts {
                    let layout = try servedLayout(row.entityName)
                    try insert(row, layoutName: layout.name, arguments: try encodeInsert(row, layout: layout, newFiles: &newFiles))
                }
            }
            if let last = current?.layout.rootName { highest[last] = max(highest[last] ?? .min, currentHighest) }
            try raiseMax(past: highest, db: db)
            try applyRelationshipChanges(changes, deleted: changes.deletes, db: db)
            if let history {
                try recordHistory(history, db: db)
            } else if try discoverHistory(db) {
                try recordHistory(.recording(changes, model: model), db: db)
            }
            return released
        }
    }

    /// Raises each inheritance root's `Z_MAX` to the highest key this save inserted when that is above it, so
    /// `allocatePrimaryKeys` never hands out a key a row already has (as the LMDB and memory stores keep theirs).
    private func raiseMax(past highest: [String: Int64], db: Database) throws {
        for (root, key) in highest {
            guard let number = schema.entities[root]?.number else { continue }
            let statement = try db.cachedStatement(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND COALESCE(Z_MAX, 0) < ?")
            try statement.execute(arguments: [key, number, key])
        }
    }

    /// The external data files the row's current values of `layout`'s external attributes (those named in
    /// `attributes`, or all) refer to.
    private func externalFiles(_ db: Database, layout: SQLiteEntityLayout, primaryKey: Int64, attributes: Set<String>?) throws -> [String] {
        let columns = layout.attributes.filter { $0.isExternal && (attributes?.contains($0.name) ?? true) }.map(\.column)
        guard !columns.isEmpty else { return [] }
        let sql = "SELECT \(columns.map(SQLiteNames.quote).joined(separator: ", ")) FROM \(SQLiteNames.quote(schema.table(of: layout).name)) WHERE \"Z_PK\" = ?"
        guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [primaryKey]) else { return [] }
        return columns.indices.compactMap { i in
            guard case .blob(let bytes) = (row[i] as DatabaseValue).storage else { return nil }
            return SQLiteExternalData.fileName(bytes)
        }
    }

    func bind(_ values: [DatabaseValue], to statement: Statement) throws {
        if let (index, code) = statement.bindDirectly(values) {
            throw StoreError.sqlite(
                path: displayPath, configuration: configurationName, sql: statement.sql, code: code,
                message: "cannot bind parameter \(index)")
        }
    }

    /// Executes an insert or update, turning SQLite's unique-constraint failure into a violation that names
    /// the entity, the constraint's properties and the offending values.
    private func execute(
        _ statement: Statement, layout: SQLiteEntityLayout, primaryKey: Int64, values: RowValues,
        toOne: [String: RowReference]
    ) throws {
        do {
            try statement.execute()
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw uniquenessViolation(error, layout: layout, values: values, toOne: toOne)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
            // A key inserted twice (not from allocatePrimaryKeys): reported as the memory store reports it.
            throw StoreError.uniquenessViolation(
                path: displayPath, configuration: configurationName, entity: layout.name, properties: ["Z_PK"], values: [String(primaryKey)])
        }
    }

    private func uniquenessViolation(
        _ error: DatabaseError, layout: SQLiteEntityLayout, values: RowValues, toOne: [String: RowReference]
    ) -> StoreError {
        // SQLite says "UNIQUE constraint failed: ZCAR.ZNUMBERPLATE, ZCAR.ZMAKER".
        let message = error.message ?? ""
        let failed = message.split(separator: ":", maxSplits: 1).last.map { list in
            list.split(separator: ",").map { $0.split(separator: ".").last.map(String.init) ?? "" }
                .map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
        } ?? []
        let table = schema.table(of: layout)
        let constraint = table.uniqueConstraints.first { Set($0.columns.map { $0.uppercased() }) == Set(failed) }
        let byColumn = Dictionary(
            layout.attributes.map { ($0.column.uppercased(), $0.name) } + layout.toOnes.map { ($0.column.uppercased(), $0.name) },
            uniquingKeysWith: { a, _ in a })
        let properties = constraint?.properties ?? failed.map { byColumn[$0] ?? $0 }
        let shown = properties.map { name in
            values[name]?.description ?? toOne[name]?.description ?? "nil"
        }
        // Named after the row's entity, as every backend does, even where an ancestor declares the constraint.
        return StoreError.uniquenessViolation(path: displayPath, configuration: configurationName, entity: layout.name, properties: properties, values: shown)
    }

    private func throwConflict(_ db: Database, layout: SQLiteEntityLayout, primaryKey: Int64, expected: Int64) throws -> Never {
        let table = SQLiteNames.quote(schema.table(of: layout).name)
        let actual = try Int64.fetchOne(db, sql: "SELECT \"Z_OPT\" FROM \(table) WHERE \"Z_PK\" = ?", arguments: [primaryKey])
        throw StoreError.conflict(
            path: displayPath, configuration: configurationName,
            objectID: ObjectID(store: identifier, entityName: layout.name, primaryKey: primaryKey),
            entity: layout.name, primaryKey: primaryKey, expectedVersion: expected, actualVersion: actual)
    }

    // MARK: - Encoding

    /// `Z_PK, Z_ENT, Z_OPT`, then every attribute and to-one in the layout's insert order.
    private func encodeInsert(_ row: StoreRow, layout: SQLiteEntityLayout, newFiles: inout [String]) throws -> [DatabaseValue] {
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(3 + layout.attributes.count + 2 * layout.toOnes.count)
        arguments.append(row.primaryKey.databaseValue)
        arguments.append(layout.number.databaseValue)
        arguments.append(row.version.databaseValue)
        var found = 0
        for attribute in layout.attributes {
            guard let value = row.values[attribute.name] else {
                arguments.append(.null)
                continue
            }
            found += 1
            arguments.append(try encode(value, attribute, layout: layout, newFiles: &newFiles))
        }
        if found != row.values.count { try rejectUnknownKeys(row.values.keys, layout: layout) }
        for relationship in layout.toOnes {
            let reference = row.toOne[relationship.name]
            let (key, entity) = try encode(reference, relationship, layout: layout)
            arguments.append(key)
            if relationship.entityColumn != nil { arguments.append(entity) }
        }
        if row.toOne.count > 0, let unknown = row.toOne.keys.first(where: { layout.toOneIndex[$0] == nil }) {
            throw unknownProperty(unknown, layout: layout)
        }
        return arguments
    }

    /// `UPDATE T SET <changed columns>, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?` with its arguments;
    /// columns in sorted order so the same shape of update reuses one cached statement.
    private func encodeUpdate(
        _ update: RowUpdate, values: [String: AttributeValue], newFiles: inout [String]
    ) throws -> EncodedUpdate {
        let layout = try servedLayout(update.entityName)
        var assignments: [(String, DatabaseValue)] = []
        for (name, value) in values {
            guard let index = layout.attributeIndex[name] else {
                if layout.transientNames.contains(name) { continue }
                throw unknownProperty(name, layout: layout)
            }
            let attribute = layout.attributes[index]
            assignments.append((attribute.column, try encode(value, attribute, layout: layout, newFiles: &newFiles)))
        }
        for (name, reference) in update.toOne {
            guard let index = layout.toOneIndex[name] else { throw unknownProperty(name, layout: layout) }
            let relationship = layout.toOnes[index]
            let (key, entity) = try encode(reference, relationship, layout: layout)
            assignments.append((relationship.column, key))
            if let column = relationship.entityColumn { assignments.append((column, entity)) }
        }
        assignments.sort { $0.0 < $1.0 }
        let table = schema.table(of: layout)
        let sets = assignments.map { "\(SQLiteNames.quote($0.0)) = ?" } + ["\"Z_OPT\" = \"Z_OPT\" + 1"]
        let sql = "UPDATE \(SQLiteNames.quote(table.name)) SET \(sets.joined(separator: ", ")) "
            + "WHERE \"Z_PK\" = ? AND \"Z_OPT\" = ?"
        let constrained = table.constrainedColumns(among: assignments.map(\.0))
        return EncodedUpdate(
            sql: sql, arguments: assignments.map(\.1) + [update.primaryKey.databaseValue, update.expectedVersion.databaseValue],
            layout: layout, constrained: constrained)
    }

    /// Sets to NULL the constrained columns the updates write, where `ConstrainedValueHandover` says so: in rows
    /// still at the version each update expects (the update itself finds any other).
    private func clearConstrainedColumns(_ updates: [(RowUpdate, [String: AttributeValue], EncodedUpdate)], db: Database) throws {
        let clear = ConstrainedValueHandover.updatesToClear(updates.map { (schema.table(of: $0.2.layout).name, $0.2.constrained) })
        for index in clear {
            let (update, _, encoded) = updates[index]
            let sets = encoded.constrained.map { "\(SQLiteNames.quote($0)) = NULL" }.joined(separator: ", ")
            let statement = try db.cachedStatement(
                sql: "UPDATE \(SQLiteNames.quote(schema.table(of: encoded.layout).name)) SET \(sets) WHERE \"Z_PK\" = ? AND \"Z_OPT\" = ?")
            try statement.execute(arguments: [update.primaryKey, update.expectedVersion])
        }
    }

    private func encode(
        _ value: AttributeValue, _ attribute: SQLiteAttributeMapping, layout: SQLiteEntityLayout, newFiles: inout [String]
    ) throws -> DatabaseValue {
        if attribute.isExternal, case .binary(let data) = value {
            // Core Data's external storage: a marker, then the value or (large values) a new file's name.
            let (column, file) = try externalData.encode(data)
            if let file { newFiles.append(file) }
            return column.databaseValue
        }
        return SQLiteValueCoding.databaseValue(
            try schema.columnValue(value, attribute, of: layout, path: displayPath, configuration: configurationName))
    }

    /// The foreign key and the destination's `Z_ENT` of a to-one; a reference must name the destination
    /// entity or one of its subentities.
    private func encode(
        _ reference: RowReference?, _ relationship: SQLiteToOneMapping, layout: SQLiteEntityLayout
    ) throws -> (DatabaseValue, DatabaseValue) {
        let (key, entity) = try schema.columnValues(
            reference, relationship, of: layout, model: model, path: displayPath, configuration: configurationName)
        return (SQLiteValueCoding.databaseValue(key), SQLiteValueCoding.databaseValue(entity))
    }

    private func rejectUnknownKeys(_ keys: some Sequence<String>, layout: SQLiteEntityLayout) throws {
        for key in keys where layout.attributeIndex[key] == nil && !layout.transientNames.contains(key) {
            throw unknownProperty(key, layout: layout)
        }
    }

    private func unknownProperty(_ name: String, layout: SQLiteEntityLayout) -> StoreError {
        StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: layout.name, property: name)
    }
}

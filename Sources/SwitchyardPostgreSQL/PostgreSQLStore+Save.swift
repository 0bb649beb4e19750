import Foundation
import PostgresNIO
import SwitchyardModel
import SwitchyardStores

// MARK: - Primary keys

extension PostgreSQLStore {
    /// Reserves `count` keys above the inheritance root's `Z_MAX` with one `UPDATE … RETURNING`, which the server
    /// serializes: two processes never get the same key, and keys are never reused.
    public func allocatePrimaryKeys(for entityName: String, count: Int) throws -> ClosedRange<Int64> {
        try checkWritable("allocate primary keys")
        let layout = try servedLayout(entityName)
        guard count > 0 else {
            throw StoreError.invalidValue(
                path: displayPath, configuration: configurationName, entity: entityName, attribute: "primary key count",
                value: String(count), expected: "a positive number of keys")
        }
        guard let root = schema.entities[layout.rootName] else {
            throw StoreError.schemaMismatch(
                path: displayPath, configuration: configurationName,
                reason: "Z_PRIMARYKEY has no row for \(layout.rootName), the inheritance root of \(entityName)")
        }
        return try pool.withConnection { connection in
            try advanceMax(root.number, named: root.name, by: count, connection)
        }
    }

    /// Reserves `count` numbers of the `Z_PRIMARYKEY` counter `entity` (an entity's keys, or a persistent
    /// history table's) on `connection`, inside its transaction when it has one.
    func advanceMax(_ entity: Int64, named name: String, by count: Int, _ connection: PostgreSQLConnection) throws -> ClosedRange<Int64> {
        guard let row = try connection.query(
            "UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = \"Z_MAX\" + $1 WHERE \"Z_ENT\" = $2 RETURNING \"Z_MAX\"",
            [.integer(Int64(count)), .integer(entity)]
        ).first, let max = try row.makeRandomAccess().integer(0) else {
            throw StoreError.schemaMismatch(
                path: displayPath, configuration: configurationName, reason: "Z_PRIMARYKEY has no row with Z_ENT = \(entity) (\(name))")
        }
        return (max - Int64(count) + 1)...max
    }
}

// MARK: - Save

extension PostgreSQLStore {
    /// The most parameters one multi-row `INSERT` binds (PostgreSQL's limit is 65,535).
    static let parametersPerInsert = 16_000
    /// From this many rows of one entity, a save sends them with `COPY … FROM STDIN` instead of `INSERT`s.
    static let rowsPerCopy = 256

    /// Applies deletes, updates, inserts (many rows of one entity with `COPY`), then links and orders, in one
    /// transaction: all or nothing. An update or
    /// delete whose `expectedVersion` is not the row's `Z_OPT` is `StoreError.conflict`; a broken uniqueness
    /// constraint is `StoreError.uniquenessViolation`.
    public func save(_ changes: StoreChangeSet) throws {
        try checkWritable("save")
        if changes.isEmpty { return }
        try tracer.measure({ _ in "PostgreSQL save: \(changes.traceSummary)" }) { try saveChanges(changes) }
    }

    private func saveChanges(_ changes: StoreChangeSet) throws {
        // Everything is encoded (and checked) before the transaction starts.
        let deletes = try changes.deletes.map { ($0, try servedLayout($0.entityName)) }
        let updates = try changes.updates.map { try encodeUpdate($0) }
        var inserts: [(layout: SQLiteEntityLayout, rows: [[ColumnValue]], source: [StoreRow])] = []
        for row in changes.inserts {
            let layout = try servedLayout(row.entityName)
            let values = try encodeInsert(row, layout: layout)
            if inserts.last?.layout.name == layout.name {
                inserts[inserts.count - 1].rows.append(values)
                inserts[inserts.count - 1].source.append(row)
            } else {
                inserts.append((layout, [values], [row]))
            }
        }
        // The highest key inserted per inheritance root: Z_MAX is raised past keys that did not come from
        // `allocatePrimaryKeys` (a copy, a caller's own numbering), so it never hands them out again.
        var highest: [String: Int64] = [:]
        for group in inserts {
            let top = group.source.lazy.map(\.primaryKey).max() ?? .min
            highest[group.layout.rootName] = max(highest[group.layout.rootName] ?? .min, top)
        }
        let q = PostgreSQLConnection.quote
        try pool.withTransaction { connection in
            for (deletion, layout) in deletes {
                let table = q(schema.table(of: layout).name)
                let deleted = try connection.query(
                    "DELETE FROM \(table) WHERE \"Z_PK\" = $1 AND \"Z_OPT\" = $2 RETURNING \"Z_PK\"",
                    [.integer(deletion.primaryKey), .integer(deletion.expectedVersion)])
                if deleted.isEmpty {
                    try throwConflict(connection, layout: layout, primaryKey: deletion.primaryKey, expected: deletion.expectedVersion)
                }
            }
            // Values of a uniqueness constraint passed between rows in this save (see `ConstrainedValueHandover`).
            for index in ConstrainedValueHandover.updatesToClear(updates.map { ($0.table, $0.constrained) }) {
                let update = updates[index]
                let sets = update.constrained.map { "\(q($0)) = NULL" }.joined(separator: ", ")
                try connection.execute(
                    "UPDATE \(q(update.table)) SET \(sets) WHERE \"Z_PK\" = $1 AND \"Z_OPT\" = $2",
                    [.integer(update.primaryKey), .integer(update.expectedVersion)])
            }
            for update in updates {
                let changed = try uniquely(update.layout, values: update.shown, rows: []) { try connection.query(update.sql, update.parameters) }
                if changed.isEmpty {
                    try throwConflict(connection, layout: update.layout, primaryKey: update.primaryKey, expected: update.expectedVersion)
                }
            }
            for group in inserts {
                let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + group.layout.insertColumns
                try insertRows(group.rows, into: schema.table(of: group.layout).name, columns: columns, connection) { range, send in
                    try uniquely(group.layout, values: nil, rows: Array(group.source[range]), send)
                }
            }
            for (root, key) in highest {
                guard let number = schema.entities[root]?.number else { continue }
                try connection.execute(
                    "UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = $1 WHERE \"Z_ENT\" = $2 AND COALESCE(\"Z_MAX\", 0) < $1",
                    [.integer(key), .integer(number)])
            }
            try applyRelationshipChanges(changes, connection: connection)
            try recordHistory(changes, connection: connection)
        }
    }

    /// Inserts `rows` into `table`: with one `COPY` from `rowsPerCopy` rows (when the names allow it), else
    /// with multi-row `INSERT`s of at most `parametersPerInsert` parameters. `around` wraps each statement,
    /// given the range of `rows` it sends (the save names a broken uniqueness constraint's row with it).
    func insertRows(
        _ rows: [[ColumnValue]], into table: String, columns: [String], _ connection: PostgreSQLConnection,
        around: (Range<Int>, () throws -> Void) throws -> Void = { _, send in try send() }
    ) throws {
        if rows.count >= Self.rowsPerCopy, PostgreSQLConnection.canCopy(table: table, columns: columns) {
            try around(rows.indices) { try connection.copy(into: table, columns: columns, rows: rows) }
            return
        }
        let q = PostgreSQLConnection.quote
        let head = "INSERT INTO \(q(table)) (\(columns.map(q).joined(separator: ", "))) VALUES "
        let perStatement = max(1, Self.parametersPerInsert / columns.count)
        var start = 0
        while start < rows.count {
            let range = start..<min(start + perStatement, rows.count)
            var parameters: [ColumnValue] = []
            parameters.reserveCapacity(range.count * columns.count)
            var tuples: [String] = []
            for values in rows[range] {
                let first = parameters.count
                parameters += values
                tuples.append("(" + (1...values.count).map { "$\(first + $0)" }.joined(separator: ", ") + ")")
            }
            try around(range) { try connection.execute(head + tuples.joined(separator: ", "), parameters) }
            start = range.upperBound
        }
    }

    /// An encoded `UPDATE … SET …, "Z_OPT" = "Z_OPT" + 1 WHERE "Z_PK" = $n AND "Z_OPT" = $m RETURNING "Z_PK"`.
    struct EncodedUpdate {
        var layout: SQLiteEntityLayout
        var sql: String
        var parameters: [ColumnValue]
        var primaryKey: Int64
        var expectedVersion: Int64
        /// The update's values as a violation message shows them.
        var shown: [String: String]
        /// The table, and the columns of its uniqueness constraints the update writes.
        var table: String
        var constrained: [String]
    }

    private func encodeUpdate(_ update: RowUpdate) throws -> EncodedUpdate {
        let layout = try servedLayout(update.entityName)
        var assignments: [(String, ColumnValue)] = []
        var shown: [String: String] = [:]
        for (name, value) in update.values {
            guard let index = layout.attributeIndex[name] else {
                if layout.transientNames.contains(name) { continue }
                throw unknownProperty(name, layout: layout)
            }
            assignments.append((layout.attributes[index].column, try encode(value, layout.attributes[index], layout: layout)))
            shown[name] = value.description
        }
        for (name, reference) in update.toOne {
            guard let index = layout.toOneIndex[name] else { throw unknownProperty(name, layout: layout) }
            let relationship = layout.toOnes[index]
            let (key, entity) = try encode(reference, relationship, layout: layout)
            assignments.append((relationship.column, key))
            if let column = relationship.entityColumn { assignments.append((column, entity)) }
            shown[name] = reference?.description ?? "nil"
        }
        assignments.sort { $0.0 < $1.0 }
        let q = PostgreSQLConnection.quote
        let sets = assignments.enumerated().map { "\(q($1.0)) = $\($0 + 1)" } + ["\"Z_OPT\" = \"Z_OPT\" + 1"]
        let n = assignments.count
        let table = schema.table(of: layout)
        let sql = "UPDATE \(q(table.name)) SET \(sets.joined(separator: ", ")) "
            + "WHERE \"Z_PK\" = $\(n + 1) AND \"Z_OPT\" = $\(n + 2) RETURNING \"Z_PK\""
        return EncodedUpdate(
            layout: layout, sql: sql,
            parameters: assignments.map(\.1) + [.integer(update.primaryKey), .integer(update.expectedVersion)],
            primaryKey: update.primaryKey, expectedVersion: update.expectedVersion, shown: shown,
            table: table.name, constrained: table.constrainedColumns(among: assignments.map(\.0)))
    }

    /// `Z_PK, Z_ENT, Z_OPT`, then every attribute and to-one in the layout's insert order.
    private func encodeInsert(_ row: StoreRow, layout: SQLiteEntityLayout) throws -> [ColumnValue] {
        var values: [ColumnValue] = [.integer(row.primaryKey), .integer(layout.number), .integer(row.version)]
        values.reserveCapacity(3 + layout.attributes.count + 2 * layout.toOnes.count)
        var found = 0
        for attribute in layout.attributes {
            guard let value = row.values[attribute.name] else {
                values.append(.null)
                continue
            }
            found += 1
            values.append(try encode(value, attribute, layout: layout))
        }
        if found != row.values.count {
            for key in row.values.keys where layout.attributeIndex[key] == nil && !layout.transientNames.contains(key) {
                throw unknownProperty(key, layout: layout)
            }
        }
        for relationship in layout.toOnes {
            let (key, entity) = try encode(row.toOne[relationship.name], relationship, layout: layout)
            values.append(key)
            if relationship.entityColumn != nil { values.append(entity) }
        }
        if let unknown = row.toOne.keys.first(where: { layout.toOneIndex[$0] == nil }) { throw unknownProperty(unknown, layout: layout) }
        return values
    }

    private func encode(_ value: AttributeValue, _ attribute: SQLiteAttributeMapping, layout: SQLiteEntityLayout) throws -> ColumnValue {
        try schema.columnValue(value, attribute, of: layout, path: displayPath, configuration: configurationName)
    }

    private func encode(
        _ reference: RowReference?, _ relationship: SQLiteToOneMapping, layout: SQLiteEntityLayout
    ) throws -> (ColumnValue, ColumnValue) {
        try schema.columnValues(reference, relationship, of: layout, model: model, path: displayPath, configuration: configurationName)
    }

    private static func shown(_ row: StoreRow) -> [String: String] {
        var shown: [String: String] = [:]
        for name in row.values.keys { shown[name] = row[name].description }
        for (name, reference) in row.toOne { shown[name] = reference.description }
        return shown
    }

    /// Runs `body`, turning the server's unique violation (SQLSTATE 23505) into `StoreError.uniquenessViolation`
    /// naming the entity and the constraint's properties, with the values the statement wrote (`values`) or, for
    /// a multi-row insert, those of the row among `rows` whose values the server reports.
    @discardableResult
    private func uniquely<T>(_ layout: SQLiteEntityLayout, values: [String: String]?, rows: [StoreRow], _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            guard case let .postgreSQL(_, _, _, code, message) = error, code == "23505" else { throw error }
            // The server's detail: Key ("ZA", "ZB")=(x, y) already exists.
            var reported: [String] = []
            if let range = message.range(of: ")=("), let end = message.range(of: ") already exists", range: range.upperBound..<message.endIndex) {
                reported = message[range.upperBound..<end.lowerBound].components(separatedBy: ", ")
            }
            let constraint = uniqueIndexes.first { name, _ in message.contains("\"\(name)\"") }?.value
            guard let constraint, constraint.columns.isEmpty == false else {
                // The primary key: a key inserted twice (not from allocatePrimaryKeys), as the other stores report it.
                throw StoreError.uniquenessViolation(
                    path: displayPath, configuration: configurationName, entity: layout.name, properties: ["Z_PK"],
                    values: reported.isEmpty ? ["?"] : reported)
            }
            // The row the server reports: its constraint values as the server prints them.
            func printed(_ row: StoreRow, _ name: String) -> String {
                switch row[name] {
                case .string(let s): return s
                case .integer(let i): return String(i)
                case .bool(let b): return b ? "1" : "0"
                default: return row.toOne[name].map { String($0.primaryKey) } ?? row[name].description
                }
            }
            let values = values ?? rows.first { row in constraint.properties.map { printed(row, $0) } == reported }.map(Self.shown)
            let shown = constraint.properties.enumerated().map { i, name in
                values?[name] ?? (i < reported.count ? reported[i] : "nil")
            }
            throw StoreError.uniquenessViolation(
                path: displayPath, configuration: configurationName, entity: layout.name, properties: constraint.properties, values: shown)
        }
    }

    private func throwConflict(_ connection: PostgreSQLConnection, layout: SQLiteEntityLayout, primaryKey: Int64, expected: Int64) throws -> Never {
        let table = PostgreSQLConnection.quote(schema.table(of: layout).name)
        let actual = try connection.query("SELECT \"Z_OPT\" FROM \(table) WHERE \"Z_PK\" = $1", [.integer(primaryKey)]).first
            .flatMap { try $0.makeRandomAccess().integer(0) }
        throw StoreError.conflict(
            path: displayPath, configuration: configurationName,
            objectID: ObjectID(store: identifier, entityName: layout.name, primaryKey: primaryKey),
            entity: layout.name, primaryKey: primaryKey, expectedVersion: expected, actualVersion: actual)
    }

    func unknownProperty(_ name: String, layout: SQLiteEntityLayout) -> StoreError {
        StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: layout.name, property: name)
    }
}

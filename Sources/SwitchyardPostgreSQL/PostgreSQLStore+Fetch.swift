import Foundation
import PostgresNIO
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - Fetch

extension PostgreSQLStore {
    /// The rows matching `request`, in its order.
    ///
    /// The server narrows the rows with what `PostgreSQLPushdown` can say in SQL (comparisons of an attribute
    /// with constants); the predicate evaluator, the same one the memory and LMDB stores use, then decides on
    /// every row, so a predicate means the same on every backend. Key paths across relationships are followed
    /// inside the fetch's one read-only snapshot. When the SQL says all of the predicate and no sort is asked,
    /// the server also applies the limit and offset.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try tracer.measure({ "PostgreSQL fetch \(tracer.describe(request)): \($0.count) rows" }) { try fetchRows(request) }
    }

    private func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let request = try request.prepared(forStore: identifier, model: model)
        let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        let filter = PostgreSQLPushdown.compile(request.predicate, layout: layout)
        let serverPages = filter.isExact && request.sortKeys.isEmpty
        // One statement is its own snapshot; the evaluator may read related rows, so it gets a transaction.
        let needsSnapshot = !serverPages && (!filter.isExact || request.sortKeys.contains { $0.key.contains(".") })
        return try pool.withConnection(transaction: needsSnapshot) { connection in
            var rows = try selectRows(
                connection, layout: layout, includesSubentities: request.includesSubentities, filter: filter,
                limit: serverPages ? request.fetchLimit : nil, offset: serverPages ? request.fetchOffset : 0)
            if serverPages { return rows }
            let lookup = RelatedRows(store: self, connection: connection)
            if let predicate = request.predicate, !filter.isExact {
                let prepared = PredicateEvaluator.Prepared(predicate)
                rows = try rows.filter { try PredicateEvaluator.evaluate(prepared, on: lookup.subject($0)) }
            }
            return try rows.ordered(for: request, subject: lookup.subject)
        }
    }

    /// The number of rows `fetch(_:)` would return without limit and offset: counted by the server when the SQL
    /// says the whole predicate.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        try tracer.measure({ "PostgreSQL count \(tracer.describe(request)): \($0)" }) { try countRows(request) }
    }

    private func countRows(_ request: StoreFetchRequest) throws -> Int {
        let request = try request.prepared(forStore: identifier, model: model)
        let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        let filter = PostgreSQLPushdown.compile(request.predicate, layout: layout)
        if filter.isExact {
            return try pool.withConnection { connection in
                let (condition, parameters) = whereClause(layout, includesSubentities: request.includesSubentities, filter: filter)
                let table = PostgreSQLConnection.quote(schema.table(of: layout).name)
                guard let row = try connection.query("SELECT count(*) FROM \(table) AS t0\(condition)", parameters).first else { return 0 }
                return Int(try row.makeRandomAccess().integer(0) ?? 0)
            }
        }
        var unbounded = request
        (unbounded.fetchLimit, unbounded.fetchOffset, unbounded.sortKeys) = (nil, 0, [])
        return try fetchRows(unbounded).count
    }

    /// The rows with these references (missing ones left out), read in batches of 1,000 keys per table.
    public func rows(for references: [RowReference]) throws -> [StoreRow] {
        try pool.withConnection { connection in try rows(for: references, connection: connection) }
    }

    func rows(for references: [RowReference], connection: PostgreSQLConnection) throws -> [StoreRow] {
        var byRoot: [String: [RowReference]] = [:]
        for reference in references {
            guard let layout = schema.entities[reference.entityName] else { continue }
            byRoot[layout.rootName, default: []].append(reference)
        }
        var found: [StoreRow] = []
        for (root, wanted) in byRoot.sorted(by: { $0.key < $1.key }) {
            guard let layout = schema.entities[root] ?? wanted.first.flatMap({ schema.entities[$0.entityName] }) else { continue }
            let keys = Array(Set(wanted.map(\.primaryKey))).sorted()
            let wantedSet = Set(wanted)
            var start = 0
            while start < keys.count {
                let chunk = Array(keys[start..<min(start + 1000, keys.count)])
                start += chunk.count
                let rows = try selectRows(
                    connection, layout: layout, includesSubentities: true, anyOf: chunk)
                found += rows.filter { wantedSet.contains($0.reference) }
            }
        }
        return found
    }

    // MARK: - To-many members

    /// Members of a to-many relationship for a batch of sources: one SELECT per 1,000 sources, through the join
    /// table for a many-to-many, through the members' foreign key otherwise, in the relationship's order.
    public func relatedReferences(of sources: [RowReference], relationship: String) throws -> [RowReference: [RowReference]] {
        try pool.withConnection { connection in try relatedReferences(of: sources, relationship: relationship, connection: connection) }
    }

    func relatedReferences(
        of sources: [RowReference], relationship: String, connection: PostgreSQLConnection
    ) throws -> [RowReference: [RowReference]] {
        guard let first = sources.first else { return [:] }
        let end = try toManyEnd(relationship, of: first.entityName)
        guard let destination = schema.entities[end.relationship.destinationEntityName] else {
            throw StoreError.entityNotInStore(
                path: displayPath, configuration: configurationName, entity: end.relationship.destinationEntityName)
        }
        guard schema.membersSQL(of: end, destination: destination, model: model, placeholders: ["$1"]) != nil else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: first.entityName, property: relationship)
        }
        var bySource: [Int64: [RowReference]] = [:]
        let keys = Array(Set(sources.map(\.primaryKey))).sorted()
        var start = 0
        while start < keys.count {
            let chunk = Array(keys[start..<min(start + 1000, keys.count)])
            start += chunk.count
            guard let sql = schema.membersSQL(of: end, destination: destination, model: model, placeholders: chunk.indices.map { "$\($0 + 1)" })
            else { break }
            for row in try connection.query(sql, chunk.map { .integer($0) }) {
                let cells = row.makeRandomAccess()
                guard let owner = try cells.integer(0), let pk = try cells.integer(1), let number = try cells.integer(2),
                    let name = schema.entityNamesByNumber[number]
                else { continue }
                bySource[owner, default: []].append(RowReference(entityName: name, primaryKey: pk))
            }
        }
        var result: [RowReference: [RowReference]] = [:]
        for source in sources { result[source] = bySource[source.primaryKey] ?? [] }
        return result
    }

    /// The declaring end of persistent to-many `relationship` of `entityName`, or `StoreError.unknownProperty`.
    func toManyEnd(_ relationship: String, of entityName: String) throws -> RelationshipEnd {
        guard let end = model.end(of: relationship, from: entityName), end.relationship.isToMany, !end.relationship.isTransient else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: entityName, property: relationship)
        }
        return end
    }

    // MARK: - Reading rows

    /// `WHERE` with the entity filter and the pushed-down predicate, and its parameters.
    private func whereClause(
        _ layout: SQLiteEntityLayout, includesSubentities: Bool, filter: PostgreSQLPushdown.Filter
    ) -> (String, [ColumnValue]) {
        let wanted = includesSubentities ? layout.familyNumbers : [layout.number]
        var conditions: [String] = []
        if !(schema.tableEntityNumbers[layout.table] ?? []).allSatisfy(wanted.contains) {
            conditions.append("t0.\"Z_ENT\" IN (\(wanted.sorted().map(String.init).joined(separator: ", ")))")
        }
        if let sql = filter.sql { conditions.append(sql) }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), filter.parameters)
    }

    /// Rows of `layout`'s table (its entity, and subentities when asked) that pass `filter`, or whose keys are
    /// among `anyOf`, in primary-key order.
    func selectRows(
        _ connection: PostgreSQLConnection, layout: SQLiteEntityLayout, includesSubentities: Bool,
        filter: PostgreSQLPushdown.Filter = .all, anyOf keys: [Int64]? = nil, limit: Int? = nil, offset: Int = 0
    ) throws -> [StoreRow] {
        guard let projection = (includesSubentities ? schema.projections : schema.exactProjections)[layout.name] else { return [] }
        var (condition, parameters) = whereClause(layout, includesSubentities: includesSubentities, filter: filter)
        if let keys {
            let list = keys.indices.map { "$\(parameters.count + $0 + 1)" }.joined(separator: ", ")
            condition += (condition.isEmpty ? " WHERE " : " AND ") + "t0.\"Z_PK\" IN (\(list))"
            parameters += keys.map { .integer($0) }
        }
        var sql = "SELECT \(projection.selectList) FROM \(PostgreSQLConnection.quote(schema.table(of: layout).name)) AS t0\(condition) ORDER BY t0.\"Z_PK\""
        if let limit { sql += " LIMIT \(limit)" }
        if offset > 0 { sql += " OFFSET \(offset)" }
        let names = schema.entityNamesByNumber
        return try connection.query(sql, parameters).compactMap { row in
            let cells = row.makeRandomAccess()
            guard let number = try cells.integer(1), let reader = projection.readers[number], let pk = try cells.integer(0) else { return nil }
            let version = try cells.integer(2) ?? 0
            var slots: [AttributeValue] = []
            slots.reserveCapacity(reader.attributes.count)
            for attribute in reader.attributes {
                slots.append(try cells.columnValue(Int(attribute.column)).decode(as: attribute.type))
            }
            var toOne: [String: RowReference] = [:]
            for relationship in reader.toOnes {
                guard let key = try cells.integer(Int(relationship.column)) else { continue }
                var destination = relationship.destination
                if let column = relationship.entityColumn, let number = try cells.integer(Int(column)), let name = names[number] {
                    destination = name
                }
                toOne[relationship.name] = RowReference(entityName: destination, primaryKey: key)
            }
            return StoreRow(
                entityName: reader.entityName, primaryKey: pk, version: version,
                values: RowValues(layout: reader.rowLayout, slots: slots), toOne: toOne)
        }
    }
}

// MARK: - RelatedRows

/// Rows a predicate or sort reaches through relationships during one fetch, read on the fetch's connection (one
/// snapshot) and kept for the rest of the fetch.
final class RelatedRows {
    let store: PostgreSQLStore
    let connection: PostgreSQLConnection
    private var rows: [RowReference: StoreRow?] = [:]
    private var members: [String: [RowReference: [RowReference]]] = [:]

    init(store: PostgreSQLStore, connection: PostgreSQLConnection) {
        self.store = store
        self.connection = connection
    }

    /// `row` as the predicate evaluator sees it.
    func subject(_ row: StoreRow) -> PostgreSQLRowSubject {
        PostgreSQLRowSubject(row: row, lookup: self)
    }

    /// The rows at the other end of `relationship` from `row`.
    func related(_ row: StoreRow, _ relationship: RelationshipDescription) throws -> [StoreRow] {
        if !relationship.isToMany {
            guard let reference = row.toOne[relationship.name] else { return [] }
            return try self.rows([reference])
        }
        let key = row.entityName + "." + relationship.name
        if members[key]?[row.reference] == nil {
            let found = try store.relatedReferences(of: [row.reference], relationship: relationship.name, connection: connection)
            members[key, default: [:]][row.reference] = found[row.reference] ?? []
        }
        return try rows(members[key]?[row.reference] ?? [])
    }

    private func rows(_ references: [RowReference]) throws -> [StoreRow] {
        let missing = references.filter { rows[$0] == nil }
        if !missing.isEmpty {
            let found = try store.rows(for: missing, connection: connection)
            for reference in missing { rows[reference] = .some(nil) }
            for row in found { rows[row.reference] = .some(row) }
        }
        return references.compactMap { rows[$0] ?? nil }
    }
}

/// A PostgreSQL row seen by the predicate evaluator: attributes from the row, relationships through `RelatedRows`.
struct PostgreSQLRowSubject: PredicateSubject {
    let row: StoreRow
    let lookup: RelatedRows

    func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        let model = lookup.store.model
        return try RowKeyPathWalk(
            isPersistentAttribute: { entity, key in
                guard let e = model.entity(named: entity) else { return nil }
                return e.attribute(named: key).map { !$0.isTransient } ?? false
            },
            relationship: { entity, key in model.entity(named: entity)?.relationship(named: key) },
            related: { item, relationship in try lookup.related(item, relationship) }
        ).values(at: keyPath, from: row)
    }
}

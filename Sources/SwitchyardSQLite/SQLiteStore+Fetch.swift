import Foundation
internal import GRDB
import SwitchyardStores

// MARK: - Fetch

extension SQLiteStore {
    /// The compiler over this store's schema.
    package var compiler: SQLPredicateCompiler {
        SQLPredicateCompiler(schema: schema, model: model, path: displayPath, configurationName: configurationName)
    }

    /// The SELECT `fetch` would run for `request` (with the file's indexes at hand), for tests to look at.
    /// Only its text crosses the module: a compiled fragment holds GRDB's values, which this module imports
    /// internally.
    package func selectSQL(_ request: StoreFetchRequest) throws -> String {
        let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        let request = try request.prepared(forStore: identifier, model: model)
        let projection = try self.projection(of: layout, request)
        var compiler = self.compiler
        compiler.leadingIndexes = try leadingIndexes()
        return try compiler.select(request, projection: projection).fragment.sql
    }

    /// The columns a fetch of `layout`'s table reads for `request`: its own entity's, or its subentities' too.
    private func projection(of layout: SQLiteEntityLayout, _ request: StoreFetchRequest) throws -> SQLiteProjection {
        guard let projection = request.includesSubentities
            ? schema.projections[layout.name] : schema.exactProjections[layout.name]
        else { throw StoreError.entityNotInStore(path: displayPath, configuration: configurationName, entity: layout.name) }
        return projection
    }

    /// Rows of the request's entity (and subentities unless excluded) matching its predicate, sorted, with
    /// offset and limit applied: one SELECT with bound parameters.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try tracer.measure({ "SQLite fetch \(tracer.describe(request)): \($0.count) rows" }) { try fetchRows(request) }
    }

    /// The rows of `fetch`, each handed to `body` as it is decoded, inside the read.
    public func fetch(_ request: StoreFetchRequest, each body: (consuming StoreRow) throws -> Void) throws {
        // The trace line times the read, not what the caller does with each row.
        var callerNanos: UInt64 = 0
        _ = try tracer.measure({ (count: Int) in "SQLite fetch \(tracer.describe(request)): \(count) rows" }, excluding: { callerNanos }) {
            var count = 0
            // The caller's own error comes out as it is, not as a store error about the read.
            var failure: Error?
            do {
                try fetchRows(request) { row in
                    count += 1
                    do { try tracer.handOver(row, to: body, callerNanos: &callerNanos) } catch {
                        failure = error
                        throw error
                    }
                }
            } catch {
                throw failure ?? error
            }
            return count
        }
    }

    private func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try fetchRows(request) { rows.append($0) }
        return rows
    }

    private func fetchRows(_ request: StoreFetchRequest, _ body: (consuming StoreRow) throws -> Void) throws {
        let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        let request = try request.prepared(forStore: identifier, model: model)
        let projection = try self.projection(of: layout, request)
        var delivered = false
        try withStatement(compiling: { try $0.select(request, projection: projection) }, retryable: { !delivered }) { statement, compiled in
            var decoder = SQLiteRowDecoder(projection: projection, entityNames: schema.entityNamesByNumber, externalData: externalData)
            guard compiled.sortsRowsByPrimaryKey else {
                try decoder.forEachRow(of: statement, arguments: compiled.fragment.arguments) { row in
                    delivered = true
                    try body(row)
                }
                return
            }
            // Read whole, then handed over by primary key (the order ORDER BY Z_PK gives), each moved out.
            var rows: [StoreRow] = []
            try decoder.forEachRow(of: statement, arguments: compiled.fragment.arguments) { rows.append($0) }
            rows.sort { $0.primaryKey > $1.primaryKey }
            delivered = true
            while let row = rows.popLast() { try body(consume row) }
        }
    }

    /// The references of the rows `fetch(_:each:)` hands over, in its order: the same SELECT reading only
    /// `Z_PK` and `Z_ENT`, so no value is decoded.
    public func fetchReferences(_ request: StoreFetchRequest, each body: (RowReference) throws -> Void) throws {
        var callerNanos: UInt64 = 0
        _ = try tracer.measure({ (count: Int) in "SQLite fetch references \(tracer.describe(request)): \(count) rows" }, excluding: { callerNanos }) {
            let layout = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
            let request = try request.prepared(forStore: identifier, model: model)
            let projection = try self.projection(of: layout, request)
            var count = 0
            var failure: Error?
            do {
                try withStatement(compiling: { try $0.selectReferences(request) }, retryable: { count == 0 }) { statement, compiled in
                    let query = compiled.fragment
                    if let (index, code) = statement.bindDirectly(query.arguments) {
                        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind parameter \(index)", sql: query.sql)
                    }
                    let sqlite = statement.sqliteStatement
                    let cursor = try Row.fetchCursor(statement)
                    var current: (number: Int64, name: String)?
                    while try cursor.next() != nil {
                        // As `SQLiteRowDecoder` reads a row: an entity number the projection lacks is skipped.
                        let number = Int64(sqliteStatement: sqlite, index: 1)
                        if current?.number != number {
                            guard projection.readers[number] != nil, let name = schema.entityNamesByNumber[number] else { continue }
                            current = (number, name)
                        }
                        guard let name = current?.name else { continue }
                        count += 1
                        let reference = RowReference(entityName: name, primaryKey: Int64(sqliteStatement: sqlite, index: 0))
                        do { try tracer.handOver(reference, to: body, callerNanos: &callerNanos) } catch {
                            failure = error
                            throw error
                        }
                    }
                }
            } catch {
                throw failure ?? error
            }
            return count
        }
    }

    /// The number of rows `fetch` would return without limit and offset.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        try tracer.measure({ "SQLite count \(tracer.describe(request)): \($0)" }) { try countRows(request) }
    }

    private func countRows(_ request: StoreFetchRequest) throws -> Int {
        _ = try servedLayout(request.entityName, forSubentities: request.includesSubentities)
        let request = try request.prepared(forStore: identifier, model: model)
        var unlimited = request
        unlimited.fetchLimit = nil
        unlimited.fetchOffset = 0
        unlimited.sortKeys = []
        return try withStatement(compiling: { try $0.count(unlimited) }, retryable: { true }) { statement, compiled in
            let query = compiled.fragment
            if let (index, code) = statement.bindDirectly(query.arguments) {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind parameter \(index)", sql: query.sql)
            }
            return try Int.fetchOne(statement) ?? 0
        }
    }

    /// The rows with these references, each read as its entity or a subentity of it; missing ones are left out.
    public func rows(for references: [RowReference]) throws -> [StoreRow] {
        var keysByEntity: [String: [Int64]] = [:]
        for reference in references {
            _ = try servedLayout(reference.entityName)
            keysByEntity[reference.entityName, default: []].append(reference.primaryKey)
        }
        return try read { db in
            var result: [StoreRow] = []
            for (entityName, keys) in keysByEntity.sorted(by: { $0.key < $1.key }) {
                guard let layout = schema.entities[entityName], let projection = schema.projections[entityName] else { continue }
                let table = SQLiteNames.quote(schema.table(of: layout).name)
                // Chunks keep the statement under SQLite's parameter limit; a full chunk reuses its cached statement.
                var start = 0
                let unique = Array(Set(keys)).sorted()
                while start < unique.count {
                    let chunk = Array(unique[start..<min(start + 500, unique.count)])
                    start += chunk.count
                    let sql = "SELECT \(projection.selectList) FROM \(table) AS t0 WHERE t0.\"Z_PK\" IN ("
                        + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
                    let statement = try db.cachedStatement(sql: sql)
                    result += try decodeRows(statement, arguments: chunk.map(\.databaseValue), projection: projection)
                }
            }
            return result
        }
    }

    /// Runs `body` in a read with the statement `make` compiles, given the file's indexes (read on first use) so
    /// that a long `IN` list on an indexed column drives the query (`SQLPredicateCompiler.drivingList`). Should
    /// SQLite refuse the index the statement names ("no such index": another connection dropped it; "no query
    /// solution") — when preparing the statement, or when a cached statement is prepared again at its first step
    /// after the schema changed — the index is forgotten and the query compiled again without it, provided
    /// `retryable()` (nothing was handed to the caller yet).
    private func withStatement<T>(
        compiling make: (SQLPredicateCompiler) throws -> SQLQuery, retryable: () -> Bool,
        _ body: (Statement, SQLQuery) throws -> T
    ) throws -> T {
        var compiler = self.compiler
        compiler.leadingIndexes = try leadingIndexes()
        while true {
            let compiled = try make(compiler), query = compiled.fragment
            var refused = false
            let result: T? = try read { db in
                do {
                    return try body(try self.statement(for: query, in: db), compiled)
                } catch let error as DatabaseError where compiled.drivingIndex != nil && SQLiteLeadingIndexes.isRefusal(error) && retryable() {
                    refused = true
                    return nil
                }
            }
            guard refused, let index = compiled.drivingIndex else { return result! }
            state.forget(index)
            compiler.leadingIndexes.forget(index)
        }
    }

    /// The file's indexes (see `SQLiteLeadingIndexes`), read once per store. An SQLite without the table-valued
    /// pragma functions (`SQLITE_OMIT_INTROSPECTION_PRAGMAS`) offers none: every list stays an `IN`, as before.
    private func leadingIndexes() throws -> SQLiteLeadingIndexes {
        if let known = state.leadingIndexes { return known }
        let indexes: SQLiteLeadingIndexes
        do {
            indexes = try read { db in try SQLiteLeadingIndexes.read(db, tables: schema.tables.map(\.name)) }
        } catch let error as StoreError {
            // SQLITE_ERROR: no such function. Anything else (I/O, a busy file) is the store's problem to report.
            guard case .sqlite(_, _, _, let code, _) = error, code & 0xFF == 1 else { throw error }
            indexes = SQLiteLeadingIndexes()
        }
        state.leadingIndexes = indexes
        return indexes
    }

    /// The prepared statement of a compiled query: from the connection's cache, unless the query binds more
    /// than `cachedArgumentLimit` values or a list as one JSON text over 4 KB. The first are long `IN` lists,
    /// whose text differs with every list length; GRDB's cache is never trimmed, so each would stay prepared for
    /// the connection's life. The second would keep its last arguments (SQLite's copy of the list, possibly
    /// megabytes) until it runs again.
    private func statement(for query: SQLFragment, in db: Database) throws -> Statement {
        let cacheable = query.arguments.count <= Self.cachedArgumentLimit && !query.bindsLongJSONList
        return cacheable ? try db.cachedStatement(sql: query.sql) : try db.makeStatement(sql: query.sql)
    }

    /// The most values a cached statement binds (see `statement(for:in:)`).
    private static var cachedArgumentLimit: Int { 64 }

    // MARK: - Decoding

    private func decodeRows(
        _ statement: Statement, arguments: [DatabaseValue], projection: SQLiteProjection
    ) throws -> [StoreRow] {
        var decoder = SQLiteRowDecoder(projection: projection, entityNames: schema.entityNamesByNumber, externalData: externalData)
        return try decoder.rows(of: statement, arguments: arguments)
    }
}

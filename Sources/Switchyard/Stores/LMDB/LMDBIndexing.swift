import Foundation

// MARK: - LMDBIndexing

/// Keeping the `index:` databases in step with `rows`, and reading them. An entry exists for every row of the
/// table whose first indexed property is not null (lookups never search for null: `x == nil` is a scan).
enum LMDBIndexing {
    /// The value an index (and a uniqueness constraint) sees for `property`: the attribute, or a to-one's
    /// primary key, as the predicate evaluator reads them.
    static func value(of property: String, in row: StoreRow) -> AttributeValue {
        if let value = row.values[property] { return value }
        if let target = row.toOne[property] { return .integer(target.primaryKey) }
        return .null
    }

    /// The entry key of `row` in `definition`, or `nil` when its first property is null.
    static func entry(of row: StoreRow, in definition: LMDBIndexDefinition) -> [UInt8]? {
        let values = definition.properties.map { value(of: $0, in: row) }
        guard let first = values.first, !first.isNull else { return nil }
        return LMDBIndexKey.entry(values, primaryKey: row.primaryKey)
    }

    // MARK: - Writing

    /// Adds `row`'s entry to one index.
    static func add(_ row: StoreRow, definition: LMDBIndexDefinition, database: LMDBDatabase, txn: LMDBTransaction) throws {
        guard let key = entry(of: row, in: definition) else { return }
        try txn.put(database, key, [])
    }

    /// Adds `row` to every index of its table.
    static func add(_ row: StoreRow, root: String, schema: LMDBSchema, databases: LMDBStoreDatabases, txn: LMDBTransaction) throws {
        for definition in schema.indexes[root] ?? [] {
            guard let database = databases.indexes[definition] else { continue }
            try add(row, definition: definition, database: database, txn: txn)
        }
    }

    /// Removes `row` from every index of its table.
    static func remove(_ row: StoreRow, root: String, schema: LMDBSchema, databases: LMDBStoreDatabases, txn: LMDBTransaction) throws {
        for definition in schema.indexes[root] ?? [] {
            guard let database = databases.indexes[definition], let key = entry(of: row, in: definition) else { continue }
            try txn.delete(database, key)
        }
    }

    /// Moves the entries of a row whose indexed values changed from `old` to `new`.
    static func update(
        from old: StoreRow, to new: StoreRow, root: String, schema: LMDBSchema, databases: LMDBStoreDatabases,
        txn: LMDBTransaction
    ) throws {
        for definition in schema.indexes[root] ?? [] {
            guard let database = databases.indexes[definition] else { continue }
            let before = entry(of: old, in: definition)
            let after = entry(of: new, in: definition)
            if before == after { continue }
            if let before { try txn.delete(database, before) }
            if let after { try txn.put(database, after, []) }
        }
    }

    // MARK: - Reading

    /// The primary keys of the entries whose leading values encode as `prefix`, in index order (for one
    /// value, ascending primary key).
    static func primaryKeys(withPrefix prefix: [UInt8], in database: LMDBDatabase, txn: LMDBTransaction) throws -> [Int64] {
        let cursor = try LMDBCursor(database, in: txn)
        defer { cursor.close() }
        var keys: [Int64] = []
        var entry = try cursor.seek(atLeast: prefix)
        while let current = entry, current.key.starts(with: prefix) {
            if let key = LMDBIndexKey.primaryKey(of: current.key) { keys.append(key) }
            entry = try cursor.next()
        }
        return keys
    }

    /// Decodes a row, reporting damage as `StoreError.notAStore` naming the store.
    static func decode(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, schema: LMDBSchema, path: String) throws -> StoreRow {
        do {
            return try LMDBRowCoding.decode(bytes, primaryKey: primaryKey, schema: schema)
        } catch let error as LMDBRowCoding.DecodingError {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "damaged row: \(error)")
        }
    }
}

// MARK: - LMDBQueryPlanner

/// Chooses how a fetch finds its candidate rows: an index lookup when the predicate is (or is an AND
/// containing) `key == constant` or `key IN {constants}` on an indexed property, otherwise a table scan.
/// Either way the whole predicate is evaluated on every candidate, so an index only has to return a superset.
enum LMDBQueryPlanner {
    /// Rows to read through an index: the entries for any of `values` (duplicates removed).
    struct IndexLookup {
        let definition: LMDBIndexDefinition
        let values: [AttributeValue]
    }

    /// An index lookup for `predicate` over `root`'s table, or `nil` for a scan.
    static func lookup(
        for predicate: FetchPredicate?, root: String, schema: LMDBSchema, available: [LMDBIndexDefinition: LMDBDatabase]
    ) -> IndexLookup? {
        guard let predicate else { return nil }
        switch predicate {
        case .comparison(let comparison):
            return lookup(for: comparison, root: root, schema: schema, available: available)
        case .and(let parts):
            for part in parts {
                if let found = lookup(for: part, root: root, schema: schema, available: available) { return found }
            }
            return nil
        case .or, .not, .constant:
            return nil
        }
    }

    private static func lookup(
        for comparison: Comparison, root: String, schema: LMDBSchema, available: [LMDBIndexDefinition: LMDBDatabase]
    ) -> IndexLookup? {
        // String options compare through folding, which the byte-exact index cannot answer.
        guard comparison.modifier == .direct, comparison.options.isEmpty else { return nil }
        let key: String
        var values: [AttributeValue]
        switch (comparison.op, comparison.left, comparison.right) {
        case (.equal, .keyPath(let path), .constant(let value)), (.equal, .constant(let value), .keyPath(let path)):
            guard path.count == 1, !value.isNull else { return nil }   // `x == nil` is IS NULL: not indexed
            key = path[0]
            values = [value]
        case (.in, .keyPath(let path), .constant(let value)):
            guard path.count == 1 else { return nil }
            key = path[0]
            values = [value]
        case (.in, .keyPath(let path), .list(let elements)):
            guard path.count == 1 else { return nil }
            key = path[0]
            values = []
            for element in elements {
                guard case .constant(let value) = element else { return nil }
                values.append(value)
            }
        default:
            return nil
        }
        // A null never matches through IN (membership with null is unknown at best).
        values.removeAll { $0.isNull }
        guard let definition = schema.index(root: root, firstProperty: key), available[definition] != nil else { return nil }
        var unique: [AttributeValue] = []
        for value in values where !unique.contains(where: { AttributeValue.storeEqual($0, value) }) { unique.append(value) }
        return IndexLookup(definition: definition, values: unique)
    }
}

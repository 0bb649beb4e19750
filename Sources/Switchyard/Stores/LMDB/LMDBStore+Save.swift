import Foundation

// MARK: - Primary keys

extension LMDBStore {
    /// Reserves `count` keys above the table's `Z_MAX` (`max:<Root>` in `meta`) in its own write transaction,
    /// so keys are never handed out twice, even after deletes, a crash or by another process.
    public func allocatePrimaryKeys(for entityName: String, count: Int) throws -> ClosedRange<Int64> {
        try checkWritable("allocate primary keys")
        let layout = try servedLayout(entityName)
        guard count > 0 else {
            throw StoreError.invalidValue(
                path: displayPath, entity: entityName, attribute: "primary key count", value: String(count),
                expected: "a positive number of keys")
        }
        return try environment.write { txn in
            let current = try maxKey(root: layout.rootName, txn: txn)
            let (last, overflow) = current.addingReportingOverflow(Int64(count))
            guard !overflow else {
                throw StoreError.invalidValue(
                    path: displayPath, entity: entityName, attribute: "primary key count", value: String(count),
                    expected: "a count that keeps keys below Int64.max (Z_MAX is \(current))")
            }
            try setMaxKey(last, root: layout.rootName, txn: txn)
            return (current + 1)...last
        }
    }

    private func maxKey(root: String, txn: LMDBTransaction) throws -> Int64 {
        guard let bytes = try txn.get(databases.meta, LMDBStoreDatabases.maxKey(root: root)) else { return 0 }
        guard bytes.count == 8 else {
            throw StoreError.notAStore(path: displayPath, expected: .lmdb, reason: "meta's max:\(root) is not 8 bytes")
        }
        return Int64(bitPattern: bytes.reduce(0) { $0 << 8 | UInt64($1) })
    }

    private func setMaxKey(_ value: Int64, root: String, txn: LMDBTransaction) throws {
        var w = LMDBByteWriter(capacity: 8)
        w.bigEndian(UInt64(bitPattern: value))
        try txn.put(databases.meta, LMDBStoreDatabases.maxKey(root: root), w.bytes)
    }
}

// MARK: - Save

extension LMDBStore {
    /// Applies inserts, then updates, then deletes, then checks uniqueness — the memory store's order, so both
    /// report the same error for the same bad change set — in one write transaction. Any error aborts it:
    /// nothing of the save is written.
    public func save(_ changes: StoreChangeSet) throws {
        try checkWritable("save")
        if changes.isEmpty { return }
        try environment.write { txn in try apply(changes, txn: txn) }
    }

    private func apply(_ changes: StoreChangeSet, txn: LMDBTransaction) throws {
        let reader = LMDBReader(store: self, transaction: txn)
        var touched: [(root: Int, primaryKey: Int64)] = []
        var maxKeys: [String: Int64] = [:]
        var writer = LMDBByteWriter(capacity: 256)

        for insert in changes.inserts {
            let layout = try servedLayout(insert.entityName)
            var row = insert
            row.version = 1
            row.values = try normalizedValues(insert.values, layout: layout)
            try checkToOnes(row.toOne.mapValues { Optional($0) }, layout: layout)
            guard row.primaryKey >= 0 else {
                throw StoreError.invalidValue(
                    path: displayPath, entity: layout.name, attribute: "Z_PK", value: String(row.primaryKey),
                    expected: "a primary key from allocatePrimaryKeys (not negative)")
            }
            writer.bytes.removeAll(keepingCapacity: true)
            LMDBRowCoding.encode(row, layout: layout, schema: schema, into: &writer)
            let key = LMDBRowKey.make(root: layout.rootNumber, primaryKey: row.primaryKey)
            guard try txn.put(databases.rows, key, writer.bytes, flags: .noOverwrite) else {
                throw StoreError.uniquenessViolation(
                    path: displayPath, entity: layout.name, properties: ["Z_PK"], values: ["\(row.primaryKey)"])
            }
            try LMDBIndexing.add(row, root: layout.rootName, schema: schema, databases: databases, txn: txn)
            touched.append((layout.rootNumber, row.primaryKey))
            maxKeys[layout.rootName] = max(maxKeys[layout.rootName] ?? 0, row.primaryKey)
        }

        for update in changes.updates {
            let layout = try servedLayout(update.entityName)
            let existing = try reader.row(root: layout.rootNumber, primaryKey: update.primaryKey)
            guard let old = existing, old.entityName == update.entityName, old.version == update.expectedVersion else {
                throw StoreError.conflict(
                    path: displayPath, entity: update.entityName, primaryKey: update.primaryKey,
                    expectedVersion: update.expectedVersion, actualVersion: existing?.version)
            }
            var row = old
            for (key, value) in try normalizedValues(update.values, layout: layout) {
                row.values[key] = value.isNull ? nil : value
            }
            try checkToOnes(update.toOne, layout: layout)
            for (key, target) in update.toOne { row.toOne[key] = target }
            row.version += 1
            writer.bytes.removeAll(keepingCapacity: true)
            LMDBRowCoding.encode(row, layout: layout, schema: schema, into: &writer)
            try txn.put(databases.rows, LMDBRowKey.make(root: layout.rootNumber, primaryKey: row.primaryKey), writer.bytes)
            try LMDBIndexing.update(from: old, to: row, root: layout.rootName, schema: schema, databases: databases, txn: txn)
            touched.append((layout.rootNumber, row.primaryKey))
        }

        for deletion in changes.deletes {
            let layout = try servedLayout(deletion.entityName)
            let existing = try reader.row(root: layout.rootNumber, primaryKey: deletion.primaryKey)
            guard let old = existing, old.version == deletion.expectedVersion else {
                throw StoreError.conflict(
                    path: displayPath, entity: deletion.entityName, primaryKey: deletion.primaryKey,
                    expectedVersion: deletion.expectedVersion, actualVersion: existing?.version)
            }
            try txn.delete(databases.rows, LMDBRowKey.make(root: layout.rootNumber, primaryKey: old.primaryKey))
            try LMDBIndexing.remove(old, root: layout.rootName, schema: schema, databases: databases, txn: txn)
        }

        try checkUniqueness(of: touched, reader: reader)
        for (root, key) in maxKeys {
            if key > (try maxKey(root: root, txn: txn)) { try setMaxKey(key, root: root, txn: txn) }
        }
    }

    // MARK: - Validation

    /// Every value normalized for its attribute (`StoreError.invalidValue` otherwise); a key that is not a
    /// persistent attribute is `QueryError.unknownKeyPath`, as in the memory store.
    private func normalizedValues(_ values: [String: AttributeValue], layout: LMDBEntityLayout) throws -> [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        result.reserveCapacity(values.count)
        for (key, value) in values {
            guard let position = layout.attributeIndex[key] else {
                throw QueryError.unknownKeyPath(entity: layout.name, keyPath: key)
            }
            result[key] = try value.normalized(for: layout.attributes[position], entity: layout.name, path: displayPath)
        }
        return result
    }

    /// To-one keys must be persistent to-one relationships (a row has nowhere else to keep them) and targets
    /// must be the destination entity or a subentity, as the SQLite store requires.
    private func checkToOnes(_ toOne: [String: RowReference?], layout: LMDBEntityLayout) throws {
        for (key, target) in toOne {
            guard let position = layout.toOneIndex[key] else {
                throw QueryError.unknownKeyPath(entity: layout.name, keyPath: key)
            }
            guard let target else { continue }
            let destination = layout.toOnes[position].destinationEntityName
            guard schema.numbers[target.entityName] != nil, model.entity(target.entityName, isKindOf: destination) else {
                throw StoreError.invalidValue(
                    path: displayPath, entity: layout.name, attribute: key, value: target.description,
                    expected: "a reference to \(destination) or a subentity")
            }
        }
    }

    /// Rows the save touched must not share constrained values with another row of their table (NULLs never
    /// collide). The constraint's index names the candidates; `storeEqual` decides, as in the memory store.
    private func checkUniqueness(of touched: [(root: Int, primaryKey: Int64)], reader: LMDBReader) throws {
        for (root, primaryKey) in touched {
            guard let row = try reader.row(root: root, primaryKey: primaryKey),
                let layout = schema.layout(named: row.entityName)
            else { continue }
            for constraint in layout.entity.allUniquenessConstraints {
                let values = constraint.map { LMDBIndexing.value(of: $0, in: row) }
                if values.contains(where: \.isNull) { continue }
                guard let definition = schema.index(root: layout.rootName, properties: constraint),
                    let database = databases.indexes[definition]
                else { continue }
                let keys = try LMDBIndexing.primaryKeys(withPrefix: LMDBIndexKey.prefix(values), in: database, txn: reader.transaction)
                for key in keys where key != primaryKey {
                    guard let other = try reader.row(root: root, primaryKey: key) else { continue }
                    let clash = constraint.indices.allSatisfy {
                        AttributeValue.storeEqual(LMDBIndexing.value(of: constraint[$0], in: other), values[$0])
                    }
                    if clash {
                        throw StoreError.uniquenessViolation(
                            path: displayPath, entity: layout.name, properties: constraint, values: values.map(\.description))
                    }
                }
            }
        }
    }
}

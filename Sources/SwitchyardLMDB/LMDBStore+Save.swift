import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Primary keys

extension LMDBStore {
    /// Reserves `count` keys above the table's `Z_MAX` (`max:<Root>` in `meta`) in its own write transaction,
    /// so keys are never handed out twice, even after deletes, a crash or by another process.
    public func allocatePrimaryKeys(for entityName: String, count: Int) throws -> ClosedRange<Int64> {
        try checkWritable("allocate primary keys")
        let layout = try servedLayout(entityName)
        guard count > 0 else {
            throw StoreError.invalidValue(
                path: path, configuration: configurationName, entity: entityName, attribute: "primary key count", value: String(count),
                expected: "a positive number of keys")
        }
        return try environment.write { txn in
            let current = try maxKey(root: layout.rootName, txn: txn)
            let (last, overflow) = current.addingReportingOverflow(Int64(count))
            guard !overflow else {
                throw StoreError.invalidValue(
                    path: path, configuration: configurationName, entity: entityName, attribute: "primary key count", value: String(count),
                    expected: "a count that keeps keys below Int64.max (Z_MAX is \(current))")
            }
            try setMaxKey(last, root: layout.rootName, txn: txn)
            return (current + 1)...last
        }
    }

    package func maxKey(root: String, txn: LMDBTransaction) throws -> Int64 {
        try metaCounter(LMDBStoreDatabases.maxKey(root: root), txn: txn)
    }

    package func setMaxKey(_ value: Int64, root: String, txn: LMDBTransaction) throws {
        try setMetaCounter(value, LMDBStoreDatabases.maxKey(root: root), txn: txn)
    }

    /// An 8-byte big-endian counter in `meta` (a table's `Z_MAX`, the highest history number deleted); 0 when
    /// absent, `StoreError.notAStore` when it is not 8 bytes.
    package func metaCounter(_ key: [UInt8], txn: LMDBTransaction) throws -> Int64 {
        guard let bytes = try txn.get(databases.meta, key) else { return 0 }
        guard bytes.count == 8 else {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "meta's \(String(decoding: key, as: UTF8.self)) is not 8 bytes")
        }
        return Int64(bitPattern: bytes.withUnsafeBytes { LMDBRowKey.readBigEndian64($0, 0) })
    }

    package func setMetaCounter(_ value: Int64, _ key: [UInt8], txn: LMDBTransaction) throws {
        var w = LMDBByteWriter(capacity: 8)
        w.bigEndian(UInt64(bitPattern: value))
        try txn.put(databases.meta, key, w.bytes)
    }
}

// MARK: - Save

extension LMDBStore {
    /// Applies inserts, then updates, then deletes, then checks uniqueness — the memory store's order, so both
    /// report the same error for the same bad change set — in one write transaction. Any error aborts it:
    /// nothing of the save is written.
    public func save(_ changes: StoreChangeSet) throws {
        try tracer.measure({ _ in "LMDB save: \(changes.traceSummary)" }) { try saveChanges(changes) }
    }

    private func saveChanges(_ changes: StoreChangeSet) throws {
        try checkWritable("save")
        if changes.isEmpty { return }
        guard tracer.level >= .statements else {
            adoptHistory(try environment.write { txn in try apply(changes, txn: txn) })
            return
        }
        // Level 2: the write transaction's calls, and its work apart from the commit (the fsync).
        let started = DispatchTime.now().uptimeNanoseconds
        var calls = (puts: 0, deletes: 0, work: 0.0)
        adoptHistory(try environment.write { txn in
            let begun = DispatchTime.now().uptimeNanoseconds
            let found = try apply(changes, txn: txn)
            calls = (txn.puts, txn.deletes, Double(DispatchTime.now().uptimeNanoseconds - begun) / 1e6)
            return found
        })
        let total = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        tracer.emit(String(
            format: "LMDB write transaction: %d mdb_put, %d mdb_del (rows, indexes, links, keys); work %.3f ms, begin and commit %.3f ms",
            calls.puts, calls.deletes, calls.work, total - calls.work))
    }

    /// Returns a history database another process created since this store opened (see `recordHistory`).
    private func apply(_ changes: StoreChangeSet, txn: LMDBTransaction) throws -> LMDBDatabase? {
        let reader = LMDBReader(store: self, transaction: txn)
        var touched: [(layout: LMDBEntityLayout, primaryKey: Int64)] = []
        var maxKeys: [String: Int64] = [:]
        var writer = LMDBByteWriter(capacity: 256)
        var indexKey = LMDBByteWriter(capacity: 64)
        var key = LMDBRowKey.make(root: 0, primaryKey: 0)
        // Consecutive rows usually share an entity: keep its layout, index databases and a reusable image.
        var current: (name: String, layout: LMDBEntityLayout, indexes: [LMDBDatabase?])?
        func resolve(_ entityName: String) throws -> (LMDBEntityLayout, [LMDBDatabase?]) {
            if let current, current.name == entityName { return (current.layout, current.indexes) }
            let layout = try servedLayout(entityName)
            let indexes = databases.indexes(root: layout.rootNumber)
            current = (entityName, layout, indexes)
            return (layout, indexes)
        }
        var scratch: LMDBRowImage?
        var sameLayout: LayoutMatch?
        var highest: (root: String, key: Int64)?

        // The new rows' index entries first, written in key order (see `LMDBIndexBatch`), so that their buffer is
        // freed before the rows' pages are made: a million new rows of the bench entity peaked 17 MB higher with
        // the entries gathered alongside the rows. A row whose values are refused stops this pass without an
        // error; the rows' pass below meets it (or an earlier row's error) again and throws, in the rows' order.
        var entries = LMDBIndexBatch()
        for insert in changes.inserts {
            guard let (layout, indexes) = try? resolve(insert.entityName) else { break }
            guard indexes.contains(where: { $0 != nil }) else { continue }
            do { try fill(&scratch, with: insert, layout: layout, sameLayout: &sameLayout, indexedOnly: true) } catch { break }
            try LMDBIndexing.add(scratch!, databases: indexes, batch: &entries, txn: txn, scratch: &indexKey)
        }
        try entries.flush(txn: txn)

        // Then the rows, through one cursor: new keys mostly ascend, and a cursor put looks in its current page
        // before searching the tree.
        if !changes.inserts.isEmpty { try txn.withCursor(databases.rows) { rows in
        for insert in changes.inserts {
            let (layout, _) = try resolve(insert.entityName)
            if !encodeDirectly(insert, layout: layout, sameLayout: &sameLayout, into: &writer) {
                try fill(&scratch, with: insert, layout: layout, sameLayout: &sameLayout, indexedOnly: false)
                writer.bytes.removeAll(keepingCapacity: true)
                LMDBRowCoding.encode(scratch!, into: &writer)
            }
            guard insert.primaryKey >= 0 else {
                throw StoreError.invalidValue(
                    path: path, configuration: configurationName, entity: layout.name, attribute: "Z_PK", value: String(insert.primaryKey),
                    expected: "a primary key from allocatePrimaryKeys (not negative)")
            }
            LMDBRowKey.set(&key, root: layout.rootNumber, primaryKey: insert.primaryKey)
            let added = try key.withUnsafeBytes { k in
                try writer.bytes.withUnsafeBytes { try rows.put(key: k, value: $0, flags: .noOverwrite) }
            }
            guard added else {
                throw StoreError.uniquenessViolation(
                    path: path, configuration: configurationName, entity: layout.name, properties: ["Z_PK"], values: ["\(insert.primaryKey)"])
            }
            if !layout.constraints.isEmpty { touched.append((layout, insert.primaryKey)) }
            if let last = highest, last.root == layout.rootName {
                if insert.primaryKey > last.key { highest = (last.root, insert.primaryKey) }
            } else {
                if let last = highest { maxKeys[last.root] = max(maxKeys[last.root] ?? 0, last.key) }
                highest = (layout.rootName, insert.primaryKey)
            }
        }
        } }
        if let last = highest { maxKeys[last.root] = max(maxKeys[last.root] ?? 0, last.key) }

        // One cursor for the updates: it finds each row and rewrites it where it found it (one search of the
        // tree per update rather than two, a get and a put).
        if !changes.updates.isEmpty {
            try txn.withCursor(databases.rows) { rows in
                for update in changes.updates {
                    let (layout, indexes) = try resolve(update.entityName)
                    // The row's version first (as the memory store checks it): a stale update is a conflict,
                    // whatever else is wrong with it. `stored.bytes` point into the map until this transaction
                    // next writes.
                    let stored = try reader.storedRow(root: layout.rootNumber, primaryKey: update.primaryKey, cursor: rows)
                    guard let stored, stored.layout === layout, stored.version == update.expectedVersion else {
                        throw conflict(
                            entityName: update.entityName, primaryKey: update.primaryKey, expectedVersion: update.expectedVersion,
                            actualVersion: stored?.version)
                    }
                    let changed: [(position: Int, value: AttributeValue)]
                    if let changes = update.positioned, isEquivalent(changes.layout, to: layout, cache: &sameLayout) {
                        changed = try normalized(changes, layout: layout)
                    } else {
                        changed = try normalized(update.values, layout: layout)
                    }
                    LMDBRowKey.set(&key, root: layout.rootNumber, primaryKey: update.primaryKey)
                    writer.bytes.removeAll(keepingCapacity: true)
                    if update.toOne.isEmpty, !changed.contains(where: { layout.indexedAttributes[$0.position] }) {
                        // No index reads a changed value: the stored row is patched, its other values copied as bytes
                        // rather than decoded (most of an update's work in the store before). Nor can a uniqueness
                        // constraint's values change (each has an index over exactly its properties).
                        try LMDBRowCoding.reportingDamage(path: path, primaryKey: update.primaryKey) {
                            try LMDBRowCoding.patch(
                                stored.bytes, layout: layout, schema: schema, primaryKey: update.primaryKey,
                                version: stored.version + 1, changes: changed, into: &writer)
                        }
                        try replace(rows, key, writer.bytes)
                    } else {
                        let old = try LMDBIndexing.decodeImage(
                            stored.bytes, primaryKey: update.primaryKey, schema: schema, path: path)
                        var image = old
                        for (position, value) in changed { image.attributes[position] = value }
                        try setToOnes(update.toOne, in: &image)
                        image.version += 1
                        LMDBRowCoding.encode(image, into: &writer)
                        try replace(rows, key, writer.bytes)
                        try LMDBIndexing.update(from: old, to: image, databases: indexes, txn: txn)
                        if !layout.constraints.isEmpty { touched.append((layout, update.primaryKey)) }
                    }
                }
            }
        }

        var deleted: [RowReference] = []
        for deletion in changes.deletes {
            let (layout, _) = try resolve(deletion.entityName)
            let existing = try reader.image(root: layout.rootNumber, primaryKey: deletion.primaryKey)
            guard let old = existing, old.version == deletion.expectedVersion else {
                throw conflict(
                    entityName: deletion.entityName, primaryKey: deletion.primaryKey, expectedVersion: deletion.expectedVersion,
                    actualVersion: existing?.version)
            }
            LMDBRowKey.set(&key, root: layout.rootNumber, primaryKey: old.primaryKey)
            try txn.delete(databases.rows, key)
            // The row's own entity (a subentity of the one named) decides its index entries.
            try LMDBIndexing.remove(old, databases: databases.indexes(root: old.layout.rootNumber), txn: txn)
            deleted.append(RowReference(entityName: old.layout.name, primaryKey: old.primaryKey))
        }
        try applyRelationshipChanges(changes, deleted: deleted, txn: txn)

        try checkUniqueness(of: touched, reader: reader)
        for (root, key) in maxKeys {
            if key > (try maxKey(root: root, txn: txn)) { try setMaxKey(key, root: root, txn: txn) }
        }
        return try recordHistory(changes, txn: txn)
    }

    /// Resets `image` (one per entity, reused: mutated in place through `image!`, so never copied) to `insert`.
    /// The row's own version is kept: 1 for a new object, the source's `Z_OPT` for a copied one (a split, a
    /// move). `indexedOnly` sets just the values an index reads where the row is laid out as the store's (the
    /// index pass); a value refused elsewhere in the row is then left for the rows' pass to report.
    /// (A method taking its state `inout` rather than a closure capturing it: captured, every use of the image
    /// was a dynamic exclusivity check, four per row, 440 instructions.)
    private func fill(
        _ image: inout LMDBRowImage?, with insert: StoreRow, layout: LMDBEntityLayout, sameLayout: inout LayoutMatch?,
        indexedOnly: Bool
    ) throws {
        if let reusable = image?.layout, reusable === layout {
            image!.reset(primaryKey: insert.primaryKey, version: insert.version)
        } else {
            image = LMDBRowImage(layout: layout, primaryKey: insert.primaryKey, version: insert.version)
        }
        if indexedOnly, let valuesLayout = insert.values.layout, insert.values.isLaidOut,
            isEquivalent(valuesLayout, to: layout, cache: &sameLayout)
        {
            for position in 0..<valuesLayout.names.count where layout.indexedAttributes[position] {
                let value = insert.values.slot(position)
                if !value.isNull { image!.attributes[position] = try normalized(value, at: position, layout: layout) }
            }
        } else {
            try setValues(insert.values, in: &image!, sameLayout: &sameLayout)
        }
        if !insert.toOne.isEmpty { try setToOnes(insert.toOne.mapValues { Optional($0) }, in: &image!) }
    }

    /// Encodes a new row into `writer` straight from its values, where they lie as the store's layout does and
    /// it sets no to-one (a context's inserts): the bytes `fill` and `LMDBRowCoding.encode` would make, without
    /// writing every value into an image and reading it back (callgrind: the image's fill was a tenth of an
    /// insert's work in the store). `false` when the row does not qualify or a value is refused; the caller then
    /// fills the image, which reports the refusal, naming the first refused attribute by position as before.
    private func encodeDirectly(
        _ insert: StoreRow, layout: LMDBEntityLayout, sameLayout: inout LayoutMatch?, into writer: inout LMDBByteWriter
    ) -> Bool {
        guard insert.toOne.isEmpty, let valuesLayout = insert.values.layout, insert.values.isLaidOut,
            isEquivalent(valuesLayout, to: layout, cache: &sameLayout)
        else { return false }
        let width = valuesLayout.names.count
        let values = insert.values
        writer.bytes.removeAll(keepingCapacity: true)
        do {
            try LMDBRowCoding.encodeRow(layout: layout, version: insert.version, into: &writer) { position in
                guard position < width else { return .null }
                let value = values.slot(position)
                return value.isNull ? value : try normalized(value, at: position, layout: layout)
            }
            return true
        } catch {
            // The image's fill meets the refused value again and throws it (see the summary).
            return false
        }
    }

    /// Rewrites the row `cursor` is on (see `LMDBCursor.replaceCurrent`).
    private func replace(_ cursor: LMDBCursor, _ key: [UInt8], _ bytes: [UInt8]) throws {
        try key.withUnsafeBytes { k in try bytes.withUnsafeBytes { try cursor.replaceCurrent(key: k, with: $0) } }
    }

    // MARK: - Validation

    /// Whether a row's or an update's layout (the context's, for its entity) is equivalent to the store's: the
    /// last pair compared, so a save of many rows of one entity compares the layouts once.
    struct LayoutMatch {
        let values: ObjectIdentifier
        let store: ObjectIdentifier
        let equivalent: Bool
    }

    /// Whether values positioned by `valuesLayout` lie as `layout`'s, compared once per pair (see `LayoutMatch`).
    private func isEquivalent(_ valuesLayout: RowLayout, to layout: LMDBEntityLayout, cache: inout LayoutMatch?) -> Bool {
        let ids = (ObjectIdentifier(valuesLayout), ObjectIdentifier(layout.rowLayout))
        if cache?.values != ids.0 || cache?.store != ids.1 {
            cache = LayoutMatch(values: ids.0, store: ids.1, equivalent: valuesLayout.isEquivalent(to: layout.rowLayout))
        }
        return cache!.equivalent
    }

    /// An inserted row's values into `image`: by position when the row's layout is equivalent to the store's
    /// (no name hashed per value, a third of an insert's work in the store before), else by name.
    private func setValues(_ values: RowValues, in image: inout LMDBRowImage, sameLayout: inout LayoutMatch?) throws {
        let layout = image.layout
        guard let valuesLayout = values.layout, values.isLaidOut, isEquivalent(valuesLayout, to: layout, cache: &sameLayout) else {
            return try setValues(values, in: &image)
        }
        for position in 0..<valuesLayout.names.count {
            let value = values.slot(position)
            if value.isNull { continue }
            image.attributes[position] = try normalized(value, at: position, layout: layout)
        }
    }

    /// Stores every value, normalized for its attribute, at its position (`.null` clears it).
    private func setValues(_ values: some Sequence<(key: String, value: AttributeValue)>, in image: inout LMDBRowImage) throws {
        for (position, value) in try normalized(values, layout: image.layout) { image.attributes[position] = value }
    }

    /// Each value normalized for its attribute, with the attribute's position, in ascending position.
    /// `StoreError.invalidValue` for a value the attribute cannot hold; a key that is not a persistent attribute
    /// is `StoreError.unknownProperty`, as on every backend.
    private func normalized(
        _ values: some Sequence<(key: String, value: AttributeValue)>, layout: LMDBEntityLayout
    ) throws -> [(position: Int, value: AttributeValue)] {
        var result: [(position: Int, value: AttributeValue)] = []
        result.reserveCapacity(values.underestimatedCount)
        for (key, value) in values {
            guard let position = layout.attributeIndex[name: key] else {
                throw StoreError.unknownProperty(path: path, configuration: configurationName, entity: layout.name, property: key)
            }
            result.append((position, try normalized(value, at: position, layout: layout)))
        }
        if result.count > 1 { result.sort { $0.position < $1.position } }
        return result
    }

    /// A context's changes, whose layout is equivalent to `layout`'s, normalized by position: no name hashed.
    private func normalized(_ changes: PositionedChanges, layout: LMDBEntityLayout) throws -> [(position: Int, value: AttributeValue)] {
        var result: [(position: Int, value: AttributeValue)] = []
        result.reserveCapacity(changes.count)
        try changes.forEach { result.append(($0, try normalized($1, at: $0, layout: layout))) }
        return result
    }

    /// `value` as attribute `position` of `layout` stores it, or `StoreError.invalidValue`.
    @inline(__always)
    private func normalized(_ value: AttributeValue, at position: Int, layout: LMDBEntityLayout) throws -> AttributeValue {
        let type = layout.attributeTypes[position]
        guard let normalized = value.normalized(for: type) else {
            throw StoreError.invalidValue(
                path: path, configuration: configurationName, entity: layout.name, attribute: layout.attributeNames[position],
                value: "\(value) (\(value.kindName))", expected: type.rawValue)
        }
        return normalized
    }

    /// The error for a change of a row that is gone or holds another `Z_OPT` than the one expected.
    private func conflict(entityName: String, primaryKey: Int64, expectedVersion: Int64, actualVersion: Int64?) -> StoreError {
        StoreError.conflict(
            path: path, configuration: configurationName,
            objectID: ObjectID(store: identifier, entityName: entityName, primaryKey: primaryKey),
            entity: entityName, primaryKey: primaryKey, expectedVersion: expectedVersion, actualVersion: actualVersion)
    }

    /// To-one keys must be persistent to-one relationships (a row has nowhere else to keep them) and targets
    /// must be the destination entity or a subentity, as the SQLite store requires; `nil` clears.
    private func setToOnes(_ toOne: [String: RowReference?], in image: inout LMDBRowImage) throws {
        let layout = image.layout
        for (key, target) in toOne {
            guard let position = layout.toOneIndex[key] else {
                throw StoreError.unknownProperty(path: path, configuration: configurationName, entity: layout.name, property: key)
            }
            guard let target else {
                image.toOnes[position] = nil
                continue
            }
            let destination = layout.toOneDestinations[position]
            guard let number = schema.numbers[target.entityName], model.entity(target.entityName, isKindOf: destination) else {
                throw StoreError.invalidValue(
                    path: path, configuration: configurationName, entity: layout.name, attribute: key, value: target.description,
                    expected: "a reference to \(destination) or a subentity")
            }
            image.toOnes[position] = LMDBRowImage.Target(number: number, primaryKey: target.primaryKey)
        }
    }

    /// Rows the save touched must not share constrained values with another row of their table (NULLs never
    /// collide). The constraint's index names the candidates; `storeEqual` decides, as in the memory store.
    private func checkUniqueness(of touched: [(layout: LMDBEntityLayout, primaryKey: Int64)], reader: LMDBReader) throws {
        for (layout, primaryKey) in touched {
            // Read back: a later change of the same save may have changed or deleted the row.
            guard let row = try reader.image(root: layout.rootNumber, primaryKey: primaryKey) else { continue }
            let indexes = databases.indexes(root: layout.rootNumber)
            for constraint in row.layout.constraints {
                let values = constraint.slots.map(row.value)
                if values.contains(where: \.isNull) { continue }
                guard constraint.index < indexes.count, let database = indexes[constraint.index] else { continue }
                let clash = try LMDBIndexing.clashes(
                    values, constraint: constraint, primaryKey: primaryKey, index: database, txn: reader.transaction
                ) { try reader.image(root: layout.rootNumber, primaryKey: $0) }
                if clash {
                    throw StoreError.uniquenessViolation(
                        path: path, configuration: configurationName, entity: row.layout.name, properties: constraint.properties,
                        values: values.map(\.description))
                }
            }
        }
    }
}

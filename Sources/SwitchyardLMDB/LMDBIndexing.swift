import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - LMDBIndexing

/// Keeping the `index:` databases in step with `rows`, and reading them. An entry exists for every row of the
/// table whose first indexed property is not null (lookups never search for null: `x == nil` is a scan).
package enum LMDBIndexing {
    /// The entry key of `image` in the table's index at `position`, or `nil` when its first property is null.
    package static func entry(of image: LMDBRowImage, index position: Int) -> [UInt8]? {
        var w = LMDBByteWriter(capacity: 48)
        return entry(of: image, index: position, into: &w) ? w.bytes : nil
    }

    /// Writes the entry key into `w` (replacing its contents); `false` when the first property is null.
    package static func entry(of image: LMDBRowImage, index position: Int, into w: inout LMDBByteWriter) -> Bool {
        let slots = image.layout.indexSlots[position]
        guard let first = slots.first, !image.value(first).isNull else { return false }
        w.bytes.removeAll(keepingCapacity: true)
        for slot in slots { LMDBIndexKey.append(image.value(slot), to: &w) }
        LMDBIndexKey.finish(&w, primaryKey: image.primaryKey)
        return true
    }

    // MARK: - Writing

    /// Queues `image`'s entries in every index of its table on `batch`, written when the batch is flushed
    /// (see `LMDBIndexBatch`); `scratch` is reused for the keys.
    package static func add(
        _ image: LMDBRowImage, databases: [LMDBDatabase?], batch: inout LMDBIndexBatch, txn: LMDBTransaction,
        scratch: inout LMDBByteWriter
    ) throws {
        for (position, database) in databases.enumerated() {
            guard let database, entry(of: image, index: position, into: &scratch) else { continue }
            try batch.add(scratch.bytes, to: database, txn: txn)
        }
    }

    /// Removes `image` from every index of its table.
    package static func remove(_ image: LMDBRowImage, databases: [LMDBDatabase?], txn: LMDBTransaction) throws {
        for (position, database) in databases.enumerated() {
            guard let database, let key = entry(of: image, index: position) else { continue }
            try txn.delete(database, key)
        }
    }

    /// Moves the entries of a row whose indexed values changed from `old` to `new` (same entity and key).
    package static func update(from old: LMDBRowImage, to new: LMDBRowImage, databases: [LMDBDatabase?], txn: LMDBTransaction) throws {
        for (position, database) in databases.enumerated() {
            guard let database else { continue }
            let before = entry(of: old, index: position)
            let after = entry(of: new, index: position)
            if before == after { continue }
            if let before { try txn.delete(database, before) }
            if let after { try txn.put(database, after, []) }
        }
    }

    // MARK: - Reading

    /// The error for stored rows that break `constraint` (checked through its `index`): `image`'s values, none
    /// null, are held by another row of its table in `rows`. Nil when no other row holds them. A model version's
    /// checks of stored rows ask this: an index built over existing rows, and the values a migration writes.
    package static func duplicateRefusal(
        of image: LMDBRowImage, constraint: LMDBEntityLayout.Constraint, index: LMDBDatabase, rows: LMDBDatabase,
        schema: LMDBSchema, txn: LMDBTransaction, path: String, configuration: String
    ) throws -> StoreError? {
        let values = constraint.slots.map(image.value)
        guard !values.contains(where: \.isNull) else { return nil }
        let root = image.layout.rootNumber
        let clash = try clashes(values, constraint: constraint, primaryKey: image.primaryKey, index: index, txn: txn) { other in
            try txn.get(rows, LMDBRowKey.make(root: root, primaryKey: other)).map { bytes in
                try bytes.withUnsafeBytes { try decodeImage($0, primaryKey: other, schema: schema, path: path) }
            }
        }
        guard clash else { return nil }
        return StoreError.openFailed(
            path: path, configuration: configuration,
            reason: StoreMigration.duplicatesReason(
                entity: image.layout.name, properties: constraint.properties,
                values: values.map { if case .string(let text) = $0 { "'\(text)'" } else { $0.description } }))
    }

    /// Whether a row other than `primaryKey` holds `values` for `constraint`: the constraint's `index` names the
    /// candidates, `image` reads each, and `storeEqual` decides, as in the memory store. (A save's check and the
    /// check of stored rows when an index is built both ask this.)
    package static func clashes(
        _ values: [AttributeValue], constraint: LMDBEntityLayout.Constraint, primaryKey: Int64, index: LMDBDatabase,
        txn: LMDBTransaction, image: (Int64) throws -> LMDBRowImage?
    ) throws -> Bool {
        for key in try primaryKeys(withPrefix: LMDBIndexKey.prefix(values), in: index, txn: txn) where key != primaryKey {
            guard let other = try image(key) else { continue }
            let clash = constraint.properties.indices.allSatisfy {
                AttributeValue.storeEqual(other.value(other.layout.slot(named: constraint.properties[$0])), values[$0])
            }
            if clash { return true }
        }
        return false
    }

    /// The primary keys of the entries whose leading values encode as `prefix`, in index order (for one
    /// value, ascending primary key).
    package static func primaryKeys(withPrefix prefix: [UInt8], in database: LMDBDatabase, txn: LMDBTransaction) throws -> [Int64] {
        try txn.withCursor(database) { cursor in
            var keys: [Int64] = []
            var entry = try cursor.seek(atLeast: prefix)
            while let current = entry, current.key.starts(with: prefix) {
                if let key = LMDBIndexKey.primaryKey(of: current.key) { keys.append(key) }
                entry = try cursor.next()
            }
            return keys
        }
    }

    /// Decodes a row by position, reporting damage as `StoreError.notAStore` naming the store.
    package static func decodeImage(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, schema: LMDBSchema, path: String) throws -> LMDBRowImage {
        try LMDBRowCoding.reportingDamage(path: path, primaryKey: primaryKey) {
            try LMDBRowCoding.decodeImage(bytes, primaryKey: primaryKey, schema: schema)
        }
    }
}

// MARK: - LMDBQueryPlanner

/// Chooses how a fetch finds its candidate rows: an index lookup when the predicate is (or is an AND
/// containing) `key == constant` or `key IN {constants}` on an indexed property, otherwise a table scan.
/// Either way the whole predicate is evaluated on every candidate, so an index only has to return a superset.
package enum LMDBQueryPlanner {
    /// Rows to read through an index: the entries for any of `values` (duplicates removed).
    package struct IndexLookup {
        /// Position of the index in `LMDBSchema.indexes[root]`.
        package let index: Int
        package let values: [AttributeValue]
        /// The predicate is this one comparison and the index answers it exactly (see `isExact`), so the rows
        /// it names need no evaluation. Never for a to-one: its index keeps the referenced key even when that
        /// row is gone, where the evaluator reads null.
        package var covers = false
    }

    /// An index lookup for `predicate` over the table of `table` (any entity of it), or `nil` for a scan.
    /// `available` are the table's index databases (`nil` where a read-only store lacks one).
    package static func lookup(
        for predicate: FetchPredicate?, table: LMDBEntityLayout, available: [LMDBDatabase?]
    ) -> IndexLookup? {
        guard let predicate else { return nil }
        switch predicate {
        case .comparison(let comparison):
            guard var found = lookup(for: comparison, table: table, available: available) else { return nil }
            found.covers = table.indexLeadsWithAttribute[found.index] && found.values.allSatisfy(isExact)
            return found
        case .and(let parts):
            // The index narrows the candidates to one term's rows; every other term still has to be evaluated,
            // so an AND never counts as covered (unless it is that one term alone).
            for part in parts {
                if var found = lookup(for: part, table: table, available: available) {
                    if parts.count > 1 { found.covers = false }
                    return found
                }
            }
            return nil
        case .or, .not, .constant:
            return nil
        }
    }

    /// The smallest primary key `predicate` can select when it is (or is an AND containing) `SELF > k` or
    /// `SELF >= k` with an integer `k`; 0 when it bounds nothing. A table walk can start there: keys are the
    /// rows' order, and the whole predicate is still evaluated on every row.
    package static func primaryKeyLowerBound(of predicate: FetchPredicate?) -> Int64 {
        switch predicate {
        case .comparison(let c)?:
            guard c.modifier == .direct, case .keyPath(let path) = c.left, path.isEmpty || path == ["SELF"],
                case .constant(.integer(let k)) = c.right
            else { return 0 }
            switch c.op {
            case .greater: return k == .max ? .max : max(0, k + 1)
            case .greaterOrEqual: return max(0, k)
            default: return 0
            }
        case .and(let parts)?:
            return parts.map { primaryKeyLowerBound(of: $0) }.max() ?? 0
        default:
            return 0
        }
    }

    /// Whether equal index elements mean `storeEqual` values: text and bytes short enough not to be cut, and
    /// numbers whose Double is exact and shared with no other integer (below 2^53).
    package static func isExact(_ value: AttributeValue) -> Bool {
        func fits<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
            let count = bytes.count
            // Each zero byte is escaped to two: up to half the limit fits whatever the bytes are, without
            // reading them (an indexed lookup's usual value).
            if count <= LMDBIndexKey.elementLimit / 2 { return true }
            return count + bytes.lazy.filter { $0 == 0 }.count <= LMDBIndexKey.elementLimit
        }
        switch value {
        case .null: return false
        case .string(let s): return fits(s.utf8)
        case .uri(let u): return fits(u.absoluteString.utf8)
        case .binary(let d): return fits(d)
        case .uuid: return true
        case .integer, .double, .decimal, .bool, .date:
            guard let d = value.numericValue, d.isFinite else { return false }
            return abs(d) < 9_007_199_254_740_992
        }
    }

    private static func lookup(
        for comparison: Comparison, table: LMDBEntityLayout, available: [LMDBDatabase?]
    ) -> IndexLookup? {
        // String options compare through folding, which the byte-exact index cannot answer.
        guard comparison.modifier == .direct, comparison.options.isEmpty else { return nil }
        let key: String
        var values: [AttributeValue]
        // Each side matched in place: switching on a tuple of the two operands copied both (retaining and
        // releasing their payloads), about 200 instructions of an indexed lookup in callgrind.
        switch comparison.op {
        case .equal:
            if case .keyPath(let path) = comparison.left, case .constant(let value) = comparison.right {
                guard path.count == 1, !value.isNull else { return nil }   // `x == nil` is IS NULL: not indexed
                key = path[0]
                values = [value]
            } else if case .constant(let value) = comparison.left, case .keyPath(let path) = comparison.right {
                guard path.count == 1, !value.isNull else { return nil }
                key = path[0]
                values = [value]
            } else {
                return nil
            }
        case .in:
            guard case .keyPath(let path) = comparison.left, path.count == 1 else { return nil }
            switch comparison.right {
            case .constant(let value):
                key = path[0]
                values = [value]
            case .list(let elements):
                key = path[0]
                values = []
                for element in elements {
                    guard case .constant(let value) = element else { return nil }
                    values.append(value)
                }
            default:
                return nil
            }
        default:
            return nil
        }
        guard let index = table.indexByFirstProperty[name: key], index < available.count, available[index] != nil else {
            return nil
        }
        if values.count == 1 { return values[0].isNull ? IndexLookup(index: index, values: []) : IndexLookup(index: index, values: values) }
        // A null never matches through IN (membership with null is unknown at best). Values whose index
        // prefixes are equal read the same entries, so the prefix bytes de-duplicate them in linear time.
        var unique: [AttributeValue] = []
        var seen = Set<[UInt8]>()
        unique.reserveCapacity(values.count)
        for value in values where !value.isNull && seen.insert(LMDBIndexKey.prefix(value)).inserted {
            unique.append(value)
        }
        return IndexLookup(index: index, values: unique)
    }
}

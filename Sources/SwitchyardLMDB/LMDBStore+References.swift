import Foundation
import SwitchyardQuery
import SwitchyardStores

// MARK: - References

extension LMDBStore {
    /// The references of the rows `fetch(_:each:)` hands over, in its order (primary-key order without sort
    /// keys). With no sort keys, and no predicate or one that reads only the entity's own attributes through
    /// no index (what `count` reads from the encoded rows), the table is walked reading each row's entity
    /// number and only the values the predicate compares: no row is decoded. Otherwise the rows are read as
    /// `fetch(_:each:)` reads them.
    public func fetchReferences(_ request: StoreFetchRequest, each body: (RowReference) throws -> Void) throws {
        try checkOpen()
        let layout = try servedLayout(request.entityName)
        let prepared = try request.prepared(forStore: identifier, model: model)
        guard prepared.sortKeys.isEmpty, var test = referenceTest(prepared.predicate, layout: layout) else {
            return try fetch(request) { try body(RowReference(entityName: $0.entityName, primaryKey: $0.primaryKey)) }
        }
        let family = prepared.includesSubentities ? layout.withSubentities : layout.alone
        let firstKey = LMDBQueryPlanner.primaryKeyLowerBound(of: prepared.predicate)
        let offset = max(prepared.fetchOffset, 0)
        let limit = prepared.fetchLimit.map { max($0, 0) }
        var callerNanos: UInt64 = 0
        _ = try tracer.measure({ (count: Int) in "LMDB fetch references \(tracer.describe(prepared)): \(count) rows" }, excluding: { callerNanos }) {
            if limit == 0 { return 0 }
            var delivered = 0
            var skipped = 0
            // The caller's own error comes out as it is.
            var failure: Error?
            do {
                try environment.read { txn in
                    let reader = LMDBReader(store: self, transaction: txn)
                    try reader.scan(root: layout.rootNumber, from: firstKey) { key, bytes in
                        let number: Int
                        do {
                            number = try LMDBRowCoding.entityNumber(of: bytes)
                            // A row of another entity (known or not) is skipped, as a fetch skips it.
                            guard number >= 0, number < family.count, family[number] else { return true }
                            guard try test.matches(key, bytes) else { return true }
                        } catch where error is LMDBRowCoding.DecodingError || error is LMDBByteReader.Overrun {
                            throw LMDBRowCoding.damagedRow(path: path, primaryKey: key, error)
                        }
                        if skipped < offset {
                            skipped += 1
                            return true
                        }
                        guard let name = schema.layout(number: number)?.name else { return true }
                        delivered += 1
                        do {
                            try tracer.handOver(RowReference(entityName: name, primaryKey: key), to: body, callerNanos: &callerNanos)
                        } catch {
                            failure = error
                            throw error
                        }
                        return limit.map { delivered < $0 } ?? true
                    }
                }
            } catch {
                throw failure ?? error
            }
            return delivered
        }
    }

    /// How `fetchReferences` decides a row from its encoded bytes: every row (no matcher), the byte predicate
    /// with the general evaluation for a row it cannot read, or the general evaluation alone.
    private struct ReferenceTest {
        var scan: LMDBBytePredicate.Scan?
        let general: GeneralRowMatcher?

        mutating func matches(_ key: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
            guard let general else { return true }
            if let decided = try scan?.matches(bytes, primaryKey: key) { return decided }
            return try general.matches(key, bytes)
        }
    }

    /// The test for a walk that reads no whole row, or nil when the predicate needs rows (an index to look
    /// up, or a key path beyond the entity's own attributes).
    private func referenceTest(_ predicate: FetchPredicate?, layout: LMDBEntityLayout) -> ReferenceTest? {
        guard let predicate else { return ReferenceTest(scan: nil, general: nil) }
        guard let entity = model.entity(named: layout.name), LMDBEncodedRowSubject.canEvaluate(predicate, entity: entity),
            LMDBQueryPlanner.lookup(for: predicate, table: layout, available: databases.indexes(root: layout.rootNumber)) == nil
        else { return nil }
        let general = GeneralRowMatcher(
            prepared: PredicateEvaluator.Prepared(predicate), positions: LMDBEncodedRowSubject.Positions(), schema: schema)
        // The scan's family is the whole table: the walk checks the row's entity first.
        guard let bytePredicate = LMDBBytePredicate(predicate, entity: entity),
            let table = schema.layout(number: layout.rootNumber)
        else { return ReferenceTest(scan: nil, general: general) }
        return ReferenceTest(scan: LMDBBytePredicate.Scan(bytePredicate, schema: schema, family: table.withSubentities), general: general)
    }
}

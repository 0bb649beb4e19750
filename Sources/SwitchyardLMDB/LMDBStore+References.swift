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
        func fromRows() throws {
            try fetch(request) { try body(RowReference(entityName: $0.entityName, primaryKey: $0.primaryKey)) }
        }
        guard request.sortKeys.isEmpty else { return try fromRows() }
        try checkOpen()
        let layout = try servedLayout(request.entityName)
        let prepared = try request.prepared(forStore: identifier, model: model)
        let family = prepared.includesSubentities ? layout.withSubentities : layout.alone
        // No predicate: every row of the family.
        var test: EncodedRowTest?
        if let predicate = prepared.predicate {
            guard let found = encodedRowTest(predicate, layout: layout, family: family) else { return try fromRows() }
            test = found
        }
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
                            guard try test?.matches(key, bytes) ?? true else { return true }
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
}

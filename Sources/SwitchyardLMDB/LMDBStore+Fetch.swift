import Foundation
import SwitchyardQuery
import SwitchyardStores

// MARK: - Fetch

extension LMDBStore {
    /// Matching rows, sorted like the memory store (`StoreRow.compare`, or `PredicateEvaluator.compare` for key
    /// paths through relationships, ties by primary key), then offset and limit — all in one snapshot.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try tracer.measure({ "LMDB fetch \(tracer.describe(request)): \($0.count) rows" }) { try fetchRows(request) }
    }

    /// The rows of `fetch`, each handed to `body` as it is read inside the read transaction when the request
    /// has no sort keys (rows come in primary-key order); sorted requests are read whole and sorted first.
    public func fetch(_ request: StoreFetchRequest, each body: (consuming StoreRow) throws -> Void) throws {
        guard request.sortKeys.isEmpty else {
            for row in try fetch(request) { try body(row) }
            return
        }
        // The trace line times the read, not what the caller does with each row.
        var callerNanos: UInt64 = 0
        _ = try tracer.measure({ (count: Int) in "LMDB fetch \(tracer.describe(request)): \(count) rows" }, excluding: { callerNanos }) {
            try checkOpen()
            let layout = try servedLayout(request.entityName)
            return try request.withPrepared(forStore: identifier, model: model) { request in
                var failure: Error?
                var delivered = 0
                let visited: Int
                do {
                    visited = try environment.read { txn -> Int in
                        let reader = LMDBReader(store: self, transaction: txn)
                        var skipped = 0
                        let offset = max(request.fetchOffset, 0)
                        let limit = request.fetchLimit.map { max($0, 0) }
                        if limit == 0 { return 0 }
                        try forEachMatchingRow(
                            request.predicate, layout: layout, includesSubentities: request.includesSubentities, reader: reader
                        ) { row in
                            if skipped < offset {
                                skipped += 1
                                return true
                            }
                            delivered += 1
                            do { try tracer.handOver(consume row, to: body, callerNanos: &callerNanos) } catch {
                                failure = error
                                throw error
                            }
                            return limit.map { delivered < $0 } ?? true
                        }
                        return reader.rowsVisited
                    }
                } catch {
                    // The caller's own error comes out as it is.
                    throw failure ?? error
                }
                rowsVisited.store(visited, ordering: .relaxed)
                tracePlan("fetch", request, layout: layout, visited: visited)
                return delivered
            }
        }
    }

    private func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try checkOpen()
        let layout = try servedLayout(request.entityName)
        let request = try request.prepared(forStore: identifier, model: model)
        let (rows, visited) = try environment.read { txn -> ([StoreRow], Int) in
            let reader = LMDBReader(store: self, transaction: txn)
            // Without sorting, rows arrive in primary-key order: stop once offset + limit have matched.
            let enough = request.sortKeys.isEmpty ? request.fetchLimit.map { max(request.fetchOffset, 0) + $0 } : nil
            var rows = try matchingRows(
                request.predicate, layout: layout, includesSubentities: request.includesSubentities, reader: reader,
                stopAfter: enough)
            if !request.sortKeys.isEmpty { rows = try sort(rows, by: request.sortKeys, reader: reader) }
            let start = min(max(request.fetchOffset, 0), rows.count)
            let end = request.fetchLimit.map { min(start + max($0, 0), rows.count) } ?? rows.count
            if start == 0, end == rows.count { return (rows, reader.rowsVisited) }
            return (Array(rows[start..<end]), reader.rowsVisited)
        }
        rowsVisited.store(visited, ordering: .relaxed)
        tracePlan("fetch", request, layout: layout, visited: visited)
        return rows
    }

    /// Level 2: how a fetch or count found its candidates (an index or a scan) and how many rows it read.
    private func tracePlan(_ operation: String, _ request: StoreFetchRequest, layout: LMDBEntityLayout, visited: Int) {
        guard tracer.level >= .statements else { return }
        let plan: String
        if let lookup = LMDBQueryPlanner.lookup(for: request.predicate, table: layout, available: databases.indexes(root: layout.rootNumber)) {
            let values = tracer.level >= .arguments ? " \(lookup.values)" : " (\(lookup.values.count) value\(lookup.values.count == 1 ? "" : "s"))"
            plan = "index \(lookup.index) of \(layout.rootName) for\(values)\(lookup.covers ? ", covering the predicate" : ", predicate checked per row")"
        } else {
            plan = "scan of \(layout.rootName)"
        }
        tracer.emit("LMDB \(operation) plan for \(request.entityName): \(plan); \(visited) rows read")
    }

    /// The number of rows `fetch` would return without limit and offset.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        try tracer.measure({ "LMDB count \(tracer.describe(request)): \($0)" }) { try countRows(request) }
    }

    private func countRows(_ request: StoreFetchRequest) throws -> Int {
        try checkOpen()
        let layout = try servedLayout(request.entityName)
        let request = try request.prepared(forStore: identifier, model: model)
        let (count, visited) = try environment.read { txn -> (Int, Int) in
            let reader = LMDBReader(store: self, transaction: txn)
            let family = reader.family(of: layout, includesSubentities: request.includesSubentities)
            guard let predicate = request.predicate else {
                // Only each row's entity number is read.
                return (try reader.count(root: layout.rootNumber, family: family), 0)
            }
            if let test = encodedRowTest(predicate, layout: layout, family: family) {
                guard var scan = test.scan else {
                    return (try reader.count(root: layout.rootNumber, family: family, where: test.general.matches), reader.rowsVisited)
                }
                // Unwrapped once: testing and unwrapping the optional per row copied the scan's state.
                let count = try reader.count(root: layout.rootNumber, scan: &scan, general: test.general.matches)
                return (count, scan.rowsInFamily)
            }
            let rows = try matchingRows(
                request.predicate, layout: layout, includesSubentities: request.includesSubentities, reader: reader,
                stopAfter: nil)
            return (rows.count, reader.rowsVisited)
        }
        rowsVisited.store(visited, ordering: .relaxed)
        tracePlan("count", request, layout: layout, visited: visited)
        return count
    }

    /// The rows with these references that exist (of exactly the referenced entity).
    public func rows(for references: [RowReference]) throws -> [StoreRow] {
        try checkOpen()
        return try environment.read { txn in
            let reader = LMDBReader(store: self, transaction: txn)
            var rows: [StoreRow] = []
            for reference in references {
                guard let layout = schema.layout(named: reference.entityName), layout.isServed,
                    let row = try reader.row(root: layout.rootNumber, primaryKey: reference.primaryKey),
                    row.entityName == reference.entityName
                else { continue }
                rows.append(row)
            }
            return rows
        }
    }

    /// Rows of the request's entity (and subentities) matching its predicate, in primary-key order: through
    /// an index when `LMDBQueryPlanner` finds one, else by walking the table.
    private func matchingRows(
        _ predicate: FetchPredicate?, layout: LMDBEntityLayout, includesSubentities: Bool, reader: LMDBReader,
        stopAfter enough: Int?
    ) throws -> [StoreRow] {
        if let enough, enough <= 0 { return [] }
        var rows: [StoreRow] = []
        // A walk of the whole table (no predicate, so no index either) returns up to every row of the store:
        // reserving that many at once avoids growing the array by doubling (copies and fresh pages for twice the
        // final size). An estimate far above what matched is given back below.
        if predicate == nil, enough == nil {
            rows.reserveCapacity(try reader.transaction.entryCount(databases.rows))
        }
        try forEachMatchingRow(predicate, layout: layout, includesSubentities: includesSubentities, reader: reader) { row in
            rows.append(row)
            return enough.map { rows.count < $0 } ?? true
        }
        if rows.capacity > 2 * rows.count + 1024 { return Array(rows) }
        return rows
    }

    /// Hands each row matching `predicate` to `body`, in primary-key order (or the index's), until `body`
    /// returns false.
    private func forEachMatchingRow(
        _ predicate: FetchPredicate?, layout: LMDBEntityLayout, includesSubentities: Bool, reader: LMDBReader,
        _ body: (consuming StoreRow) throws -> Bool
    ) throws {
        let family = reader.family(of: layout, includesSubentities: includesSubentities)
        let lookup = LMDBQueryPlanner.lookup(for: predicate, table: layout, available: databases.indexes(root: layout.rootNumber))
        // With no predicate, or one the index answers exactly, every candidate is a match.
        let evaluated = (lookup?.covers ?? false) ? nil : predicate.map(PredicateEvaluator.Prepared.init)
        let firstKey = lookup == nil ? LMDBQueryPlanner.primaryKeyLowerBound(of: predicate) : 0
        try reader.candidates(root: layout.rootNumber, family: family, lookup: lookup, from: firstKey) { row in
            if let predicate = evaluated {
                guard try PredicateEvaluator.evaluate(predicate, on: LMDBRowSubject(row: row, reader: reader)) else { return true }
            }
            return try body(consume row)
        }
    }

    private func sort(_ rows: [StoreRow], by sortKeys: [SortKey], reader: LMDBReader) throws -> [StoreRow] {
        try rows.sorted(by: sortKeys) { LMDBRowSubject(row: $0, reader: reader) }
    }
}

extension LMDBStore {
    /// How a walk that builds no rows (`count`, `fetchReferences`) decides a row of `family` from its encoded
    /// bytes when `predicate` reads only the entity's own attributes: simple comparisons compiled against the
    /// bytes (`scan`), the general evaluation for a row they cannot read. Nil when the predicate needs rows: an
    /// index to look up, or a key path beyond the entity's attributes.
    func encodedRowTest(_ predicate: FetchPredicate, layout: LMDBEntityLayout, family: [Bool]) -> EncodedRowTest? {
        guard let entity = model.entity(named: layout.name), LMDBEncodedRowSubject.canEvaluate(predicate, entity: entity),
            LMDBQueryPlanner.lookup(for: predicate, table: layout, available: databases.indexes(root: layout.rootNumber)) == nil
        else { return nil }
        let general = GeneralRowMatcher(
            prepared: PredicateEvaluator.Prepared(predicate), positions: LMDBEncodedRowSubject.Positions(), schema: schema)
        let scan = LMDBBytePredicate(predicate, entity: entity).map { LMDBBytePredicate.Scan($0, schema: schema, family: family) }
        return EncodedRowTest(scan: scan, general: general)
    }
}

/// See `LMDBStore.encodedRowTest(_:layout:family:)`.
struct EncodedRowTest {
    var scan: LMDBBytePredicate.Scan?
    let general: GeneralRowMatcher

    /// Whether the row matches: the byte predicate's answer, or the general evaluation's where it has none.
    mutating func matches(_ key: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
        if let decided = try scan?.matches(bytes, primaryKey: key) { return decided }
        return try general.matches(key, bytes)
    }
}

/// The general evaluation of a predicate on an encoded row, for the rows a byte predicate cannot read: one
/// reference for the walk to hold, its work kept out of line. (Callgrind showed no change against a local
/// closure once the scan was unwrapped outside the walk; that unwrapping is what removed the per-row copies.)
final class GeneralRowMatcher {
    let prepared: PredicateEvaluator.Prepared
    let positions: LMDBEncodedRowSubject.Positions
    let schema: LMDBSchema

    init(prepared: PredicateEvaluator.Prepared, positions: LMDBEncodedRowSubject.Positions, schema: LMDBSchema) {
        self.prepared = prepared
        self.positions = positions
        self.schema = schema
    }

    @inline(never)
    func matches(_ key: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
        try PredicateEvaluator.evaluate(prepared, on: LMDBEncodedRowSubject(bytes: bytes, primaryKey: key, schema: schema, positions: positions))
    }
}

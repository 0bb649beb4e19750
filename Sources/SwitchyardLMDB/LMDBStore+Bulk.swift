import Foundation
import SwitchyardStores

// MARK: - Bulk copy

extension LMDBStore: BulkCopyStore {
    /// A cursor walk from the key after `primaryKey`, keeping rows of exactly `entityName`.
    package func rowBatch(entityName: String, after primaryKey: Int64?, limit: Int) throws -> [StoreRow] {
        try checkOpen()
        let layout = try servedLayout(entityName)
        guard limit > 0 else { return [] }
        return try environment.read { txn in
            let reader = LMDBReader(store: self, transaction: txn)
            let root = layout.rootNumber
            var rows: [StoreRow] = []
            let start = primaryKey.map { $0 == Int64.max ? nil : $0 + 1 } ?? 0
            guard let start else { return [] }
            try txn.withCursor(databases.rows) { cursor in
                var entry = try cursor.seek(atLeast: LMDBRowKey.make(root: root, primaryKey: start))
                while let current = entry, LMDBRowKey.root(of: current.key) == root, rows.count < limit {
                    let key = LMDBRowKey.primaryKey(of: current.key)
                    let number: Int
                    do {
                        number = try LMDBRowCoding.entityNumber(of: current.value)
                    } catch {
                        throw LMDBRowCoding.damagedRow(path: path, primaryKey: key, error)
                    }
                    if number < layout.alone.count, layout.alone[number], let row = try reader.row(root: root, primaryKey: key) {
                        rows.append(row)
                    }
                    entry = try cursor.next()
                }
            }
            return rows
        }
    }

    package func primaryKeyMaxima() throws -> [String: Int64] {
        try checkOpen()
        return try environment.read { txn in
            var result: [String: Int64] = [:]
            // By the root of every served entity: a configuration may hold a subentity without its root (whose
            // counter its objects still take keys from), and that root's counter was left out.
            for root in Set(entities.map(\.rootName)) {
                result[root] = try maxKey(root: root, txn: txn)
            }
            return result
        }
    }

    /// The first key of each root's range in `rows` (a seek to the root's key 0) and the last (one cursor step
    /// back from the next root's first key).
    package func primaryKeyRanges() throws -> [String: ClosedRange<Int64>] {
        try checkOpen()
        var roots: [String: Int] = [:]
        for entity in entities { roots[entity.rootName] = try servedLayout(entity.name).rootNumber }
        return try environment.read { txn in
            var result: [String: ClosedRange<Int64>] = [:]
            try txn.withCursor(databases.rows) { cursor in
                // Rows are keyed by root, then primary key: the first and last row of the root's key range.
                for (name, root) in roots {
                    guard let first = try cursor.seek(atLeast: LMDBRowKey.make(root: root, primaryKey: 0)),
                        LMDBRowKey.root(of: first.key) == root
                    else { continue }
                    let following = try cursor.seek(atLeast: LMDBRowKey.make(root: root + 1, primaryKey: 0))
                    guard let last = following == nil ? try cursor.last() : try cursor.previous(),
                        LMDBRowKey.root(of: last.key) == root
                    else { continue }
                    let smallest = LMDBRowKey.primaryKey(of: first.key), largest = LMDBRowKey.primaryKey(of: last.key)
                    result[name] = min(smallest, largest)...largest
                }
            }
            return result
        }
    }

    package func setPrimaryKeyMaxima(_ maxima: [String: Int64]) throws {
        try checkWritable("set Z_MAX")
        try environment.write { txn in
            for (root, max) in maxima.sorted(by: { $0.key < $1.key }) { try setMaxKey(max, root: root, txn: txn) }
        }
    }

    /// An LMDB store holds nothing outside its model.
    package func extraneousItems() throws -> [StoreExtraneousItem] { [] }

    package func refuseInsideOwnTransaction(_ operation: String) throws {
        try environment.refuseInsideOwnTransaction(operation)
    }

    /// Closes the environment (LMDB commits are durable already).
    package func closeFiles() throws {
        // Refused before anything changes: only this thread can enter or leave its own transactions.
        try environment.refuseInsideOwnTransaction("close the store (to move, replace or remove its files)")
        closed.store(true, ordering: .releasing)
        environment.close()
    }

    package func releaseCachedPages() {
        environment.releaseMappedPages()
    }

    package func walkingCount(entityName: String) throws -> Int {
        try checkOpen()
        let layout = try servedLayout(entityName)
        let count = try environment.read { txn in
            let reader = LMDBReader(store: self, transaction: txn)
            return try reader.count(root: layout.rootNumber, family: reader.family(of: layout, includesSubentities: false))
        }
        environment.releaseMappedPages()
        return count
    }
}

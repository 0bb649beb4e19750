import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - Ordering

extension StoreRow {
    /// Compares two rows by attribute sort descriptors with `AttributeValue.order` (NULL first ascending,
    /// last descending, as SQLite orders), ties broken by primary key ascending — the order every store returns.
    public static func compare(_ a: StoreRow, _ b: StoreRow, by sort: [SortKey]) -> ComparisonResult {
        for descriptor in sort {
            let result = AttributeValue.order(a[descriptor.key], b[descriptor.key])
            if result != .orderedSame {
                return descriptor.ascending ? result : (result == .orderedAscending ? .orderedDescending : .orderedAscending)
            }
        }
        if a.primaryKey == b.primaryKey { return .orderedSame }
        return a.primaryKey < b.primaryKey ? .orderedAscending : .orderedDescending
    }
}

extension Array where Element == StoreRow {
    /// The rows in `StoreRow.compare`'s order for sort keys that name attributes of the rows themselves (no
    /// key path through a relationship), each row's sort values read once (`PredicateEvaluator.order`).
    /// Comparing whole rows read every value by name at every comparison and copied rows as the sort moved
    /// them: ten times the work of the comparisons themselves (callgrind, 20,000 LMDB rows sorted by an integer).
    package func sortedByAttributes(_ sortKeys: [SortKey]) -> [StoreRow] {
        var caches = [(layout: ObjectIdentifier?, position: Int?)](repeating: (nil, nil), count: sortKeys.count)
        let order = PredicateEvaluator.order(of: count, by: sortKeys) { row, k in
            self[row].values.value(named: sortKeys[k].key, cache: &caches[k])
        } tie: { self[$0].primaryKey < self[$1].primaryKey }
        return order.map { self[$0] }
    }

    /// The rows sorted by `sortKeys`, ties in primary-key order: by attribute position when every key is an
    /// attribute, else through `subject` (a store's view of a row, which follows key paths through relationships).
    package func sorted(by sortKeys: [SortKey], subject: (StoreRow) -> any PredicateSubject) throws -> [StoreRow] {
        if sortKeys.allSatisfy({ !$0.key.contains(".") }) { return sortedByAttributes(sortKeys) }
        let subjects = map(subject)
        let paths = PredicateEvaluator.paths(of: sortKeys)
        let order = try PredicateEvaluator.order(of: count, by: sortKeys) {
            try PredicateEvaluator.sortValue(subjects[$0], paths[$1])
        } tie: { self[$0].primaryKey < self[$1].primaryKey }
        return order.map { self[$0] }
    }

    /// The rows a fetch returns from the matching rows in primary-key order: sorted by `request`'s sort keys
    /// (see `sorted(by:subject:)`), then cut to its offset and limit. The stores that sort in Swift (memory,
    /// PostgreSQL) share it.
    package func ordered(for request: StoreFetchRequest, subject: (StoreRow) -> any PredicateSubject) throws -> [StoreRow] {
        let rows = request.sortKeys.isEmpty ? self : try sorted(by: request.sortKeys, subject: subject)
        let start = Swift.min(request.fetchOffset, rows.count)
        let end = request.fetchLimit.map { Swift.min(start + $0, rows.count) } ?? rows.count
        return Array(rows[start..<end])
    }
}

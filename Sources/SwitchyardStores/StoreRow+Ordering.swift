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
    /// The rows a fetch returns from the matching rows in primary-key order: sorted by `request`'s sort keys
    /// (key paths through relationships read through `subject`, a store's view of a row for the predicate
    /// evaluator), then cut to its offset and limit. The stores that sort in Swift (memory, PostgreSQL) share it.
    package func ordered(for request: StoreFetchRequest, subject: (StoreRow) -> any PredicateSubject) throws -> [StoreRow] {
        var rows = self
        if !request.sortKeys.isEmpty {
            if request.sortKeys.allSatisfy({ !$0.key.contains(".") }) {
                rows.sort { StoreRow.compare($0, $1, by: request.sortKeys) == .orderedAscending }
            } else {
                let subjects = rows.map(subject)
                var failure: Error?
                let order = subjects.indices.sorted { i, j in
                    do {
                        let r = try PredicateEvaluator.compare(subjects[i], subjects[j], by: request.sortKeys)
                        return r == .orderedSame ? rows[i].primaryKey < rows[j].primaryKey : r == .orderedAscending
                    } catch {
                        failure = failure ?? error
                        return false
                    }
                }
                if let failure { throw failure }
                rows = order.map { rows[$0] }
            }
        }
        let start = Swift.min(request.fetchOffset, rows.count)
        let end = request.fetchLimit.map { Swift.min(start + $0, rows.count) } ?? rows.count
        return Array(rows[start..<end])
    }
}

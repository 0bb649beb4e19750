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

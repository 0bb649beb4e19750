import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Persistent history

/// A memory store keeps its history in memory, as long as the store: it serves merging between contexts of one
/// process and the same API as the file stores.
extension InMemoryStore: HistoryTrackingStore {
    package func history(after: Int64?, limit: Int?) throws -> [StoredHistoryTransaction] {
        try checkHistory()
        return try read { c in
            try HistoryBounds.check(
                after: after, last: c.lastHistoryNumber, oldest: c.history.first?.number, path: displayPath, configuration: configurationName)
            let later = c.history.drop { $0.number <= after ?? 0 }
            return Array(limit.map { later.prefix($0) } ?? later)
        }
    }

    package func lastHistoryNumber() throws -> Int64 {
        try checkHistory()
        return try read { $0.lastHistoryNumber }
    }

    package func lastHistoryNumber(before date: Date) throws -> Int64 {
        try checkHistory()
        return try read { c in
            // Before the first transaction recorded at or after `date`, as on every backend.
            let later = c.history.firstIndex { $0.timestamp >= date } ?? c.history.endIndex
            return later > c.history.startIndex ? c.history[later - 1].number : 0
        }
    }

    package func deleteHistory(through number: Int64) throws -> Int {
        try checkHistory()
        return try write { c in
            let before = c.history.count
            c.history.removeAll { $0.number <= number }
            return before - c.history.count
        }
    }

    private func checkHistory() throws {
        guard tracksHistory else { throw StoreError.historyNotTracked(path: displayPath, configuration: configurationName) }
    }
}

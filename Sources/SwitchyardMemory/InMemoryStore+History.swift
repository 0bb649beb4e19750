import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Persistent history

/// A memory store keeps its history in memory, as long as the store: it serves merging between contexts of one
/// process and the same API as the file stores.
extension InMemoryStore: HistoryTrackingStore {
    package func history(after: Int64, limit: Int?) throws -> [StoredHistoryTransaction] {
        try checkHistory()
        return try contents.withLock { c in
            guard let c else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
            let oldest = c.history.first?.number ?? c.lastHistoryNumber + 1
            if after > 0, after < c.lastHistoryNumber, oldest > after + 1 {
                throw StoreError.historyExpired(path: displayPath, configuration: configurationName, after: after, oldestKept: oldest)
            }
            let later = c.history.drop { $0.number <= after }
            return Array(limit.map { later.prefix($0) } ?? later)
        }
    }

    package func lastHistoryNumber() throws -> Int64 {
        try checkHistory()
        return try contents.withLock { c in
            guard let c else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
            return c.lastHistoryNumber
        }
    }

    package func lastHistoryNumber(before date: Date) throws -> Int64 {
        try checkHistory()
        return try contents.withLock { c in
            guard let c else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
            return c.history.last { $0.timestamp < date }?.number ?? 0
        }
    }

    package func deleteHistory(through number: Int64) throws -> Int {
        try checkHistory()
        return try contents.withLock { c in
            guard c != nil else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
            let before = c!.history.count
            c!.history.removeAll { $0.number <= number }
            return before - c!.history.count
        }
    }

    private func checkHistory() throws {
        guard tracksHistory else { throw StoreError.historyNotTracked(path: displayPath, configuration: configurationName) }
    }
}

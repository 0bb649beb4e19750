import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Persistent history

extension StoreCoordinator {
    /// The transactions recorded after `token` (nil: every transaction kept) by the store of `configuration`,
    /// oldest first, at most `limit` — whichever process wrote them. Core Data's
    /// `NSPersistentHistoryChangeRequest.fetchHistory(after:)`.
    ///
    /// ```swift
    /// let transactions = try coordinator.history(after: lastMerged, in: "Cloud")
    /// try context.mergeChanges(fromHistory: transactions.filter { $0.author != "app" })
    /// lastMerged = transactions.last?.token ?? lastMerged
    /// ```
    ///
    /// - Throws: `CoordinatorError.noStoreForConfiguration`; `StoreError.historyNotTracked` when the store does not
    ///   record history; `CoordinatorError.historyTokenFromAnotherStore` for a token of another store;
    ///   `StoreError.historyExpired` when history after `token` was deleted; `StoreError.historyTokenAhead` when
    ///   `token` is past the store's last transaction (the store was restored from an older copy or replaced).
    public func history(after token: HistoryToken?, in configuration: String, limit: Int? = nil) throws -> [HistoryTransaction] {
        let store = try historyStore(configuration)
        let after = try number(of: token, in: store)
        if let limit, limit < 0 {
            throw StoreError.invalidValue(
                path: store.displayPath, configuration: configuration, entity: "history", attribute: "limit", value: String(limit),
                expected: "limit of zero or more transactions")
        }
        return try store.history(after: after, limit: limit).map { HistoryTransaction($0, store: store.identifier, configuration: configuration) }
    }

    /// The token of the last transaction the store of `configuration` has committed: ask for history after it
    /// to see only what happens from now on.
    public func currentHistoryToken(for configuration: String) throws -> HistoryToken {
        let store = try historyStore(configuration)
        return HistoryToken(storeIdentifier: store.identifier, transactionNumber: try store.lastHistoryNumber())
    }

    /// Deletes the history of `token`'s store up to and including `token`'s transaction: Core Data's
    /// `deleteHistory(before:)` with a token. Returns how many transactions were deleted. A process still holding
    /// an older token then gets `StoreError.historyExpired` and must refetch instead of merging.
    @discardableResult
    public func deleteHistory(through token: HistoryToken) throws -> Int {
        guard let store = self.store(withIdentifier: token.storeIdentifier) else {
            throw CoordinatorError.historyTokenFromAnotherStore(
                token: token.description, configuration: nil, store: nil, path: nil)
        }
        let tracking = try historyStore(store.configurationName)
        return try tracking.deleteHistory(through: token.transactionNumber)
    }

    /// Deletes the history of the store of `configuration` recorded before `date`. Returns how many transactions
    /// were deleted.
    @discardableResult
    public func deleteHistory(before date: Date, in configuration: String) throws -> Int {
        let store = try historyStore(configuration)
        let last = try store.lastHistoryNumber(before: date)
        return last > 0 ? try store.deleteHistory(through: last) : 0
    }

    /// Every transaction the store of `configuration` commits after `token` (nil: from the oldest kept), from
    /// this process or any other sharing the store, as it commits: Core Data's remote-change notification with
    /// its history fetch. A thread of the stream's own checks the store's last transaction number every
    /// `pollInterval` (one read of history bookkeeping, never of the data tables) and reads the new transactions;
    /// the stream ends when its consumer is cancelled or drops it, and throws what reading history throws
    /// (a token of another store, expired history, a token past the store's last transaction, the store closed)
    /// and `CoordinatorError.storeNotInCoordinator` once the store is removed, moved or replaced: subscribe again
    /// from the last token received.
    ///
    /// ```swift
    /// let token = try coordinator.currentHistoryToken(for: "Cloud")
    /// for try await transaction in coordinator.historyTransactions(after: token, in: "Cloud")
    ///     where transaction.author != context.transactionAuthor {
    ///     try context.mergeChanges(fromHistory: [transaction])
    /// }
    /// ```
    public func historyTransactions(
        after token: HistoryToken?, in configuration: String, pollInterval: Duration = .milliseconds(10)
    ) -> AsyncThrowingStream<HistoryTransaction, Error> {
        AsyncThrowingStream { continuation in
            let store: any HistoryTrackingStore
            let start: Int64?
            do {
                store = try historyStore(configuration)
                start = try number(of: token, in: store)
                // The token is checked now (another store's, expired, ahead of the store), not at the first save.
                _ = try store.history(after: start, limit: 0)
            } catch {
                continuation.finish(throwing: error)
                return
            }
            let stopped = Locked(false)
            continuation.onTermination = { _ in stopped.withLock { $0 = true } }
            let pause = max(0.001, Double(pollInterval.components.seconds) + Double(pollInterval.components.attoseconds) / 1e18)
            // A thread, not a task: reading the store blocks, and must not hold one of the cooperative pool's threads.
            let watcher = Thread { [weak self] in
                var after = start
                do {
                    while !stopped.withLock({ $0 }) {
                        let last = try store.lastHistoryNumber()
                        guard last > (after ?? 0) else {
                            // A store removed from the coordinator (or replaced, moved) is no longer followed.
                            guard let self, self.store(withIdentifier: store.identifier) === store else {
                                throw CoordinatorError.storeNotInCoordinator(path: store.displayPath)
                            }
                            // A store that went back (restored from an older copy) says so.
                            if let after, last < after { _ = try store.history(after: after, limit: 0) }
                            Thread.sleep(forTimeInterval: pause)
                            continue
                        }
                        let transactions = try store.history(after: after, limit: 500)
                        for transaction in transactions {
                            continuation.yield(HistoryTransaction(transaction, store: store.identifier, configuration: configuration))
                        }
                        after = max(transactions.last?.number ?? last, after ?? 0)
                    }
                    continuation.finish()
                } catch StoreError.closed {
                    // Closed for a move or a replacement (or destroyed): the store followed is gone, as when it is
                    // removed, and the subscriber follows the coordinator's current store from its last token.
                    continuation.finish(throwing: CoordinatorError.storeNotInCoordinator(path: store.displayPath))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            watcher.name = "switchyard.history.\(configuration)"
            watcher.start()
        }
    }

    // MARK: Helpers

    /// The store of `configuration`, which must record history.
    package func historyStore(_ configuration: String) throws -> any HistoryTrackingStore {
        guard let store = stores.first(where: { $0.configurationName == configuration }) else {
            throw CoordinatorError.noStoreForConfiguration(name: configuration, added: stores.map(\.configurationName).sorted())
        }
        guard let tracking = store as? any HistoryTrackingStore, tracking.tracksHistory else {
            throw StoreError.historyNotTracked(path: store.displayPath, configuration: configuration)
        }
        return tracking
    }

    /// The transaction number `token` names in `store` (nil for a nil token: everything kept), or
    /// `historyTokenFromAnotherStore`; a negative number is `StoreError.invalidValue`.
    private func number(of token: HistoryToken?, in store: any HistoryTrackingStore) throws -> Int64? {
        guard let token else { return nil }
        guard token.storeIdentifier == store.identifier else {
            throw CoordinatorError.historyTokenFromAnotherStore(
                token: token.description, configuration: store.configurationName, store: store.identifier, path: store.displayPath)
        }
        guard token.transactionNumber >= 0 else {
            throw StoreError.invalidValue(
                path: store.displayPath, configuration: store.configurationName, entity: "history", attribute: "token",
                value: token.description, expected: "token (transaction numbers start at 0)")
        }
        return token.transactionNumber
    }
}

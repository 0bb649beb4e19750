import Foundation
import SwitchyardQuery
import SwitchyardStores

// MARK: - Walking many objects in batches

extension ObjectContext {
    /// Hands `body` every object `request` selects, reading them from the stores `batchSize` at a time and
    /// letting each batch go once it has been seen, so memory stays bounded however many objects there are
    /// (Core Data's `fetchBatchSize` with faults, as a walk).
    ///
    /// Objects the context already held, and objects `body` changes, stay registered; the others are released
    /// after their batch (keep a reference to one to keep it, though a later fetch then gives a new instance).
    /// Without sort keys each store is walked in primary-key order, a batch at a time from the last key seen;
    /// with sort keys the batches follow the sort through `fetchOffset`, which costs more per batch on large
    /// stores. With unsaved changes that the request can see, the walk is a plain `fetch`.
    /// ```swift
    /// try context.forEach(FetchRequest(entityName: "Message"), batchSize: 1_000) { message in
    ///     total += try message.get("text", as: String.self)?.count ?? 0
    /// }
    /// ```
    public func forEach(_ request: FetchRequest, batchSize: Int = 1_000, _ body: (ManagedObject) throws -> Void) throws {
        precondition(batchSize > 0, "batchSize must be positive")
        let request = try request.normalized()
        let probe = FetchRequest(entityName: request.entityName, predicate: request.predicate, fetchLimit: 1)
        var unsorted = request
        unsorted.sortKeys = []
        // Anything unsaved the request could see, or a limit/offset to honour exactly: one plain fetch.
        if hasChanges || request.fetchLimit != nil || request.fetchOffset > 0 {
            _ = try fetch(probe)   // validates the request before the fallback reads everything
            for object in try fetch(request) { try body(object) }
            return
        }
        if !request.sortKeys.isEmpty {
            var offset = 0
            while true {
                var page = request
                page.fetchOffset = offset
                page.fetchLimit = batchSize
                let count = try walkBatch(page, body)
                if count < batchSize { return }
                offset += count
            }
        }
        for store in try coordinator.targetStores(for: request) {
            var last: Int64 = 0
            var walked = 0
            while true {
                var page = unsorted
                page.affectedStoreIdentifiers = [store.identifier]
                let after = FetchPredicate.comparison(Comparison(.keyPath([]), .greater, .constant(.integer(last))))
                page.predicate = request.predicate.map { .and([$0, after]) } ?? after
                page.fetchLimit = batchSize
                var lastSeen: Int64?
                let count = try walkBatch(page) { object in
                    lastSeen = object.objectID.primaryKey
                    try body(object)
                }
                guard count == batchSize, let lastSeen else { break }
                last = lastSeen
                walked += count
                // An LMDB store's map holds every page read so far: let them go now and then, so the walk's
                // resident memory stays that of its batches.
                if walked % 50_000 < count { (store as? BulkCopyStore)?.releaseCachedPages() }
            }
        }
    }

    /// `forEach` for a typed entity.
    public func forEach<E: EntityObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sortKeys: [TypedSortKey<E>] = [],
        batchSize: Int = 1_000, _ body: (E) throws -> Void
    ) throws {
        try coordinator.registerType(type)
        let request = FetchRequest(entityName: E.entityName, predicate: try predicate?.checked(), sortKeys: try TypedSortKey.checked(sortKeys))
        try forEach(request, batchSize: batchSize) { try body(E(managedObject: $0)) }
    }

    /// Fetches one batch, hands it to `body`, then releases the objects the context did not hold before and
    /// that have no changes; returns how many objects the batch had.
    private func walkBatch(_ page: FetchRequest, _ body: (ManagedObject) throws -> Void) throws -> Int {
        let rows = try coordinator.fetchRows(page)
        let held = Set(rows.lazy.map(\.objectID).filter { self.registered[$0] != nil })
        let objects = register(rows)
        defer {
            for object in objects where !object.hasChanges && !held.contains(object.objectID) {
                registered[object.objectID] = nil
            }
        }
        for object in objects { try body(object) }
        return objects.count
    }
}

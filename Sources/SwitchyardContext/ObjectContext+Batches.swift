import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - Walking many objects in batches

extension ObjectContext {
    /// Hands `body` every object `request` selects, reading them from the stores `batchSize` at a time and
    /// letting each batch go once it has been seen, so memory stays bounded however many objects there are
    /// (Core Data's `fetchBatchSize` with faults, as a walk).
    ///
    /// The objects walked are those the request selects when the walk starts, in its order, each handed once,
    /// as Core Data's batched fetch keeps the object IDs its first fetch found: the walk first reads which
    /// objects match (keeping 8 bytes of each, not the object, and reading no values where the store can), then
    /// reads each batch's rows by key. So objects saved after it started — by `body`, this context or anyone
    /// else — are not handed, an object deleted before its batch is skipped, and changing a sort key or
    /// predicate attribute in `body` (and saving) moves nothing: each object is handed once, with its current
    /// values. Objects the context already held, and
    /// objects `body` changes, stay registered; the others are released after their batch (keep a reference to
    /// one to keep it, though a later fetch then gives a new instance). With unsaved changes that the request
    /// can see, a limit or an offset, or a `batchSize` of 0 (as in Core Data: no batching), the walk is a plain
    /// `fetch`. A negative `batchSize` is `QueryError.invalidRequest`.
    /// ```swift
    /// try context.forEach(FetchRequest(entityName: "Message"), batchSize: 1_000) { message in
    ///     total += try message.get("text", as: String.self)?.count ?? 0
    /// }
    /// ```
    public func forEach(_ request: FetchRequest, batchSize: Int = 1_000, _ body: (ManagedObject) throws -> Void) throws {
        guard batchSize >= 0 else { throw QueryError.invalidRequest("batchSize \(batchSize) is negative (0 means no batching)") }
        let request = try request.normalized()
        // Anything unsaved the request could see, a limit/offset to honour exactly, or no batching: one plain fetch.
        if batchSize == 0 || hasChanges || request.fetchLimit != nil || request.fetchOffset > 0 {
            for object in try fetch(request) { try body(object) }
            return
        }
        let targets = try coordinator.targetStores(for: request)
        let walk = try walkKeys(request, targets: targets)
        var start = 0
        var walked = 0
        while start < walk.count {
            let end = min(start + batchSize, walk.count)
            try walkBatch(walk.ids(start..<end, targets: targets), body)
            walked += end - start
            start = end
            // An LMDB store's map holds every page read so far: let them go now and then, so the walk's
            // resident memory stays that of its batches.
            if walked % 50_000 < batchSize {
                for store in targets { (store as? BulkCopyStore)?.releaseCachedPages() }
            }
        }
    }

    /// Which objects a walk hands, in order: their primary keys, and runs of consecutive ones that share a
    /// store (by position in the walk's targets) and an entity (by position in `entityNames`). The keys are
    /// kept in chunks of fixed size, so a million of them take 8 MB and are never copied to grow.
    private struct WalkKeys {
        static let chunkSize = 1 << 16
        var entityNames: [String] = []
        private var chunks: [[Int64]] = []
        /// Runs in order: the index of each run's first key, its store and its entity (16 bytes a run; a
        /// table whose entities alternate row by row takes a run per row, as many bytes as the keys did before).
        private var runs: [(start: Int, store: UInt32, entity: UInt32)] = []
        private(set) var count = 0

        mutating func append(store: Int, entity: Int, primaryKey: Int64) {
            if let last = runs.last, last.store == UInt32(store), last.entity == UInt32(entity) {} else {
                runs.append((count, UInt32(store), UInt32(entity)))
            }
            if count % Self.chunkSize == 0 {
                chunks.append([])
                chunks[chunks.count - 1].reserveCapacity(Self.chunkSize)
            }
            chunks[chunks.count - 1].append(primaryKey)
            count += 1
        }

        /// The object IDs of the keys in `range`.
        func ids(_ range: Range<Int>, targets: [any PersistentStore]) -> [ObjectID] {
            // The last run starting at or before the range (runs are sorted by their start).
            var low = 0, high = runs.count
            while low < high {
                let middle = (low + high) / 2
                if runs[middle].start <= range.lowerBound { low = middle + 1 } else { high = middle }
            }
            var run = low - 1
            var ids: [ObjectID] = []
            ids.reserveCapacity(range.count)
            for index in range {
                while run + 1 < runs.count, runs[run + 1].start <= index { run += 1 }
                let (_, store, entity) = runs[run]
                let key = chunks[index / Self.chunkSize][index % Self.chunkSize]
                ids.append(ObjectID(store: targets[Int(store)].identifier, entityName: entityNames[Int(entity)], primaryKey: key))
            }
            return ids
        }
    }

    /// The keys of the objects `request` selects now, in its order. Each store's matching rows are read as
    /// references, without their values where the store can (`PersistentStore.fetchReferences`: without sort
    /// keys, store by store in primary-key order); rows of several stores under sort keys are merged whole
    /// first, as `fetch` merges them.
    private func walkKeys(_ request: FetchRequest, targets: [any PersistentStore]) throws -> WalkKeys {
        var walk = WalkKeys()
        var entityNumbers: [String: Int] = [:]
        func add(_ store: Int, _ entityName: String, _ primaryKey: Int64) {
            let entity: Int
            if let known = entityNumbers[entityName] {
                entity = known
            } else {
                entity = walk.entityNames.count
                entityNumbers[entityName] = entity
                walk.entityNames.append(entityName)
            }
            walk.append(store: store, entity: entity, primaryKey: primaryKey)
        }
        if request.sortKeys.isEmpty || targets.count == 1 {
            for (position, store) in targets.enumerated() {
                var one = request
                one.affectedStoreIdentifiers = [store.identifier]
                try coordinator.fetchReferences(one, from: store) { add(position, $0.entityName, $0.primaryKey) }
            }
        } else {
            let position = Dictionary(uniqueKeysWithValues: targets.enumerated().map { (ObjectIdentifier($1), $0) })
            try coordinator.fetchRows(request, targets: targets) { add(position[ObjectIdentifier($0)] ?? 0, $1.entityName, $1.primaryKey) }
        }
        return walk
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

    /// Reads the rows of `ids` (one batch), hands their objects to `body` in that order, skipping an object whose
    /// row is gone, then releases the objects the context did not hold before and that have no changes.
    private func walkBatch(_ ids: [ObjectID], _ body: (ManagedObject) throws -> Void) throws {
        let held = Set(ids.filter { registered[$0] != nil })
        let rows = try coordinator.rows(for: ids.filter { registered[$0]?.hasChanges != true })
        var objects: [ManagedObject] = []
        objects.reserveCapacity(ids.count)
        for id in ids {
            if let row = rows[id] {
                objects.append(register(row.row, from: row.store))
            } else if let object = registered[id], object.hasChanges, !object.isDeleted {
                objects.append(object)
            }
        }
        defer {
            for object in objects where !object.hasChanges && !held.contains(object.objectID) {
                registered[object.objectID] = nil
            }
        }
        for object in objects where !object.isDeleted { try body(object) }
    }
}

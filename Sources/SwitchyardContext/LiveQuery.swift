import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - LiveQuery

/// The machinery behind ``StoreCoordinator/observe(_:sectionedBy:)``: re-runs one fetch after saves that
/// touch an entity it reads, on a thread of its own, and yields a snapshot when the results changed.
///
/// Saves only mark the query stale (under a lock, on the saving thread); one refresh at a time runs on the
/// query's thread, so a burst of saves during a fetch costs one more fetch, not one per save.
package actor LiveQuery {
    private let coordinator: StoreCoordinator
    private let request: FetchRequest
    private let sectionKey: String?
    /// Entities whose objects can change the results: the fetched entity and every entity its predicate's and
    /// sort keys' relationship paths reach (each with its subentities).
    private let readEntities: Set<String>
    private let executor: DedicatedThreadExecutor
    private let continuation: AsyncThrowingStream<QuerySnapshot, any Error>.Continuation
    /// Set by relevant saves; `scheduled` says a refresh task is queued; `updated` collects IDs saves changed.
    private let pending = Locked<(scheduled: Bool, updated: Set<ObjectID>)>((false, []))
    private var previous: QuerySnapshot?
    private var observation: SaveObservation?

    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    package init(
        coordinator: StoreCoordinator, request: FetchRequest, sectionKey: String?, readEntities: Set<String>,
        continuation: AsyncThrowingStream<QuerySnapshot, any Error>.Continuation
    ) {
        self.coordinator = coordinator
        self.request = request
        self.sectionKey = sectionKey
        self.readEntities = readEntities
        self.continuation = continuation
        executor = DedicatedThreadExecutor(name: "Switchyard.observe(\(request.entityName))")
    }

    deinit { executor.shutdown() }

    /// Starts listening to saves and yields the first snapshot.
    package func start() {
        observation = coordinator.addSaveObserver { [weak self] note in self?.saved(note) }
        schedule()
    }

    /// Stops listening (the stream ended).
    package func stop() {
        observation?.cancel()
        observation = nil
    }

    /// Called on the saving thread: marks the query stale when the save touched an entity it reads.
    private nonisolated func saved(_ note: SaveNotification) {
        var touched: [ObjectID] = []
        for store in note.stores {
            for id in store.inserted where isRead(id.entityName) { touched.append(id) }
            for id in store.updated.keys where isRead(id.entityName) { touched.append(id) }
            for id in store.deleted where isRead(id.entityName) { touched.append(id) }
        }
        guard !touched.isEmpty else { return }
        let first = pending.withLock { state -> Bool in
            state.updated.formUnion(touched)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if first { Task { await self.refresh() } }
    }

    private nonisolated func isRead(_ entityName: String) -> Bool {
        var current: String? = entityName
        while let name = current {
            if readEntities.contains(name) { return true }
            current = coordinator.model.entity(named: name)?.parentName
        }
        return false
    }

    private func schedule() {
        pending.withLock { $0.scheduled = true }
        Task { self.refresh() }
    }

    /// Re-runs the fetch and yields a snapshot when the results differ from the previous one.
    private func refresh() {
        let changedIDs = pending.withLock { state -> Set<ObjectID> in
            state.scheduled = false
            defer { state.updated = [] }
            return state.updated
        }
        do {
            let context = ObjectContext(coordinator: coordinator)
            let objects = try context.fetch(request)
            var sections: [QuerySection] = []
            if let sectionKey {
                var name: String?
                var ids: [ObjectID] = []
                for object in objects {
                    let value = try object.value(forKey: sectionKey)
                    let text = value.isNull ? "" : value.description
                    if text != name, let current = name {
                        sections.append(QuerySection(name: current, objectIDs: ids))
                        ids = []
                    }
                    name = text
                    ids.append(object.objectID)
                }
                if let name { sections.append(QuerySection(name: name, objectIDs: ids)) }
            } else {
                sections = [QuerySection(name: "", objectIDs: objects.map(\.objectID))]
            }
            let ids = objects.map(\.objectID)
            guard let previous else {
                let first = QuerySnapshot(objectIDs: ids, sections: sections, changes: nil)
                self.previous = first
                continuation.yield(first)
                return
            }
            let difference = ids.difference(from: previous.objectIDs)
            var removed: [Int] = [], inserted: [Int] = []
            for change in difference {
                switch change {
                case let .remove(offset, _, _): removed.append(offset)
                case let .insert(offset, _, _): inserted.append(offset)
                }
            }
            let insertedSet = Set(inserted)
            let updated = ids.indices.filter { !insertedSet.contains($0) && changedIDs.contains(ids[$0]) }
            let changes = QueryChanges(removed: removed.sorted(), inserted: inserted.sorted(), updated: updated)
            guard !changes.isEmpty || sections.map(\.name) != previous.sections.map(\.name) else { return }
            let snapshot = QuerySnapshot(objectIDs: ids, sections: sections, changes: changes)
            self.previous = snapshot
            continuation.yield(snapshot)
        } catch {
            continuation.finish(throwing: error)
            stop()
        }
    }
}

extension StoreCoordinator {
    /// Observes a fetch: an `AsyncSequence` of snapshots (object IDs in order, sections, and what changed since
    /// the previous snapshot), like `NSFetchedResultsController` or GRDB's `ValueObservation`. The first
    /// snapshot comes at once; another comes after a save through this coordinator that changed the results.
    /// Saves that touch no entity the request reads (the fetched entity, and every entity its predicate or sort
    /// keys reach through relationships) cause no fetch at all; a burst of saves during a fetch causes one more.
    /// The fetch runs on a thread of its own, never blocking the cooperative pool.
    ///
    /// ```swift
    /// let unread = try coordinator.observe(FetchRequest(entityName: "Message", predicate: try FetchPredicate(format: "isRead == NO"),
    ///                                                   sortKeys: [SortKey("sentAt")]), sectionedBy: "chatID")
    /// for try await snapshot in unread {
    ///     print(snapshot.objectIDs.count, snapshot.changes?.inserted ?? [])
    /// }
    /// ```
    ///
    /// - Parameter sectionKey: an attribute of the fetched entity whose value groups consecutive results into
    ///   sections (sort by it first, as with `NSFetchedResultsController`).
    /// - Throws: `ContextError.unknownEntity` or `QueryError.unknownKeyPath` at once for a request (or section key)
    ///   the model cannot answer; a later fetch failure ends the sequence with its error.
    public func observe(_ request: FetchRequest, sectionedBy sectionKey: String? = nil) throws -> AsyncThrowingStream<QuerySnapshot, any Error> {
        guard let entity = model.entity(named: request.entityName) else { throw ContextError.unknownEntity(request.entityName) }
        try model.validateKeyPaths(of: request.predicate, sortKeys: request.sortKeys, entityName: entity.name)
        if let sectionKey, entity.attribute(named: sectionKey) == nil || entity.attribute(named: sectionKey)!.isTransient {
            throw QueryError.unknownKeyPath(entity: entity.name, keyPath: sectionKey)
        }
        var read: Set<String> = [entity.name]
        let paths = Array(request.predicate?.keyPaths ?? []) + request.sortKeys.map { $0.key.split(separator: ".").map(String.init) }
        for path in paths {
            var current = entity.name
            for component in path where component != "SELF" {
                guard let relationship = model.entity(named: current)?.relationship(named: component) else { break }
                current = relationship.destinationEntityName
                read.insert(current)
            }
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: QuerySnapshot.self, throwing: (any Error).self)
        let query = LiveQuery(coordinator: self, request: request, sectionKey: sectionKey, readEntities: read, continuation: continuation)
        continuation.onTermination = { _ in Task { await query.stop() } }
        Task { await query.start() }
        return stream
    }
}

extension StoreCoordinator {
    /// Observes a typed fetch: ``observe(_:sectionedBy:)`` with the predicate and sort keys written against
    /// `E`'s key paths. Snapshots hold object IDs; read the objects in a context with
    /// `existingObject(_:with:)`.
    ///
    /// ```swift
    /// for try await snapshot in try coordinator.observe(Message.self, where: \.isRead == false, sortedBy: [.ascending(\.sentAt)]) {
    ///     print(snapshot.objectIDs.count)
    /// }
    /// ```
    public func observe<E: EntityObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sortKeys: [TypedSortKey<E>] = []
    ) throws -> AsyncThrowingStream<QuerySnapshot, any Error> {
        try registerType(type)
        return try observe(FetchRequest(entityName: E.entityName, predicate: predicate?.predicate, sortKeys: sortKeys.map(\.sortKey)))
    }
}

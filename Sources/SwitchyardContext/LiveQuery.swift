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
    /// sort keys' relationship paths reach, each with its subentities (a saved object's concrete entity is
    /// looked up here once, with no walk up its ancestors).
    private let readEntities: Set<String>
    /// The query's thread: its actor work and the tasks that start it run there, never waiting for the pool.
    package nonisolated let executor: DedicatedThreadExecutor
    private let continuation: AsyncThrowingStream<QuerySnapshot, any Error>.Continuation
    /// Whether a refresh is queued (set by relevant saves, cleared when the refresh starts).
    private let scheduled = Locked(false)
    private var previous: QuerySnapshot?
    /// Each result's `Z_OPT` in the previous snapshot: a later one that differs is an update.
    private var previousVersions: [ObjectID: Int64] = [:]
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
        let relevant = note.stores.contains { store in
            store.inserted.contains { isRead($0.entityName) } || store.updated.keys.contains { isRead($0.entityName) }
                || store.deleted.contains { isRead($0.entityName) }
        }
        guard relevant else { return }
        let first = scheduled.withLock { queued -> Bool in
            defer { queued = true }
            return !queued
        }
        if first { Task(executorPreference: executor) { await self.refresh() } }
    }

    private nonisolated func isRead(_ entityName: String) -> Bool { readEntities.contains(entityName) }

    private func schedule() {
        scheduled.withLock { $0 = true }
        Task { self.refresh() }
    }

    /// A section key's value as a section name: text as it is, Booleans as "0"/"1" (what
    /// `NSFetchedResultsController` shows for an `NSNumber`), no value as "".
    private static func sectionName(_ value: AttributeValue) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return text
        case .uri(let url): return url.absoluteString
        case .bool(let flag): return flag ? "1" : "0"
        default: return value.description
        }
    }

    /// Re-runs the fetch and yields a snapshot when the results differ from the previous one.
    private func refresh() {
        scheduled.withLock { $0 = false }
        do {
            let context = ObjectContext(coordinator: coordinator)
            let objects = try context.fetch(request)
            var sections: [QuerySection] = []
            if let sectionKey {
                var name: String?
                var ids: [ObjectID] = []
                for object in objects {
                    let text = Self.sectionName(try object.value(forKey: sectionKey))
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
            let versions = Dictionary(objects.map { ($0.objectID, $0.snapshot?.version ?? 0) }, uniquingKeysWith: { a, _ in a })
            defer { previousVersions = versions }
            guard let previous else {
                let first = QuerySnapshot(objectIDs: ids, sections: sections, changes: nil)
                self.previous = first
                continuation.yield(first)
                return
            }
            var removed: [Int] = [], inserted: [Int] = [], moved: [QueryChanges.Move] = []
            for change in ids.difference(from: previous.objectIDs).inferringMoves() {
                switch change {
                case let .remove(offset, _, move):
                    if move == nil { removed.append(offset) }
                case let .insert(offset, _, move):
                    if let from = move { moved.append(QueryChanges.Move(from: from, to: offset)) } else { inserted.append(offset) }
                }
            }
            let insertedSet = Set(inserted)
            let updated = ids.indices.filter { index in
                !insertedSet.contains(index) && previousVersions[ids[index]].map { $0 != versions[ids[index]] } == true
            }
            let changes = QueryChanges(removed: removed.sorted(), inserted: inserted.sorted(), moved: moved.sorted { $0.to < $1.to }, updated: updated)
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
    ///                                                   sortKeys: [SortKey("chatID"), SortKey("sentAt")]), sectionedBy: "chatID")
    /// for try await snapshot in unread {
    ///     print(snapshot.objectIDs.count, snapshot.changes?.inserted ?? [])
    /// }
    /// ```
    ///
    /// - Parameter sectionKey: an attribute of the fetched entity whose value groups consecutive results into
    ///   sections, named by the value (text as it is, Booleans "0"/"1", no value ""). Sort by it first, as with
    ///   `NSFetchedResultsController`: otherwise one value can head several sections.
    /// - Throws: `ContextError.unknownEntity` or `QueryError.unknownKeyPath` at once for a request (or section key)
    ///   the model cannot answer; a later fetch failure ends the sequence with its error.
    public func observe(_ request: FetchRequest, sectionedBy sectionKey: String? = nil) throws -> AsyncThrowingStream<QuerySnapshot, any Error> {
        guard let entity = model.entity(named: request.entityName) else { throw ContextError.unknownEntity(request.entityName) }
        try model.validateFetch(predicate: request.predicate, sortKeys: request.sortKeys, entityName: entity.name)
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
        read = Set(read.flatMap { model.entity(named: $0)?.selfAndDescendantNames ?? [$0] })
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: QuerySnapshot.self, throwing: (any Error).self)
        let query = LiveQuery(coordinator: self, request: request, sectionKey: sectionKey, readEntities: read, continuation: continuation)
        continuation.onTermination = { _ in Task(executorPreference: query.executor) { await query.stop() } }
        Task(executorPreference: query.executor) { await query.start() }
        return stream
    }
}

extension StoreCoordinator {
    /// Observes a typed fetch: ``observe(_:sectionedBy:)`` with the predicate, sort keys and section key written
    /// against `E`'s key paths. Snapshots hold object IDs; read the objects in a context with
    /// `existingObject(_:with:)`.
    ///
    /// ```swift
    /// for try await snapshot in try coordinator.observe(Message.self, where: \.isRead == false, sortedBy: [.ascending(\.sentAt)]) {
    ///     print(snapshot.objectIDs.count)
    /// }
    /// ```
    public func observe<E: EntityObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sortKeys: [TypedSortKey<E>] = [],
        sectionedBy sectionKey: PartialKeyPath<E>? = nil
    ) throws -> AsyncThrowingStream<QuerySnapshot, any Error> {
        try registerType(type)
        return try observe(
            FetchRequest(entityName: E.entityName, predicate: try predicate?.checked(), sortKeys: try TypedSortKey.checked(sortKeys)),
            sectionedBy: try sectionKey.map(E.name(of:)))
    }
}

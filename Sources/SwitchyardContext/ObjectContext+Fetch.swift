import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - Fetch

extension ObjectContext {
    /// Fetches objects from every store serving the entity, merged under the sort, as Core Data does with
    /// `includesPendingChanges`: the result reflects this context's unsaved state. Deleted objects are left
    /// out; changed objects match (or stop matching) by their current values; matching unsaved inserts are
    /// included; sort, offset and limit apply after that merge, to current values.
    ///
    /// Key paths and sort keys are checked against the entity before any row is read
    /// (`QueryError.unknownKeyPath`). A `fetchLimit` of 0 means no limit, as in Core Data; a negative limit or
    /// offset is `QueryError.invalidRequest`.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        var objects: [ManagedObject] = []
        try fetch(request, expecting: { objects.reserveCapacity($0) }) { object in objects.append(consume object) }
        return objects
    }

    /// `fetch(_:)`, each object handed to `body` in order, owned, after the stores' reads have ended: a typed
    /// fetch wraps it (`E.init(managedObject:)`) without retaining it again, where mapping the fetched array
    /// retained and released every object once more and built a second array. `expecting` is told the number
    /// of objects first.
    @usableFromInline
    package func fetch(
        _ request: FetchRequest, expecting: (Int) -> Void, each body: (consuming ManagedObject) -> Void
    ) throws {
        guard request.isNormalized else { return try fetch(try request.normalized(), expecting: expecting, each: body) }
        guard model.entityPosition(named: request.entityName) != nil else {
            throw ContextError.unknownEntity(request.entityName)
        }
        try model.validateFetch(predicate: request.predicate, sortKeys: request.sortKeys, entityName: request.entityName)
        // Validates affected stores and fails for an entity no store serves, even with unsaved inserts:
        // those could never be saved.
        let targets = try coordinator.targetStores(for: request)
        let pending = pendingObjects(for: request)
        let relatedChanged = hasPendingChanges(reachedBy: request)
        // Rows merged from several stores can be sorted by the coordinator on their own attributes only; a key
        // path through a relationship is sorted here, on the objects.
        let sortsThroughRelationships = targets.count > 1 && request.sortKeys.contains { $0.key.contains(".") }
        if pending.isEmpty, !relatedChanged, !sortsThroughRelationships {
            // Each row becomes an object as the store reads it: the rows are never all held at once.
            return try registerRows(request, targets: targets, expecting: expecting, each: body)
        }
        let merged = try fetchMerged(request, targets: targets, pending: pending, relatedChanged: relatedChanged)
        expecting(merged.count)
        for object in merged { body(object) }
    }

    /// The number of objects `fetch` would return.
    public func count(_ request: FetchRequest) throws -> Int {
        let request = try request.normalized()
        guard model.entityPosition(named: request.entityName) != nil else {
            throw ContextError.unknownEntity(request.entityName)
        }
        try model.validateFetch(predicate: request.predicate, sortKeys: request.sortKeys, entityName: request.entityName)
        if pendingObjects(for: request).isEmpty, !hasPendingChanges(reachedBy: request) {
            return try coordinator.count(request, validated: true)
        }
        return try fetch(request).count
    }

    /// `fetch` with unsaved changes: the stores supply candidates (every row of the entity when changes to
    /// related objects may change what the predicate selects), and the predicate, sort, offset and limit are
    /// applied here to each object's current state.
    private func fetchMerged(
        _ request: FetchRequest, targets: [any PersistentStore], pending: [ManagedObject], relatedChanged: Bool
    ) throws -> [ManagedObject] {
        var unbounded = request
        unbounded.fetchLimit = nil
        unbounded.fetchOffset = 0
        unbounded.sortKeys = []
        if relatedChanged { unbounded.predicate = nil }
        let storeIndex = Dictionary(uniqueKeysWithValues: targets.enumerated().map { (ObjectIdentifier($1), $0) })
        var seen = Set<ObjectIdentifier>()
        var candidates: [(object: ManagedObject, checked: Bool)] = []
        var fetched: [ManagedObject] = []
        try registerRows(unbounded, targets: targets, expecting: { fetched.reserveCapacity($0) }) { fetched.append($0) }
        for object in fetched {
            guard !object.isDeleted, seen.insert(ObjectIdentifier(object)).inserted else { continue }
            // The store already applied the predicate to the saved state, which is current for an unchanged object.
            candidates.append((object, !relatedChanged && !object.hasChanges))
        }
        for object in pending where !object.isDeleted && seen.insert(ObjectIdentifier(object)).inserted {
            candidates.append((object, false))
        }
        var matches: [ManagedObject] = []
        if let predicate = request.predicate {
            var bound: [UUID?: FetchPredicate] = [:]
            for (object, checked) in candidates {
                if checked { matches.append(object); continue }
                let store = effectiveStoreIdentifier(of: object)
                let predicate = bound[store] ?? bindObjects(in: predicate, entityName: request.entityName, store: store)
                bound[store] = predicate
                if try PredicateEvaluator.evaluate(predicate, on: object) { matches.append(object) }
            }
        } else {
            matches = candidates.map(\.object)
        }
        // Without sort keys, or on ties, objects keep the order the stores give (store by store, primary key
        // ascending), and unsaved inserts follow in insertion order.
        let insertionIndex = Dictionary(uniqueKeysWithValues: insertedObjects.enumerated().map { (ObjectIdentifier($1), $0) })
        let ranks = matches.map { object -> (Int, Int64) in
            if let pk = object.objectID.primaryKey, let store = object.store, let index = storeIndex[ObjectIdentifier(store)] {
                return (index, pk)
            }
            return (Int.max, Int64(insertionIndex[ObjectIdentifier(object)] ?? Int.max))
        }
        let paths = PredicateEvaluator.paths(of: request.sortKeys)
        let unsorted = matches
        matches = try PredicateEvaluator.order(of: unsorted.count, by: request.sortKeys) {
            try PredicateEvaluator.sortValue(unsorted[$0], paths[$1])
        } tie: { ranks[$0] < ranks[$1] }.map { unsorted[$0] }
        let start = min(max(request.fetchOffset, 0), matches.count)
        let end = request.fetchLimit.map { min(start + max($0, 0), matches.count) } ?? matches.count
        return Array(matches[start..<end])
    }

    /// Object arguments bound for evaluation on objects of one store (nil: not known before the save): a saved
    /// object matches by its key in that store, an unsaved one by its temporary key.
    private func bindObjects(in predicate: FetchPredicate, entityName: String, store: UUID?) -> FetchPredicate {
        predicate.bindingObjects(entityName: entityName, model: model) { id in
            if let temporary = id.temporaryKey { return temporary }
            guard let store else { return id.primaryKey }
            return id.storeIdentifier == store ? id.primaryKey : nil
        }
    }

    /// The store an object lives in, or will be saved to when only one store serves its entity.
    private func effectiveStoreIdentifier(of object: ManagedObject) -> UUID? {
        if let store = object.store { return store.identifier }
        let candidates = coordinator.stores(serving: object.entity.name)
        return candidates.count == 1 ? candidates[0].identifier : nil
    }

    /// Unsaved inserts and changed (or deleted) objects of the request's entity family, in its affected stores.
    private func pendingObjects(for request: FetchRequest) -> [ManagedObject] {
        guard !insertedObjects.isEmpty || !changedObjects.isEmpty else { return [] }
        let model = self.model
        let matchesEntity: (ManagedObject) -> Bool = { object in
            request.includesSubentities
                ? model.entity(object.entity.name, isKindOf: request.entityName)
                : object.entity.name == request.entityName
        }
        let matchesStore: (ManagedObject) -> Bool = { object in
            guard let ids = request.affectedStoreIdentifiers else { return true }
            return object.store.map { ids.contains($0.identifier) } ?? true
        }
        return (insertedObjects + changedObjects.values.filter(\.hasChanges)).filter { matchesEntity($0) && matchesStore($0) }
    }

    /// Whether an unsaved change to some other object can change what the request's key paths read: an object
    /// of an entity that a key path reaches past a to-one, or through a to-many (whose members record it).
    private func hasPendingChanges(reachedBy request: FetchRequest) -> Bool {
        guard !insertedObjects.isEmpty || changedObjects.values.contains(where: \.hasChanges) else { return false }
        var reached = Set<String>()
        var paths = Array(request.predicate?.keyPaths ?? [])
        paths += request.sortKeys.map { $0.key.split(separator: ".").map(String.init) }
        for path in paths {
            var entityName = request.entityName
            let components = path.first == "SELF" ? Array(path.dropFirst()) : path
            for (i, component) in components.enumerated() {
                guard let relationship = model.entity(named: entityName)?.relationship(named: component),
                    let destination = model.entity(named: relationship.destinationEntityName)
                else { break }
                if relationship.isToMany || i < components.count - 1 {
                    reached.formUnion(destination.selfAndDescendantNames)
                }
                entityName = destination.name
            }
        }
        guard !reached.isEmpty else { return false }
        return insertedObjects.contains { reached.contains($0.entity.name) }
            || changedObjects.values.contains { $0.hasChanges && reached.contains($0.entity.name) }
    }
}

// MARK: - ManagedObject as predicate subject

extension ManagedObject: PredicateSubject {
    /// Reads a key path on the object's current (unsaved) state, following relationships through the context.
    /// An object at the end of a path (or `SELF`) reads as its primary key, or a negative temporary key while
    /// it is unsaved, so a relationship to an unsaved object is not nil.
    package func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        guard let first = keyPath.first else { return .single(.integer(objectID.predicateKey)) }
        // The common case, one attribute: by position, without copying the entity or the path.
        if keyPath.count == 1, let position = handle.attributePositions[name: first] { return .single(value(at: position)) }
        let rest = Array(keyPath.dropFirst())
        guard let relationship = entity.relationship(named: first) else {
            throw QueryError.unknownKeyPath(entity: entity.name, keyPath: keyPath.joined(separator: "."))
        }
        if relationship.isToMany {
            let members = try relatedObjects(forKey: first)
            if rest.isEmpty { return .many(members.map { .integer($0.objectID.predicateKey) }) }
            var values: [AttributeValue] = []
            for member in members {
                switch try member.predicateValues(at: rest) {
                case .single(let v): values.append(v)
                case .many(let vs): values += vs
                }
            }
            return .many(values)
        }
        let target = try relatedObject(forKey: first)
        if rest.isEmpty { return .single(target.map { .integer($0.objectID.predicateKey) } ?? .null) }
        guard let target else {
            // As the stores read it (`RowKeyPathWalk`): one null, or no members when a to-many follows.
            let model = try liveContext().model
            let crosses = RowKeyPathWalk.crossesToMany(from: relationship.destinationEntityName, rest[...]) {
                model.entity(named: $0)?.relationship(named: $1)
            }
            return crosses ? .many([]) : .single(.null)
        }
        return try target.predicateValues(at: rest)
    }

    /// One value at a key path (the first, where a to-many yields several).
    package func singleValue(at keyPath: [String]) throws -> AttributeValue {
        switch try predicateValues(at: keyPath) {
        case .single(let v): return v
        case .many(let vs): return vs.first ?? .null
        }
    }
}

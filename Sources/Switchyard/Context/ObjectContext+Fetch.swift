import Foundation

// MARK: - Fetch

extension ObjectContext {
    /// Fetches objects from every store serving the entity, merged under the sort. Unsaved changes in this
    /// context are taken into account: deleted objects are left out, changed ones re-checked against the
    /// predicate, and matching unsaved inserts included.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        guard coordinator.model.entity(named: request.entityName) != nil else {
            throw ContextError.unknownEntity(request.entityName)
        }
        // Validates affected stores and fails for an entity no store serves, even with unsaved inserts:
        // those could never be saved.
        _ = try coordinator.targetStores(for: request)
        let pending = pendingObjects(for: request)
        if pending.isEmpty {
            return try coordinator.fetchRows(request).map { register($0.row, from: $0.store) }
        }
        // With unsaved changes the stores cannot apply offset and limit: filter and sort here.
        var unbounded = request
        unbounded.fetchLimit = nil
        unbounded.fetchOffset = 0
        var seen = Set<ObjectIdentifier>()
        var result: [ManagedObject] = []
        let stored = try coordinator.fetchRows(unbounded)
        for fetched in stored {
            let object = register(fetched.row, from: fetched.store)
            guard !object.isDeleted, seen.insert(ObjectIdentifier(object)).inserted else { continue }
            if object.hasChanges, let predicate = request.predicate, try !PredicateEvaluator.evaluate(predicate, on: object) {
                continue
            }
            result.append(object)
        }
        for object in pending where object.isInserted && seen.insert(ObjectIdentifier(object)).inserted {
            if let predicate = request.predicate, try !PredicateEvaluator.evaluate(predicate, on: object) { continue }
            result.append(object)
        }
        if !request.sortKeys.isEmpty {
            result = try sorted(result, by: request.sortKeys)
        }
        let start = min(request.fetchOffset, result.count)
        let end = request.fetchLimit.map { min(start + $0, result.count) } ?? result.count
        return Array(result[start..<end])
    }

    /// The number of objects `fetch` would return.
    public func count(_ request: FetchRequest) throws -> Int {
        guard coordinator.model.entity(named: request.entityName) != nil else {
            throw ContextError.unknownEntity(request.entityName)
        }
        if pendingObjects(for: request).isEmpty { return try coordinator.count(request) }
        return try fetch(request).count
    }

    /// Unsaved inserts and changed objects of the request's entity family (and in its affected stores).
    private func pendingObjects(for request: FetchRequest) -> [ManagedObject] {
        let model = coordinator.model
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

    private func sorted(_ objects: [ManagedObject], by sort: [SortKey]) throws -> [ManagedObject] {
        var failure: Error?
        let result = objects.sorted { a, b in
            do {
                let r = try PredicateEvaluator.compare(a, b, by: sort)
                if r != .orderedSame { return r == .orderedAscending }
                return (a.objectID.primaryKey ?? .max) < (b.objectID.primaryKey ?? .max)
            } catch {
                failure = failure ?? error
                return false
            }
        }
        if let failure { throw failure }
        return result
    }
}

// MARK: - ManagedObject as predicate subject

extension ManagedObject: PredicateSubject {
    /// Reads a key path on the object's current (unsaved) state, following relationships through the context.
    public func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        guard let first = keyPath.first else { return .single(objectID.primaryKey.map { .integer($0) } ?? .null) }
        let rest = Array(keyPath.dropFirst())
        if entity.attribute(named: first) != nil, rest.isEmpty {
            return .single(try value(forKey: first))
        }
        guard let relationship = entity.relationship(named: first) else {
            throw QueryError.unknownKeyPath(entity: entity.name, keyPath: keyPath.joined(separator: "."))
        }
        if relationship.isToMany {
            let members = try relatedObjects(forKey: first)
            if rest.isEmpty { return .many(members.map { $0.objectID.primaryKey.map { .integer($0) } ?? .null }) }
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
        if rest.isEmpty { return .single(target?.objectID.primaryKey.map { .integer($0) } ?? .null) }
        guard let target else { return .single(.null) }
        return try target.predicateValues(at: rest)
    }

    /// One value at a key path (the first, where a to-many yields several).
    func singleValue(at keyPath: [String]) throws -> AttributeValue {
        switch try predicateValues(at: keyPath) {
        case .single(let v): return v
        case .many(let vs): return vs.first ?? .null
        }
    }
}

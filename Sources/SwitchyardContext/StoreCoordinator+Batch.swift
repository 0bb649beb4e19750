import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - Batch operations

extension StoreCoordinator {
    /// Inserts rows of `entityName` without creating objects, in one transaction, like Core Data's
    /// `NSBatchInsertRequest`: each dictionary gives attribute values by name (missing ones take the model's
    /// default). Values are checked as a save checks them (unknown or relationship keys, wrong types, required
    /// values missing) before anything is written; uniqueness constraints hold (a duplicate fails the whole
    /// batch). The insert is published like a save (``SaveNotification``), so contexts and live queries see it.
    ///
    /// ```swift
    /// let ids = try coordinator.batchInsert("Order", [["code": "A1", "qty": 3], ["code": "A2", "qty": 5]])
    /// ```
    ///
    /// - Parameter store: the store to insert into, when several serve the entity.
    /// - Returns: the new objects' IDs, in the order of `rows`.
    @discardableResult
    public func batchInsert(
        _ entityName: String, _ rows: [[String: AttributeValue]], into store: (any PersistentStore)? = nil
    ) throws -> [ObjectID] {
        let entity = try batchEntity(entityName, inserting: true)
        let target = try batchInsertStore(entity, store)
        let values = try rows.enumerated().map { index, row in
            try batchValues(row, entity: entity, filling: true, what: "batch insert row \(index)")
        }
        guard !values.isEmpty else { return [] }
        let keys = try target.allocatePrimaryKeys(for: entity.name, count: values.count)
        let inserts = zip(keys, values).map { StoreRow(entityName: entity.name, primaryKey: $0, values: $1) }
        return try observingSave { observing, published in
            try target.save(StoreChangeSet(inserts: inserts))
            let ids = inserts.map { ObjectID(store: target.identifier, entityName: entity.name, primaryKey: $0.primaryKey) }
            if observing {
                published.append(StoreSaveChanges(storeIdentifier: target.identifier, configuration: target.configurationName, inserted: Set(ids)))
            }
            return ids
        }
    }

    /// Sets attributes of every object of `entityName` (and its subentities) that `predicate` matches, without
    /// creating objects, like Core Data's `NSBatchUpdateRequest`: one transaction per store, each row's `Z_OPT`
    /// incremented (so contexts holding the objects see a conflict, not a lost update, until they merge),
    /// indexes and uniqueness constraints kept. Published like a save, with the keys set.
    ///
    /// ```swift
    /// let archived = try coordinator.batchUpdate("Message", where: try FetchPredicate(format: "sentAt < %@", cutoff), set: ["isRead": true])
    /// ```
    ///
    /// - Returns: the number of objects updated.
    @discardableResult
    public func batchUpdate(_ entityName: String, where predicate: FetchPredicate? = nil, set values: [String: AttributeValue]) throws -> Int {
        let entity = try batchEntity(entityName, inserting: false)
        let checked = try batchValues(values, entity: entity, filling: false, what: "batch update")
        guard !checked.isEmpty else { return 0 }
        let request = try FetchRequest(entityName: entity.name, predicate: predicate).normalized()
        let keys = Set(checked.keys)
        return try eachStoreObserved(request) { store, observing in
            // One statement where the store can (SQLite); otherwise the matching rows, updated row by row.
            if let done = try (store as? any BatchWritingStore)?.batchUpdate(storeRequest(request), values: checked, naming: observing) {
                return (done.count, done.rows)
            }
            let rows = try store.fetch(storeRequest(request))
            try store.save(StoreChangeSet(updates: rows.map {
                RowUpdate(entityName: $0.entityName, primaryKey: $0.primaryKey, expectedVersion: $0.version, values: checked)
            }))
            return (rows.count, rows.map(\.reference))
        } changes: { store, ids in
            StoreSaveChanges(
                storeIdentifier: store.identifier, configuration: store.configurationName,
                updated: Dictionary(ids.map { ($0, keys) }, uniquingKeysWith: { a, _ in a }))
        }
    }

    /// Deletes every object of `entityName` (and its subentities) that `predicate` matches, in one transaction
    /// per store, like Core Data's `NSBatchDeleteRequest` — but unlike it, delete rules apply: Nullify clears
    /// the other side, Cascade deletes the related objects, Deny refuses the whole batch, and join-table links go.
    /// An entity that no relationship touches is deleted row by row without creating objects; otherwise the
    /// rows are loaded as objects so the rules can run. Published like a save.
    ///
    /// - Returns: the number of objects deleted (not counting those a Cascade rule deleted with them).
    @discardableResult
    public func batchDelete(_ entityName: String, where predicate: FetchPredicate? = nil) throws -> Int {
        let entity = try batchEntity(entityName, inserting: false)
        let tree = Set(entity.selfAndDescendantNames)
        let touched = model.entities.contains { other in
            (tree.contains(other.name) && !other.allRelationships.isEmpty)
                || other.allRelationships.contains { tree.contains($0.destinationEntityName) }
        }
        let request = FetchRequest(entityName: entity.name, predicate: predicate)
        if touched {
            let context = ObjectContext(coordinator: self)
            let objects = try context.fetch(request)
            for object in objects { try context.delete(object) }
            try context.save()
            return objects.count
        }
        let normalized = try request.normalized()
        return try eachStoreObserved(normalized) { store, observing in
            if let done = try (store as? any BatchWritingStore)?.batchDelete(storeRequest(normalized), naming: observing) {
                return (done.count, done.rows)
            }
            let rows = try store.fetch(storeRequest(normalized))
            try store.save(StoreChangeSet(deletes: rows.map {
                RowDeletion(entityName: $0.entityName, primaryKey: $0.primaryKey, expectedVersion: $0.version)
            }))
            return (rows.count, rows.map(\.reference))
        } changes: { store, ids in
            StoreSaveChanges(storeIdentifier: store.identifier, configuration: store.configurationName, deleted: Set(ids))
        }
    }

    // MARK: Private

    /// Runs `write` on every store serving `request`'s entity inside the save gate, and publishes what each
    /// wrote (as `changes` describes it) when someone observes: the rows a write names only then.
    private func eachStoreObserved(
        _ request: FetchRequest, _ write: (any PersistentStore, Bool) throws -> (count: Int, rows: [RowReference]),
        changes: (any PersistentStore, [ObjectID]) -> StoreSaveChanges
    ) throws -> Int {
        let stores = try targetStores(for: request)
        return try observingSave { observing, published in
            var total = 0
            for store in stores {
                let written = try write(store, observing)
                total += written.count
                if observing {
                    published.append(changes(store, written.rows.map {
                        ObjectID(store: store.identifier, entityName: $0.entityName, primaryKey: $0.primaryKey)
                    }))
                }
            }
            return total
        }
    }

    private func batchEntity(_ name: String, inserting: Bool) throws -> EntityDescription {
        guard let entity = model.entity(named: name) else { throw ContextError.unknownEntity(name) }
        if inserting, entity.isAbstract { throw ContextError.abstractEntity(name) }
        return entity
    }

    private func batchInsertStore(_ entity: EntityDescription, _ given: (any PersistentStore)?) throws -> any PersistentStore {
        guard let given else { return try onlyStore(serving: entity.name, inserting: "a batch insert") }
        guard stores(serving: entity.name).contains(where: { $0 === given }) else {
            throw CoordinatorError.noStoreForEntity(entity: entity.name, configurations: model.configurations(containing: entity.name))
        }
        return given
    }

    /// `values` checked against `entity` as a save would check them; with `filling`, the missing attributes
    /// take the model's defaults and required ones without a default are an error.
    private func batchValues(
        _ values: [String: AttributeValue], entity: EntityDescription, filling: Bool, what: String
    ) throws -> [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        let handle = entityHandles[name: entity.name]!
        for (key, value) in values {
            // Transient attributes are never stored: a batch cannot set them.
            guard let attribute = entity.attribute(named: key), !attribute.isTransient else {
                throw ContextError.unknownKey(entity: entity.name, key: key)
            }
            let normalized = try handle.checked(value, forKey: key).value
            if normalized.isNull, !attribute.isOptional {
                throw ContextError.missingRequiredValue(entity: entity.name, key: key, object: what)
            }
            result[key] = normalized
        }
        if filling {
            for attribute in entity.allAttributes where !attribute.isTransient && result[attribute.name] == nil {
                if let value = attribute.defaultValue, !value.isNull {
                    result[attribute.name] = value.normalizedForObject(attribute.type) ?? value
                } else if !attribute.isOptional {
                    throw ContextError.missingRequiredValue(entity: entity.name, key: attribute.name, object: what)
                }
            }
        }
        return result
    }
}

import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardStores

// MARK: - Save

extension ObjectContext {
    /// One store's share of a save.
    private struct StoreBatch {
        let store: any PersistentStore
        var inserts: [ManagedObject] = []
        var updates: [ManagedObject] = []
        var deletes: [ManagedObject] = []
    }

    /// Writes every unsaved change: validates, routes new objects to their stores, checks optimistic locks,
    /// and commits each store's changes in one transaction.
    ///
    /// On an error nothing of the failing store's changes is written, and the context keeps those changes
    /// so the caller can fix and retry, or `rollback()`. Stores are not committed atomically together:
    /// a store that committed before another failed stays committed (as in Core Data).
    public func save() throws {
        // Each resolved conflict re-reads one object and saves again. A conflict on an object already resolved
        // is another save that changed it meanwhile (several contexts writing it) and is resolved again, as long
        // as the stored version moved on: one that did not (a store that never takes the new version) ends the
        // retries. (Before, the retries stopped after one per changed object: a user trial's four contexts
        // incrementing one object saw `StoreError.conflict` despite a merge policy.)
        var resolvedAt: [ObjectID: Int64] = [:]
        var attempts = 0
        while true {
            do {
                try saveOnce()
                return
            } catch let error as StoreError {
                guard mergePolicy != .error, case let .conflict(_, _, id, _, _, _, actual) = error, let object = registered[id],
                    attempts < Self.conflictRetryLimit, actual == nil || resolvedAt[id] != actual
                else { throw error }
                attempts += 1
                try resolveConflict(object)
                if let version = object.snapshot?.version { resolvedAt[id] = version }
            }
        }
    }

    /// How many conflicts one `save()` resolves at most, whatever the progress: a backstop against a livelock.
    static let conflictRetryLimit = 1_000

    /// A conflicting object under `mergePolicy`: its row re-read and its unsaved changes kept, dropped where the
    /// store changed the same property (`.storeWins`), or dropped altogether (`.rollback`); an object whose row
    /// is gone leaves the context, as a merged deletion does.
    private func resolveConflict(_ object: ManagedObject) throws {
        guard let row = try coordinator.rows(for: [object.objectID])[object.objectID]?.row else {
            detachDeleted(object)
            return
        }
        // What the other save changed: the properties whose stored values differ from the object's snapshot.
        let before = object.snapshot
        var changedInStore: Set<String> = []
        for name in object.handle.layout.names where before?.values[name] != row.values[name] { changedInStore.insert(name) }
        for relationship in object.entity.allRelationships where !relationship.isToMany
            && before?.toOne[relationship.name] != row.toOne[relationship.name] {
            changedInStore.insert(relationship.name)
        }
        try resolve(object, savedRow: row, changedInStore: changedInStore, policy: mergePolicy)
    }

    private func saveOnce() throws {
        guard hasChanges else { return }
        let undoRules = try applyDeleteRules()
        var committed = false
        do {
            try write(committed: &committed)
        } catch let error as StoreError {
            // A conflict before any store committed: the rules' effects are undone, so the conflict is resolved on
            // the context as the user left it and a retry runs the rules again. Under `.rollback`, an object this
            // context deleted then comes back with its relationships (before 2026-12-02 the retry still wrote what
            // its Nullify had done to its many-to-many partners, deleting those links).
            if case .conflict = error, !committed { undoRules() }
            throw error
        }
    }

    /// `saveOnce` after the delete rules: routes, validates, checks and writes; `committed` once a store has.
    private func write(committed: inout Bool) throws {
        let inserts = insertedObjects
        // In primary-key order (the comparison reads the key without building each object's ID: building it was a
        // sixth of an update's save in callgrind).
        let changed = changedObjects.values.filter(\.hasChanges).sorted { ($0.savedPrimaryKey ?? 0) < ($1.savedPrimaryKey ?? 0) }

        // Route and validate everything before writing anything.
        // By entity, keyed by its handle (hashing the entity's name, and reading each object's store twice, were
        // a tenth of this loop's atomic reference counting in callgrind).
        var routes: [ObjectIdentifier: any PersistentStore] = [:]
        for object in inserts {
            // (Reading `store` follows a moved store to its successor and keeps that.)
            if object.store != nil { continue }
            let entity = ObjectIdentifier(object.handle)
            if let known = routes[entity] { object.store = known; continue }
            let store = try route(object)
            routes[entity] = store
            object.store = store
        }
        // (`[inserts, changed].joined()`, not `inserts + changed`: the checks below need no copy of a million inserts.)
        for object in [inserts, changed].joined() where !object.isDeleted { try validate(object) }
        // A store taken out of the coordinator is unreachable, as in Core Data: say so before reading or writing.
        let reachable = Set(coordinator.stores.map { ObjectIdentifier($0) })
        for object in [inserts, changed].joined() {
            if let store = object.store, !reachable.contains(ObjectIdentifier(store)) {
                throw CoordinatorError.storeNotInCoordinator(path: store.displayPath)
            }
        }
        var batches: [ObjectIdentifier: StoreBatch] = [:]
        var order: [ObjectIdentifier] = []
        func batch(_ store: any PersistentStore, _ body: (inout StoreBatch) -> Void) {
            let key = ObjectIdentifier(store)
            if batches[key] == nil { batches[key] = StoreBatch(store: store); order.append(key) }
            body(&batches[key]!)
        }
        // (All to one store, as usual: the batch shares the array of inserts rather than copying it.)
        if let first = inserts.first?.store, inserts.allSatisfy({ $0.store === first }) {
            batch(first) { $0.inserts = inserts }
        } else {
            for object in inserts { batch(object.store!) { $0.inserts.append(object) } }
        }
        for object in changed {
            guard let store = object.store else { continue }
            batch(store) { object.isDeleted ? $0.deletes.append(object) : $0.updates.append(object) }
        }
        // With one store, its own check inside the write transaction is enough (and reports the same conflict);
        // with several, a conflict in any must stop the save before the first store commits.
        if order.count > 1 { try checkVersions(changed) }

        // Permanent keys first, so relationships between new objects can be written: each batch's keys in the
        // order of its inserts. Only when some relationship may point at a new object are they also kept by object
        // (a table of a million entries is not built for a save of plain rows).
        var batchKeys: [ObjectIdentifier: [Int64]] = [:]
        for key in order {
            batchKeys[key] = try allocateKeys(for: batches[key]!)
        }
        var newKeys: [ObjectIdentifier: Int64] = [:]
        if [inserts, changed].joined().contains(where: \.hasRelationshipChanges) {
            newKeys.reserveCapacity(inserts.count)
            for key in order {
                for (object, pk) in zip(batches[key]!.inserts, batchKeys[key]!) { newKeys[ObjectIdentifier(object)] = pk }
            }
        }
        func reference(_ target: ManagedObject?) -> RowReference? {
            guard let target else { return nil }
            if let pk = newKeys[ObjectIdentifier(target)] { return RowReference(entityName: target.entity.name, primaryKey: pk) }
            // A new object reached here would lose the relationship: every path to it must have filled newKeys.
            assert(!target.isInserted, "save: no key for the new object \(target), referenced from a relationship")
            return target.objectID.primaryKey.map { RowReference(entityName: target.objectID.entityName, primaryKey: $0) }
        }

        // Computed before any store writes: reading members must not see a half-saved context.
        let toMany = try toManyChanges(of: Array([inserts, changed].joined()), reference: reference)

        // What the committed stores wrote, for the coordinator's save observers (collected only when there are
        // some); published even when a later store fails, since what committed stays committed.
        try coordinator.observingSave { observing, published in
            for key in order {
                let b = batches[key]!
                var changes = StoreChangeSet(author: transactionAuthor, contextName: name)
                if let lists = toMany[key] {
                    (changes.linkInserts, changes.linkDeletes, changes.orders) = (lists.inserts, lists.deletes, lists.orders)
                }
                let keys = batchKeys[key]!
                // Each row is the object's own block of values, made a `StoreRow` only as the store reads it
                // (12 bytes a row rather than a 64-byte `StoreRow`: 52 MB less for a million new objects).
                var rows = CompactRows(primaryKeys: keys)
                for (object, pk) in zip(b.inserts, keys) {
                    let handle = object.handle
                    var toOne: [String: RowReference] = [:]
                    for (name, target) in object.changedToOne { if let r = reference(target) { toOne[name] = r } }
                    // Transient attributes stay with the object (finishSave keeps them); no store holds them.
                    // (Only a set one is cleared: clearing copies the row out of the block it shares with the object.)
                    if handle.transientPositions.contains(where: { object.changedValues[$0] != nil }) {
                        var row = StoreRow(entityName: handle.name, primaryKey: pk, values: object.changedValues.handOutRowValues(handle.layout), toOne: toOne)
                        for position in handle.transientPositions where object.changedValues[position] != nil {
                            row.values[handle.layout.names[position]] = nil
                        }
                        rows.append(row)
                    } else {
                        rows.append(entityName: handle.name, layout: handle.layout, values: object.changedValues.handOut(), toOne: toOne)
                    }
                }
                changes.inserts = StoreRows(rows)
                for object in b.updates {
                    let handle = object.handle
                    let (primaryKey, version) = (object.savedPrimaryKey!, object.snapshot?.version ?? 0)
                    // By position, as the object holds them (no dictionary is built for a store that reads
                    // positions), unless a changed transient attribute is to be left out.
                    let changedTransient = handle.transientPositions.contains { object.changedValues[$0] != nil }
                    var update = RowUpdate(
                        entityName: handle.name, primaryKey: primaryKey, expectedVersion: version,
                        changes: object.changedValues.handOutPositioned(handle.layout), excluding: changedTransient ? handle.transientPositions : [])
                    for (name, target) in object.changedToOne { update.toOne[name] = .some(reference(target)) }
                    update.toManyKeys = object.touchedToMany.union(object.changedToMany.keys)
                    changes.updates.append(update)
                }
                for object in b.deletes {
                    changes.deletes.append(RowDeletion(
                        entityName: object.entity.name, primaryKey: object.objectID.primaryKey!, expectedVersion: object.snapshot?.version ?? 0))
                }
                var saved: StoreSaveChanges?
                if observing {
                    saved = StoreSaveChanges(storeIdentifier: b.store.identifier, configuration: b.store.configurationName)
                    for object in b.updates { saved!.updated[object.objectID] = object.changedKeys }
                    saved!.deleted = Set(b.deletes.map(\.objectID))
                }
                try b.store.save(changes)
                committed = true
                // Each store is final once committed: if a later store fails, these objects stay saved
                // and a retry writes only what is left. The inserted rows become the objects' snapshots as they are.
                let inserted = changes.inserts
                changes = StoreChangeSet()
                finishSave(inserts: b.inserts, rows: inserted, changed: b.updates + b.deletes, store: b.store.identifier, keys: keys)
                if var saved {
                    saved.inserted = Set(b.inserts.map(\.objectID))
                    published.append(saved)
                }
            }
        }
    }

    /// Permanent keys for a batch's inserts, in their order: one range per inheritance tree (its root's key
    /// sequence), trees in name order.
    private func allocateKeys(for batch: StoreBatch) throws -> [Int64] {
        guard !batch.inserts.isEmpty else { return [] }
        // Counted per entity handle (a pointer hashes faster than a root name), then per root.
        var perHandle: [ObjectIdentifier: (handle: EntityHandle, count: Int)] = [:]
        for object in batch.inserts { perHandle[ObjectIdentifier(object.handle), default: (object.handle, 0)].count += 1 }
        var perRoot: [String: (entityName: String, count: Int)] = [:]
        for (handle, count) in perHandle.values {
            perRoot[handle.description.rootName, default: (handle.name, 0)].count += count
        }
        var next: [String: Int64] = [:]
        for (root, entry) in perRoot.sorted(by: { $0.key < $1.key }) {
            next[root] = try batch.store.allocatePrimaryKeys(for: entry.entityName, count: entry.count).lowerBound
        }
        if next.count == 1, let first = next.values.first {
            return (0..<Int64(batch.inserts.count)).map { first + $0 }
        }
        var rootOf: [ObjectIdentifier: String] = [:]
        for (handle, _) in perHandle.values { rootOf[ObjectIdentifier(handle)] = handle.description.rootName }
        return batch.inserts.map { object in
            let root = rootOf[ObjectIdentifier(object.handle)]!
            defer { next[root]! += 1 }
            return next[root]!
        }
    }

    /// The store an inserted object goes to: its assignment, or the only store serving its entity.
    private func route(_ object: ManagedObject) throws -> any PersistentStore {
        if let store = object.store { return store }
        return try coordinator.onlyStore(serving: object.entity.name, inserting: object.objectID.description)
    }

    /// Required attributes and to-one relationships, and to-one targets in the same store.
    private func validate(_ object: ManagedObject) throws {
        // Lists kept by the handle: borrowing the entity description for them retained and released its arrays
        // for every object (a third of this check in callgrind).
        let handle = object.handle
        for relationship in handle.countedToMany {
            let count = try object.relatedObjects(forKey: relationship.name).count
            if count < relationship.minCount || (relationship.maxCount > 0 && count > relationship.maxCount) {
                throw ContextError.relationshipCount(
                    entity: object.entity.name, key: relationship.name, count: count, min: relationship.minCount,
                    max: relationship.maxCount, object: object.objectID.description)
            }
        }
        for position in handle.requiredPositions where object.value(at: position).isNull {
            throw ContextError.missingRequiredValue(
                entity: object.entity.name, key: handle.layout.names[position], object: object.objectID.description)
        }
        for (name, members) in object.changedToMany {
            guard let home = object.store else { continue }
            for member in members where !member.isDeleted {
                let memberStore = try member.store ?? route(member)
                if memberStore !== home {
                    throw ContextError.crossStoreRelationship(
                        entity: object.entity.name, key: name, object: object.objectID.description,
                        destination: member.entity.name, sourceStore: home.displayPath, destinationStore: memberStore.displayPath)
                }
            }
        }
        for relationship in handle.persistentToOnes {
            let target = try object.relatedObject(forKey: relationship.name)
            if target == nil, !relationship.isOptional || relationship.minCount > 0 {
                throw ContextError.missingRequiredValue(entity: object.entity.name, key: relationship.name, object: object.objectID.description)
            }
            if let target, let home = object.store {
                let targetStore = try target.store ?? route(target)
                if targetStore !== home {
                    throw ContextError.crossStoreRelationship(
                        entity: object.entity.name, key: relationship.name, object: object.objectID.description,
                        destination: target.entity.name, sourceStore: home.displayPath, destinationStore: targetStore.displayPath)
                }
            }
        }
    }

    /// Optimistic locking, checked in every store before any store writes, so a conflict in one store leaves
    /// the others untouched. Each store checks again inside its transaction.
    private func checkVersions(_ changed: [ManagedObject]) throws {
        let ids = changed.map(\.objectID)
        let current = try coordinator.rows(for: ids)
        for object in changed {
            let expected = object.snapshot?.version ?? 0
            let actual = current[object.objectID]?.row.version
            if actual != expected {
                // A changed object was fetched from a store; if that store was removed since, its ID still names it.
                let store = object.store ?? object.objectID.storeIdentifier.flatMap(coordinator.store(withIdentifier:))
                throw StoreError.conflict(
                    path: store?.displayPath ?? "the removed store \(object.objectID.storeIdentifier?.uuidString ?? object.objectID.description)",
                    configuration: store?.configurationName ?? "(unknown: the store was removed from the coordinator)",
                    objectID: object.objectID, entity: object.entity.name, primaryKey: object.objectID.primaryKey ?? 0,
                    expectedVersion: expected, actualVersion: actual)
            }
        }
    }

    /// After every store committed: new objects get permanent IDs, snapshots take the saved state.
    private func finishSave(
        inserts: [ManagedObject], rows: StoreRows, changed: [ManagedObject], store: UUID, keys: [Int64]
    ) {
        for (object, pk) in zip(inserts, keys) {
            let id = ObjectID(store: store, entityName: object.entity.name, primaryKey: pk)
            registered[object.objectID] = nil
            object.objectID = id
            registered[id] = object
        }
        for (object, row) in zip(inserts, rows) {
            // The row as written: values by the entity's layout, to-ones to the targets' permanent keys, Z_OPT 1.
            object.snapshot = ObjectSnapshot(row)
            // The transient values the store was not given stay the object's, as in Core Data.
            for position in object.handle.transientPositions {
                if let value = object.changedValues[position], !value.isNull {
                    object.snapshot!.values[object.handle.layout.names[position]] = value
                }
            }
            object.changedValues.removeAll()
            object.clearRelationshipChanges()
            object.isInserted = false
        }
        for object in changed {
            if object.isDeleted {
                registered[object.objectID] = nil
                object.context = nil
                continue
            }
            // Changed in place (`object.snapshot!.…`, no local copy): a snapshot holding the only reference to its
            // row block keeps it, rather than copying the row out at every save (a third of finishSave in callgrind).
            let layout = object.handle.layout
            if object.snapshot!.values.layout === layout {
                // The snapshot has the entity's layout (see `register`): the change's position is the row's.
                object.changedValues.forEachChange { object.snapshot!.values.setSlot($0, $1) }
            } else {
                object.changedValues.forEachChange { object.snapshot!.values[layout.names[$0]] = $1.isNull ? nil : $1 }
            }
            for (name, target) in object.changedToOne {
                object.snapshot!.toOne[name] = target.flatMap { t in
                    t.objectID.primaryKey.map { RowReference(entityName: t.entity.name, primaryKey: $0) }
                }
            }
            object.snapshot!.version += 1
            object.changedValues.removeAll()
            object.clearRelationshipChanges()
        }
        // A committed foreign key or link changes the members other objects read before: forget them all
        // (except where unsaved list changes still need them), they are read again in batches on demand.
        if cachesMembers {
            var kept = false
            for object in registered.values where !object.committedToMany.isEmpty {
                if object.changedToMany.isEmpty { object.committedToMany = [:] } else { kept = true }
            }
            cachesMembers = kept
        }
        // The saved inserts are no longer `isInserted`; every other entry still is (a deleted insert leaves the list).
        if !inserts.isEmpty { insertedObjects.removeAll { !$0.isInserted } }
        for object in changed { changedObjects[ObjectIdentifier(object)] = nil }
    }
}

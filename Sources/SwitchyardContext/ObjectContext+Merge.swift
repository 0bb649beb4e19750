import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardStores

// MARK: - Merging another context's save

extension ObjectContext {
    /// Brings the objects this context holds up to date with another context's save, as Core Data's
    /// `mergeChanges(fromContextDidSave:)` does: updated objects take their saved state (re-read in one batch per
    /// store), deleted objects leave the context (writing to them throws `ContextError.detachedObject`), and
    /// inserted objects need nothing (fetches find them). Objects that the save changed while this context holds
    /// unsaved changes to them are resolved by `policy`; deletions win under every policy but `.error`.
    ///
    /// ```swift
    /// let observation = coordinator.addSaveObserver { saved in pending.append(saved) }
    /// // ... another context saves ...
    /// for saved in pending { try context.mergeChanges(from: saved, policy: .contextWins) }
    /// ```
    ///
    /// - Throws: `ContextError.mergeConflict` under `.error` when an object the save changed has unsaved changes
    ///   here (nothing is merged); `ContextError.foreignSaveNotification` when the notification comes from a
    ///   coordinator with another model.
    public func mergeChanges(from notification: SaveNotification, policy: MergePolicy = .error) throws {
        guard notification.coordinator === coordinator || notification.coordinator.model == model else {
            throw ContextError.foreignSaveNotification(
                entities: notification.coordinator.model.entities.map(\.name).sorted(),
                expected: model.entities.map(\.name).sorted())
        }
        var updated: [(object: ManagedObject, keys: Set<String>)] = []
        var deleted: [ManagedObject] = []
        for store in notification.stores {
            for (id, keys) in store.updated {
                if let object = registered[id], !object.isInserted { updated.append((object, keys)) }
            }
            for id in store.deleted {
                if let object = registered[id] { deleted.append(object) }
            }
        }
        if policy == .error {
            let conflicts = (updated.map(\.object) + deleted).filter(\.hasChanges)
            guard conflicts.isEmpty else { throw ContextError.mergeConflict(conflicts.map(\.objectID.description).sorted()) }
        }
        for object in deleted { detachDeleted(object) }
        guard !updated.isEmpty else { return }
        let rows = try coordinator.rows(for: updated.map(\.object.objectID))
        for (object, keys) in updated {
            guard let row = rows[object.objectID] else {
                // Deleted by a save after this one: the row is gone.
                detachDeleted(object)
                continue
            }
            try resolve(object, savedRow: row.row, changedInStore: keys, policy: policy)
        }
    }

    /// Brings the objects this context holds up to date with transactions read from persistent history
    /// (`StoreCoordinator.history(after:in:)` or `historyTransactions(after:in:)`), written by this process or
    /// another one: Core Data's `mergeChanges(fromContextDidSave:)` with a history transaction's
    /// `objectIDNotification()`. The transactions are merged together, all or nothing: under `.error`, an
    /// object that any of them changed and this context has unsaved changes to stops the whole merge.
    ///
    /// ```swift
    /// for try await transaction in coordinator.historyTransactions(after: token, in: "Cloud")
    ///     where transaction.author != context.transactionAuthor {
    ///     try context.mergeChanges(fromHistory: [transaction], policy: .storeWins)
    /// }
    /// ```
    ///
    /// - Throws: what `mergeChanges(from:policy:)` throws for a notification;
    ///   `CoordinatorError.historyTokenFromAnotherStore` for a transaction of a store this context's coordinator
    ///   does not have (nothing is merged).
    public func mergeChanges(fromHistory transactions: [HistoryTransaction], policy: MergePolicy = .error) throws {
        for transaction in transactions where coordinator.store(withIdentifier: transaction.token.storeIdentifier) == nil {
            throw CoordinatorError.historyTokenFromAnotherStore(token: transaction.token.description, configuration: nil, store: nil, path: nil)
        }
        try mergeChanges(from: SaveNotification(coordinator: coordinator, stores: transactions.map(\.storeChanges)), policy: policy)
    }

    /// Brings `object` to `savedRow` under `policy`, for a merge and for a save that met a conflict: its unsaved
    /// changes are kept (`.contextWins`, `.error`), dropped where the store changed the same property
    /// (`.storeWins`), or dropped altogether (`.rollback`); then the row becomes its saved state.
    package func resolve(_ object: ManagedObject, savedRow: StoreRow, changedInStore keys: Set<String>, policy: MergePolicy) throws {
        if object.hasChanges {
            switch policy {
            case .rollback:
                for key in object.changedToMany.keys { releasePartners(of: object, key) }
                discardChanges(of: object)
            case .storeWins:
                for key in keys.intersection(object.changedKeys) {
                    releasePartners(of: object, key)
                    dropChange(of: key, in: object)
                }
                if !object.hasChanges { changedObjects[ObjectIdentifier(object)] = nil }
            case .contextWins, .error:
                break
            }
        }
        try takeSavedState(savedRow, for: object)
    }

    /// After `object` took a newer saved state with its unsaved changes kept: each unsaved list of a many-to-many
    /// or of a to-many without inverse, a whole list made against the members read before (kept in
    /// `committedToMany` for this), is made again against the members the store holds now, as Core Data re-applies
    /// a kept change to the refreshed object. What this context added or removed stays so; what the other save
    /// added is listed (after this context's members, in the store's order); what it removed and this context had
    /// not touched is gone. The next save then writes this context's own changes only, as before. (Until
    /// 2026-12-02 the whole list was kept: the other save's additions stayed hidden, its removals still showed.)
    package func rebaseKeptLists(of object: ManagedObject) throws {
        for (name, changed) in object.changedToMany {
            guard let base = object.committedToMany[name], let relationship = object.handle.relationship(named: name),
                model.isLinkBackedToMany(relationship)
            else { continue }
            object.committedToMany[name] = nil
            do {
                let fresh = try committedMembers(of: object, relationship)
                let before = Set(base), now = Set(fresh)
                let listed = Set(changed.map(ObjectIdentifier.init))
                // Members the store no longer holds, which this context had from the store and left in its list, go.
                let kept = changed.filter { $0.isInserted || !before.contains($0.objectID) || now.contains($0.objectID) }
                var added = try objects(for: fresh.filter { !before.contains($0) }).filter { !listed.contains(ObjectIdentifier($0)) }
                if model.isToManyWithoutInverse(relationship) {
                    // One owner per member: one that another owner's unsaved list here took stays there.
                    let claims = try pendingOwners(of: relationship, from: object.entity.name)
                    added.removeAll { claims[ObjectIdentifier($0)].map { $0 !== object } ?? false }
                }
                object.changedToMany[name] = kept + added
            } catch {
                // A read failed: the list keeps the base it was made against, so a later save writes only its changes.
                object.committedToMany[name] = base
                throw error
            }
        }
    }

    /// Before `object`'s unsaved change of the many-to-many `key` is dropped: each partner's own unsaved list of
    /// the inverse goes back to what the store had for `object` (in or out), as Core Data keeps both ends of a
    /// relationship in step. Before 2026-12-02 the partner kept the change, so the context showed
    /// `O1.tags == [T0, T2]` beside `T1.orders == [O1]` and the next save wrote the T1 link. A partner whose list
    /// then matches the store's has no change left to it; one with nothing else unsaved stops being changed.
    private func releasePartners(of object: ManagedObject, _ key: String) {
        guard object.changedToMany[key] != nil, let relationship = object.handle.relationship(named: key),
            model.isManyToMany(relationship), let inverse = relationship.inverseName
        else { return }
        let ordered = model.inverse(of: relationship)?.isOrdered ?? false
        // Partners of this relationship only: another entity's to-many may share the inverse's name. The object is
        // its own partner through an inverse of another name (`following`/`followers`), not through itself.
        for partner in insertedObjects + Array(changedObjects.values) where partner !== object || inverse != key {
            guard var list = partner.changedToMany[inverse], model.entity(partner.entity.name, isKindOf: relationship.destinationEntityName)
            else { continue }
            let committed = partner.committedToMany[inverse] ?? []
            let stored = committed.contains(object.objectID)
            let listed = list.contains { $0 === object }
            guard stored != listed else { continue }
            if stored {
                // Back where the store keeps it, among the members the list still has from the store.
                let before = committed.prefix { $0 != object.objectID }.count
                let position = list.indices.first { i in
                    committed.firstIndex(of: list[i].objectID).map { $0 > before } ?? false
                } ?? list.count
                list.insert(object, at: position)
            } else {
                list.removeAll { $0 === object }
            }
            let ids = list.map(\.objectID)
            if !partner.isInserted, ordered ? ids == committed : Set(ids) == Set(committed) {
                partner.changedToMany[inverse] = nil
                partner.touchedToMany.remove(inverse)
                if !partner.hasChanges { changedObjects[ObjectIdentifier(partner)] = nil }
            } else {
                partner.changedToMany[inverse] = list
            }
        }
    }

    /// Forgets the unsaved change of property `key` of `object`.
    private func dropChange(of key: String, in object: ManagedObject) {
        if let position = object.handle.position(ofAttribute: key) { object.changedValues.remove(at: position) }
        object.changedToOne[key] = nil
        object.changedToMany[key] = nil
        object.touchedToMany.remove(key)
    }
}

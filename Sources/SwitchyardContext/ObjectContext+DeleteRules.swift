// MARK: - Delete rules
import SwitchyardModel

extension ObjectContext {
    /// Applies every pending delete's relationship rules before a save: Nullify clears the inverse to-one of
    /// the objects left behind (or, for a many-to-many, removes the deleted object from their lists), Cascade deletes them too (transitively), Deny refuses the whole save while
    /// the relationship still holds objects, No Action leaves them as they are.
    ///
    /// Runs before anything is written, so a Deny leaves both the stores and the context's changes intact,
    /// except for the cascaded deletes and nullified references, which are undone too.
    ///
    /// Returns what undoes every effect, for a save that stops on a conflict (see `saveOnce`).
    @discardableResult
    package func applyDeleteRules() throws -> () -> Void {
        var queue = changedObjects.values.filter(\.isDeleted)
        var visited = Set(queue.map(ObjectIdentifier.init))
        var undo: [() -> Void] = []
        do {
            while let object = queue.popLast() {
                for relationship in object.entity.allRelationships where !relationship.isTransient {
                    let related = try relatedForDeletion(object, relationship)
                    guard !related.isEmpty else { continue }
                    switch relationship.deleteRule {
                    case .deny:
                        throw ContextError.deleteDenied(
                            entity: object.entity.name, key: relationship.name, object: object.objectID.description,
                            count: related.count)
                    case .cascade:
                        for target in related where !target.isDeleted && visited.insert(ObjectIdentifier(target)).inserted {
                            // An unsaved target goes at once, with what its own Cascade rules reach; the saved
                            // objects deleted so run their rules in turn.
                            queue.append(contentsOf: try deleteCascadingFromInserts(target, undo: &undo, visited: &visited))
                        }
                    case .nullify:
                        if model.isManyToMany(relationship), let inverse = relationship.inverseName {
                            // Each partner's list lets go of the deleted object (the store drops the links too).
                            for target in related where !target.isDeleted {
                                let before = target.changedToMany[inverse]
                                let wasChanged = changedObjects[ObjectIdentifier(target)] != nil
                                let theirs = try target.relatedObjects(forKey: inverse)
                                undo.append {
                                    target.changedToMany[inverse] = before
                                    if !wasChanged { self.changedObjects[ObjectIdentifier(target)] = nil }
                                }
                                try willChange(target)
                                target.changedToMany[inverse] = theirs.filter { $0 !== object }
                            }
                            continue
                        }
                        guard let inverse = relationship.inverseName,
                            let inverseRelationship = model.entity(named: relationship.destinationEntityName)?
                                .relationship(named: inverse),
                            !inverseRelationship.isToMany
                        else { continue }
                        for target in related where !target.isDeleted {
                            let before = target.changedToOne[inverse]
                            let wasChanged = changedObjects[ObjectIdentifier(target)] != nil
                            undo.append {
                                target.changedToOne[inverse] = before
                                if !wasChanged { self.changedObjects[ObjectIdentifier(target)] = nil }
                            }
                            try target.setRelatedObject(nil, forKey: inverse)
                        }
                    case .noAction:
                        continue
                    }
                }
            }
        } catch {
            for step in undo.reversed() { step() }
            throw error
        }
        return { for step in undo.reversed() { step() } }
    }

    /// Deletes `object`: a saved one is marked for deletion and returned, for its rules to run; an unsaved insert
    /// is dropped after what its Cascade rules reach is deleted the same way (read first: its relationships can
    /// no longer be read once it is dropped), returning the saved objects among them. Before 2026-12-02 an unsaved
    /// insert's rules never ran: deleting an unsaved keeper left its cats saved without a keeper, and a cascade
    /// through an unsaved cat stopped there, its toys kept. Every step adds its undo to `undo`.
    package func deleteCascadingFromInserts(
        _ object: ManagedObject, undo: inout [() -> Void], visited: inout Set<ObjectIdentifier>
    ) throws -> [ManagedObject] {
        guard object.isInserted else {
            undo.append(cascadeUndo(for: object))
            object.isDeleted = true
            changedObjects[ObjectIdentifier(object)] = object
            return [object]
        }
        var targets: [ManagedObject] = []
        for relationship in object.entity.allRelationships where !relationship.isTransient && relationship.deleteRule == .cascade {
            targets += try relatedForDeletion(object, relationship)
        }
        // Recorded once the reads are done: a read that throws leaves this object as it was, nothing to undo.
        undo.append(cascadeUndo(for: object))
        undo.append(dropInserted(object))
        var saved: [ManagedObject] = []
        for target in targets where !target.isDeleted && visited.insert(ObjectIdentifier(target)).inserted {
            saved += try deleteCascadingFromInserts(target, undo: &undo, visited: &visited)
        }
        return saved
    }

    /// The objects at the other end of `relationship` that a delete of `object` affects.
    private func relatedForDeletion(_ object: ManagedObject, _ relationship: RelationshipDescription) throws -> [ManagedObject] {
        if relationship.isToMany {
            guard model.isLinkBackedToMany(relationship) || model.isInverseBackedToMany(relationship) else { return [] }
            return try relatedObjects(of: object, through: relationship)
        }
        return try object.relatedObject(forKey: relationship.name).map { [$0] } ?? []
    }

    /// Restores a cascaded object if a later rule refuses the save (an unsaved insert is re-inserted where it was:
    /// undone in reverse, the inserts come back in their order, which fetches and primary keys follow).
    private func cascadeUndo(for target: ManagedObject) -> () -> Void {
        let wasChanged = changedObjects[ObjectIdentifier(target)] != nil
        let wasInserted = target.isInserted
        let position = wasInserted ? insertedObjects.firstIndex { $0 === target } : nil
        return {
            target.isDeleted = false
            if wasInserted {
                target.isInserted = true
                target.context = self
                self.registered[target.objectID] = target
                self.insertedObjects.insert(target, at: min(position ?? self.insertedObjects.count, self.insertedObjects.count))
            } else if !wasChanged {
                self.changedObjects[ObjectIdentifier(target)] = nil
            }
        }
    }
}

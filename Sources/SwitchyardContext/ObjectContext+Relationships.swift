import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - To-many members

extension ObjectContext {
    /// Members of a to-many relationship, pending changes included: a many-to-many or a to-many without
    /// inverse from the object's own list (or the store's links), a to-many with a to-one inverse through that inverse, in the source's store.
    /// Store reads are batched (`committedMembers`), never one per object.
    /// Ordered relationships come in their order; objects deleted in this context are left out.
    package func relatedObjects(of object: ManagedObject, through relationship: RelationshipDescription) throws -> [ManagedObject] {
        if model.isLinkBackedToMany(relationship) {
            if let changed = object.changedToMany[relationship.name] {
                let live = changed.filter { !$0.isDeleted }
                return relationship.isOrdered ? live : Self.byPrimaryKey(live)
            }
            let members = try objects(for: committedMembers(of: object, relationship))
            guard model.isToManyWithoutInverse(relationship) else { return members }
            // A member belongs to one owner: one that another owner's unsaved list took over has left this one.
            let claims = try pendingOwners(of: relationship, from: object.entity.name)
            return members.filter { claims[ObjectIdentifier($0)].map { $0 === object } ?? true }
        }
        guard model.isInverseBackedToMany(relationship), let inverse = relationship.inverseName else {
            throw ContextError.typeMismatch(
                entity: object.entity.name, key: relationship.name, expected: "a to-many with an inverse",
                actual: "no inverse")
        }
        // Saved members from the store (read in batches), less those re-pointed or deleted here, plus objects
        // whose unsaved inverse points at this one; saved ones by primary key, then unsaved in insertion order.
        var members = try objects(for: committedMembers(of: object, relationship)).filter { member in
            guard let changed = member.changedToOne[inverse] else { return true }
            return changed === object
        }
        var seen = Set(members.map(ObjectIdentifier.init))
        let pending = insertedObjects + changedObjects.values.sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
        // Of the destination entity only: sibling subentities may each declare a to-one of the inverse's name
        // (`Cat.owner` for `cats`, `Dog.owner` for `dogs`), and a cat's owner does not make it one of the dogs.
        for candidate in pending where !candidate.isDeleted && candidate.changedToOne[inverse].map({ $0 === object }) == true {
            guard model.entity(candidate.entity.name, isKindOf: relationship.destinationEntityName) else { continue }
            if seen.insert(ObjectIdentifier(candidate)).inserted { members.append(candidate) }
        }
        members = Self.byPrimaryKey(members)
        guard relationship.isOrdered else { return members }
        // Membership comes from the inverse; the order from the object's own list, else the store's positions.
        // Members with no place in either keep their fetched order after the placed ones.
        var rank: [ObjectIdentifier: Int] = [:]
        if let changed = object.changedToMany[relationship.name] {
            for (i, member) in changed.enumerated() { rank[ObjectIdentifier(member)] = i }
        } else {
            let order = Dictionary(
                try committedMembers(of: object, relationship).enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            for member in members { rank[ObjectIdentifier(member)] = order[member.objectID] }
        }
        return members.enumerated().sorted { a, b in
            let ra = rank[ObjectIdentifier(a.element)] ?? Int.max, rb = rank[ObjectIdentifier(b.element)] ?? Int.max
            return ra != rb ? ra < rb : a.offset < b.offset
        }.map(\.element)
    }

    /// For a to-many without inverse: each member of an unsaved list of that relationship, and the owner whose
    /// list holds it (the last one to take it wins, as the store's single foreign key does).
    package func pendingOwners(of relationship: RelationshipDescription, from entityName: String) throws -> [ObjectIdentifier: ManagedObject] {
        guard let end = model.end(of: relationship.name, from: entityName) else { return [:] }
        var owners: [ObjectIdentifier: ManagedObject] = [:]
        for owner in insertedObjects + Array(changedObjects.values) where !owner.isDeleted {
            guard let members = owner.changedToMany[relationship.name],
                model.end(of: relationship.name, from: owner.entity.name)?.key == end.key
            else { continue }
            for member in members { owners[ObjectIdentifier(member)] = owner }
        }
        return owners
    }

    /// For a to-many without inverse: the registered owners other than `owner` whose list (unsaved, or as last
    /// read from the store) holds any of `members`, with the members each holds. One pass over the context.
    package func otherOwners(
        of members: [ManagedObject], through relationship: RelationshipDescription, from entityName: String, excluding owner: ManagedObject
    ) -> [(owner: ManagedObject, members: Set<ObjectIdentifier>)] {
        guard !members.isEmpty, let end = model.end(of: relationship.name, from: entityName) else { return [] }
        let wanted = Set(members.map(ObjectIdentifier.init))
        let savedIDs = Dictionary(members.filter { !$0.isInserted }.map { ($0.objectID, ObjectIdentifier($0)) }, uniquingKeysWith: { a, _ in a })
        var result: [(owner: ManagedObject, members: Set<ObjectIdentifier>)] = []
        for peer in registered.values where peer !== owner && !peer.isDeleted {
            guard peer.changedToMany[relationship.name] != nil || peer.committedToMany[relationship.name] != nil,
                model.end(of: relationship.name, from: peer.entity.name)?.key == end.key
            else { continue }
            var taken = Set<ObjectIdentifier>()
            if let changed = peer.changedToMany[relationship.name] {
                for member in changed where wanted.contains(ObjectIdentifier(member)) { taken.insert(ObjectIdentifier(member)) }
            } else if let committed = peer.committedToMany[relationship.name] {
                for id in committed { if let member = savedIDs[id] { taken.insert(member) } }
            }
            if !taken.isEmpty { result.append((peer, taken)) }
        }
        return result
    }

    /// Saved objects by primary key, then unsaved ones in their given order: how unordered to-many members read.
    package static func byPrimaryKey(_ objects: [ManagedObject]) -> [ManagedObject] {
        objects.enumerated().sorted { a, b in
            switch (a.element.objectID.primaryKey, b.element.objectID.primaryKey) {
            case let (x?, y?): return x < y
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.offset < b.offset
            }
        }.map(\.element)
    }

    /// The members the store holds for a to-many of `object`, cached on the object.
    /// A miss reads the same relationship for up to 500 other registered objects of the store at once, so
    /// walking a fetched list costs one store read per batch, not one per object.
    package func committedMembers(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> [ObjectID] {
        let name = relationship.name
        if let cached = object.committedToMany[name] { return cached }
        guard !object.isInserted, let store = object.store, object.objectID.primaryKey != nil,
            let end = model.end(of: name, from: object.entity.name)
        else { return [] }
        var batch = [object]
        for peer in registered.values {
            if batch.count >= 500 { break }
            guard peer !== object, peer.storage === store, !peer.isInserted, peer.committedToMany[name] == nil,
                peer.objectID.primaryKey != nil, model.end(of: name, from: peer.entity.name)?.key == end.key
            else { continue }
            batch.append(peer)
        }
        let references = batch.map { RowReference(entityName: $0.entity.name, primaryKey: $0.objectID.primaryKey!) }
        memberReads += 1
        let members = try store.relatedReferences(of: references, relationship: name)
        cachesMembers = true
        for (peer, reference) in zip(batch, references) {
            peer.committedToMany[name] = (members[reference] ?? []).map {
                ObjectID(store: store.identifier, entityName: $0.entityName, primaryKey: $0.primaryKey)
            }
        }
        return object.committedToMany[name] ?? []
    }

    /// The context's objects for these IDs, in order, reading the unregistered ones in one batch; missing
    /// and deleted objects are left out.
    package func objects(for ids: [ObjectID]) throws -> [ManagedObject] {
        let missing = ids.filter { registered[$0] == nil }
        if !missing.isEmpty {
            for fetched in try coordinator.rows(for: missing).values { _ = register(fetched.row, from: fetched.store) }
        }
        return ids.compactMap { registered[$0] }.filter { !$0.isDeleted }
    }

    /// A new member of `owner`'s to-many must belong to this context and be of the destination entity.
    package func checkMember(_ member: ManagedObject, of owner: ManagedObject, _ relationship: RelationshipDescription) throws {
        guard member.context != nil else { throw ContextError.detachedObject(member.description) }
        guard member.context === self else { throw ContextError.foreignObject(member.objectID.description) }
        guard !member.isDeleted else { throw ContextError.deletedObject(member.description) }
        guard model.entity(member.entity.name, isKindOf: relationship.destinationEntityName) else {
            throw ContextError.typeMismatch(
                entity: owner.entity.name, key: relationship.name, expected: relationship.destinationEntityName,
                actual: member.entity.name)
        }
    }

    // MARK: - Save

    /// What one store must write for the to-many lists objects changed: many-to-many links added and removed
    /// (against the members last read from the store), and the full order of every changed ordered list.
    package func toManyChanges(
        of objects: [ManagedObject], reference: (ManagedObject) -> RowReference?
    ) throws -> [ObjectIdentifier: (inserts: [RelationshipLink], deletes: [RelationshipLink], orders: [RelationshipOrder])] {
        var result: [ObjectIdentifier: (inserts: [RelationshipLink], deletes: [RelationshipLink], orders: [RelationshipOrder])] = [:]
        for object in objects where !object.isDeleted && !object.changedToMany.isEmpty {
            guard let store = object.store, let source = reference(object) else { continue }
            var entry = result[ObjectIdentifier(store)] ?? ([], [], [])
            for name in object.changedToMany.keys.sorted() {
                guard let relationship = object.handle.relationship(named: name) else { continue }
                if model.isLinkBackedToMany(relationship) {
                    let current = (object.changedToMany[name] ?? []).filter { !$0.isDeleted }
                    let original = object.committedToMany[name] ?? []
                    let originalSet = Set(original)
                    let currentIDs = Set(current.map(\.objectID))
                    for member in current where !originalSet.contains(member.objectID) {
                        if let target = reference(member) {
                            entry.inserts.append(RelationshipLink(source: source, relationship: name, destination: target))
                        }
                    }
                    for id in original where !currentIDs.contains(id) {
                        guard let pk = id.primaryKey else { continue }
                        entry.deletes.append(RelationshipLink(
                            source: source, relationship: name, destination: RowReference(entityName: id.entityName, primaryKey: pk)))
                    }
                    if relationship.isOrdered {
                        entry.orders.append(RelationshipOrder(source: source, relationship: name, members: current.compactMap(reference)))
                    }
                } else if relationship.isOrdered {
                    let members = try relatedObjects(of: object, through: relationship)
                    entry.orders.append(RelationshipOrder(source: source, relationship: name, members: members.compactMap(reference)))
                }
            }
            result[ObjectIdentifier(store)] = entry
        }
        return result
    }
}

import Foundation
import SwitchyardModel

// MARK: - To-many relationships

extension ManagedObject {
    /// The objects of to-many relationship `key`, pending changes included: for an ordered relationship in
    /// its order, otherwise by primary key (unsaved members last).
    ///
    /// A to-many with a to-one inverse is found through that inverse; a many-to-many or a to-many without
    /// inverse through the store's links.
    public func relatedObjects(forKey key: String) throws -> [ManagedObject] {
        let relationship = try toManyRelationship(key)
        return try liveContext().relatedObjects(of: self, through: relationship)
    }

    /// Replaces the members of to-many relationship `key` (in this order, for an ordered one). Inverses follow:
    /// new members of a to-many with a to-one inverse point at this object and members left out are cleared;
    /// for a many-to-many, each added or removed member's own list gains or loses this object. A to-many without
    /// inverse keeps each member in one owner's list (Core Data stores the owner in the member's row): a member
    /// taken here leaves the list of any other owner of the same relationship.
    public func setRelatedObjects(_ objects: [ManagedObject], forKey key: String) throws {
        let relationship = try toManyRelationship(key)
        let context = try liveContext()
        guard !isDeleted else { throw ContextError.deletedObject(description) }
        var seen = Set<ObjectIdentifier>()
        let members = objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
        for member in members { try context.checkMember(member, of: self, relationship) }
        let model = context.model
        if model.isManyToMany(relationship), let inverse = relationship.inverseName {
            let old = try relatedObjects(forKey: key)
            let oldSet = Set(old.map(ObjectIdentifier.init))
            try context.willChange(self)
            for removed in old where !seen.contains(ObjectIdentifier(removed)) && !removed.isDeleted {
                let theirs = try removed.relatedObjects(forKey: inverse)
                try context.willChange(removed)
                removed.changedToMany[inverse] = theirs.filter { $0 !== self }
            }
            for added in members where !oldSet.contains(ObjectIdentifier(added)) {
                let theirs = try added.relatedObjects(forKey: inverse)
                try context.willChange(added)
                if !theirs.contains(where: { $0 === self }) { added.changedToMany[inverse] = theirs + [self] }
            }
            changedToMany[key] = members
            return
        }
        if model.isToManyWithoutInverse(relationship) {
            // The saved members first, as the many-to-many branch reads them: the save writes the difference from
            // them (until 2026-12-02 a list replaced without being read kept its old members in the store).
            if changedToMany[key] == nil { _ = try context.committedMembers(of: self, relationship) }
            // A member belongs to one owner (Core Data keeps the owner in the member's row): taking it from
            // another owner's list here, as the save will in the store.
            try context.willChange(self)
            for (other, taken) in context.otherOwners(of: members, through: relationship, from: entity.name, excluding: self) {
                let theirs = try other.relatedObjects(forKey: key)
                try context.willChange(other)
                other.changedToMany[key] = theirs.filter { !taken.contains(ObjectIdentifier($0)) }
            }
            changedToMany[key] = members
            return
        }
        guard model.isInverseBackedToMany(relationship), let inverse = relationship.inverseName else {
            throw ContextError.typeMismatch(
                entity: entity.name, key: key, expected: "a to-many with an inverse", actual: "a to-many without one")
        }
        for old in try relatedObjects(forKey: key) where !seen.contains(ObjectIdentifier(old)) {
            try old.setRelatedObject(nil, forKey: inverse)
        }
        for member in members where try member.relatedObject(forKey: inverse) !== self {
            try member.setRelatedObject(self, forKey: inverse)
        }
        if relationship.isOrdered {
            try context.willChange(self)
            changedToMany[key] = members
        }
    }

    /// Adds `object` to to-many relationship `key` (at the end of an ordered one); no change when it is a member.
    public func addRelatedObject(_ object: ManagedObject, forKey key: String) throws {
        let members = try relatedObjects(forKey: key)
        if members.contains(where: { $0 === object }) { return }
        try setRelatedObjects(members + [object], forKey: key)
    }

    /// Removes `object` from to-many relationship `key`; no change when it is not a member.
    public func removeRelatedObject(_ object: ManagedObject, forKey key: String) throws {
        let members = try relatedObjects(forKey: key)
        guard members.contains(where: { $0 === object }) else { return }
        try setRelatedObjects(members.filter { $0 !== object }, forKey: key)
    }

    /// Inserts `object` at `index` of ordered relationship `key` (moving it there if it is already a member).
    public func insertRelatedObject(_ object: ManagedObject, at index: Int, forKey key: String) throws {
        try requireOrdered(key)
        var members = try relatedObjects(forKey: key).filter { $0 !== object }
        guard index >= 0, index <= members.count else {
            throw ContextError.indexOutOfRange(entity: entity.name, key: key, index: String(index), valid: "0...\(members.count)")
        }
        members.insert(object, at: index)
        try setRelatedObjects(members, forKey: key)
    }

    /// Moves the member at `from` to position `to` of ordered relationship `key`.
    public func moveRelatedObject(from: Int, to: Int, forKey key: String) throws {
        try requireOrdered(key)
        var members = try relatedObjects(forKey: key)
        guard members.indices.contains(from), members.indices.contains(to) else {
            throw ContextError.indexOutOfRange(
                entity: entity.name, key: key, index: "\(from) -> \(to)", valid: members.isEmpty ? "none (no members)" : "0..<\(members.count)")
        }
        members.insert(members.remove(at: from), at: to)
        try setRelatedObjects(members, forKey: key)
    }

    private func requireOrdered(_ key: String) throws {
        guard try toManyRelationship(key).isOrdered else {
            throw ContextError.typeMismatch(entity: entity.name, key: key, expected: "an ordered to-many", actual: "an unordered to-many")
        }
    }

    package func toManyRelationship(_ key: String) throws -> RelationshipDescription {
        guard let relationship = handle.relationship(named: key) else {
            throw ContextError.unknownKey(entity: handle.name, key: key)
        }
        guard relationship.isToMany else {
            throw ContextError.typeMismatch(entity: entity.name, key: key, expected: "to-one (use relatedObject)", actual: "to-many access")
        }
        return relationship
    }
}

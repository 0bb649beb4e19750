import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - ManagedObject

/// One object in an `ObjectContext`: its committed state plus the changes not saved yet.
///
/// Not `Sendable`: an object belongs to its context, and a context to one task. Pass `objectID`s between tasks.
/// ```swift
/// let message = try context.insert("Message")
/// try message.set("text", "Hello")
/// let text = try message.get("text", as: String.self)
/// ```
public final class ManagedObject {
    // The stored `var`s skip Swift's dynamic exclusivity check (`@exclusivity(unchecked)`): it cost 60-80
    // instructions per access, two per attribute read, seven per object validated in a save (callgrind). The
    // check finds a read or write of a field while another access to it is still open. That needs code to run
    // inside a mutation of the field, and none does: the fields are changed by assignment or by mutating
    // methods of plain values (`ChangedValues`, `RelationshipState`, dictionaries) that call no closure of ours
    // and no user code, and the class is not Sendable, so no other thread reaches them. The whole test suite
    // ran clean with the check on before it was dropped.
    // Stored properties are laid out in declaration order: the two flags fill the padding after the ID's
    // storage, and the whole object (header included) fits a 128-byte allocation. Each field costs a million
    // fetched objects 8 MB or more, so what can be derived is not stored: the ID's entity name is the handle's,
    // and the context and store are one shared `ObjectHome`.
    /// The object's entity, shared with every object of the entity (see `EntityHandle`).
    package let handle: EntityHandle
    /// `objectID` without its entity name.
    @exclusivity(unchecked) private var idStorage: ObjectID.Storage
    /// True from `insert` until the save that writes the object (Core Data's `isInserted`).
    @exclusivity(unchecked) public internal(set) var isInserted = false
    /// True from `delete` until the save that removes the object, or a rollback (Core Data's `isDeleted`).
    @exclusivity(unchecked) public internal(set) var isDeleted = false
    /// `changedValues`' row in `changeBlock` (see `ChangedValues.packedRow`), in the padding after the flags.
    @exclusivity(unchecked) private var changeRow: UInt32 = 0
    /// The context and the store, as last resolved.
    @exclusivity(unchecked) private var home: ObjectHome
    /// The last state read from or written to the store; nil for an unsaved insert.
    @exclusivity(unchecked) package var snapshot: ObjectSnapshot?
    /// The block holding `changedValues`' row; nil before the first change since the last save.
    @exclusivity(unchecked) private var changeBlock: RowStorage?
    /// Relationship changes and caches, created on first use (see `RelationshipState`).
    @exclusivity(unchecked) private var relationships: RelationshipState?

    /// Attribute values set since the last save: a value built around `changeBlock` and `changeRow`, which the
    /// object keeps apart so that the row index fits padding (see `ChangedValues`).
    package var changedValues: ChangedValues {
        @inline(__always) get { ChangedValues(storage: changeBlock, packedRow: changeRow) }
        // The block is moved out and back, not copied: a copy retained it, and storing it back retained the
        // result and released the old value and the copy (four atomic operations each attribute set).
        @inline(__always) _modify {
            var values = ChangedValues(storage: changeBlock.take(), packedRow: changeRow)
            defer {
                changeRow = values.packedRow
                changeBlock = values.takeStorage()
            }
            yield &values
        }
    }

    /// Temporary until the first save, then `x-coredata://STORE/Entity/pN`.
    public internal(set) var objectID: ObjectID {
        get { ObjectID(entityName: handle.name, storage: idStorage) }
        set {
            precondition(newValue.entityName == handle.name, "ManagedObject: \(newValue) is not an ID of entity \(handle.name)")
            idStorage = newValue.storage
        }
    }

    /// `objectID.primaryKey` (nil while the ID is temporary), without building the ID.
    package var savedPrimaryKey: Int64? {
        if case .permanent(_, let pk) = idStorage { return pk }
        return nil
    }

    /// `objectID.predicateKey`, without building the ID.
    package var predicateKey: Int64 { idStorage.predicateKey }

    /// Whether `id` is this object's ID, compared without building the object's.
    package func hasID(_ id: ObjectID) -> Bool {
        idStorage == id.storage && handle.name == id.entityName
    }

    /// The context that owns the object (weak: the context owns its objects, not the reverse).
    public internal(set) var context: ObjectContext? {
        get { home.context }
        set {
            guard newValue !== home.context else { return }
            // Taken out of its context (a saved delete, a rollback): the old context's shared detached home, so
            // detaching a million objects does not make a million homes.
            home = newValue?.home(for: home.store) ?? home.context?.detachedHome(for: home.store) ?? ObjectHome(withoutContext: home.store)
        }
    }

    /// The store the object lives in (or was assigned to before its first save), as last resolved.
    package var storage: (any PersistentStore)? {
        get { home.store }
        set {
            guard newValue !== home.store else { return }
            home = home.context?.home(for: newValue) ?? ObjectHome(withoutContext: newValue)
        }
    }

    /// The object's entity.
    public var entity: EntityDescription {
        // Borrowed, not copied: callers reading one property of it do not copy (and retain) the whole description.
        _read { yield handle.description }
    }
    /// The store the object lives in: `storage`, followed to the store that took its place when the
    /// coordinator moved or replaced it (`StoreCoordinator.moveStore`).
    package var store: (any PersistentStore)? {
        get {
            guard let current = storage else { return nil }
            // The context borrowed (see `setValue`): a save reads each object's store several times.
            guard let context = home.unretainedContext,
                let successor = context._withUnsafeGuaranteedRef({ $0.coordinator.successor(of: current) })
            else { return current }
            storage = successor
            return successor
        }
        set { storage = newValue }
    }

    /// The relationship state, created for a change.
    private var relationshipState: RelationshipState {
        if let relationships { return relationships }
        let created = RelationshipState()
        relationships = created
        return created
    }
    /// To-one relationships set since the last save (`.some(nil)` clears one).
    package var changedToOne: [String: ManagedObject?] {
        get { relationships?.changedToOne ?? [:] }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.changedToOne = newValue } }
        _modify { yield &relationshipState.changedToOne }
    }
    /// The whole current member list of to-many relationships changed since the last save, for those whose
    /// members the object itself records: many-to-many (links) and ordered (positions).
    package var changedToMany: [String: [ManagedObject]] {
        get { relationships?.changedToMany ?? [:] }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.changedToMany = newValue } }
        _modify { yield &relationshipState.changedToMany }
    }
    /// To-many relationships whose members changed through the members' to-one inverse (membership lives in
    /// the members' rows): they count as changed keys, as in Core Data, and the save bumps this row's `Z_OPT`.
    package var touchedToMany: Set<String> {
        get { relationships?.touchedToMany ?? [] }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.touchedToMany = newValue } }
        _modify { yield &relationshipState.touchedToMany }
    }
    /// Members as the store last returned them (many-to-many and ordered to-many), read in batches on demand
    /// and dropped when the object is refreshed or saved.
    package var committedToMany: [String: [ObjectID]] {
        get { relationships?.committedToMany ?? [:] }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.committedToMany = newValue } }
        _modify { yield &relationshipState.committedToMany }
    }
    /// Fetched-property results, kept until the object is refreshed.
    package var fetchedCache: FetchedResultsCache {
        get { relationships?.fetchedCache ?? FetchedResultsCache() }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.fetchedCache = newValue } }
        _modify { yield &relationshipState.fetchedCache }
    }

    /// Forgets relationship changes and cached members after a save or rollback (fetched-property results stay).
    package func clearRelationshipChanges() {
        guard let relationships else { return }
        relationships.changedToOne = [:]
        relationships.changedToMany = [:]
        relationships.touchedToMany = []
        relationships.committedToMany = [:]
        if relationships.isEmpty { self.relationships = nil }
    }

    /// Whether any relationship change is pending.
    package var hasRelationshipChanges: Bool {
        guard let relationships else { return false }
        return !relationships.changedToOne.isEmpty || !relationships.changedToMany.isEmpty || !relationships.touchedToMany.isEmpty
    }

    /// An object of `entity` with `objectID` (of that entity) at `home`.
    package init(entity: EntityHandle, objectID: ObjectID, home: ObjectHome) {
        precondition(objectID.entityName == entity.name, "ManagedObject: \(objectID) is not an ID of entity \(entity.name)")
        self.handle = entity
        self.idStorage = objectID.storage
        self.home = home
    }

    /// True when the object has unsaved changes (or is an unsaved insert or delete).
    public var hasChanges: Bool {
        isInserted || isDeleted || !changedValues.isEmpty || hasRelationshipChanges
    }

    /// The names of attributes and relationships changed since the last save.
    public var changedKeys: Set<String> {
        Set(changedValues.names(handle.layout)).union(changedToOne.keys).union(changedToMany.keys).union(touchedToMany)
    }

    /// The store the object lives in, once known.
    public var persistentStore: (any PersistentStore)? { store }

    // MARK: - Attributes

    /// The current value of attribute `key` (`.null` when unset).
    public func value(forKey key: String) throws -> AttributeValue {
        guard let position = handle.position(ofAttribute: key) else {
            throw ContextError.unknownKey(entity: handle.name, key: key)
        }
        return value(at: position)
    }

    /// The current value of the attribute at `position` of the entity (`.null` when unset).
    package func value(at position: Int) -> AttributeValue {
        if let block = changeBlock {
            let row = Int(changeRow & ~ChangedValues.handedOutBit)
            if block.isChanged(row, position) { return block[row, position] }
        }
        // Read through `snapshot!`, not bound to a local: binding copied the snapshot (three retains and releases
        // per read; a fifth of validating an object in a save, callgrind).
        guard snapshot != nil else { return .null }
        // A fetched row takes the entity's layout when the store's is equivalent (see `ObjectContext.register`):
        // then the position is the row's too, and no name is hashed.
        if let value = snapshot!.values.slot(position, laidOutBy: handle.layout) { return value }
        return snapshot!.values[handle.layout.names[position]] ?? .null
    }

    /// Sets attribute `key`; a value of the wrong kind is `ContextError.typeMismatch`.
    public func setValue(_ value: AttributeValue, forKey key: String) throws {
        let (position, normalized) = try handle.checked(value, forKey: key)
        // The context borrowed, not retained: each set retained and released it, and the layout and arena read
        // from it and from the handle (8 atomic reference-count operations a set, about a sixth of the time of
        // inserting objects in `perf`).
        guard let context = home.unretainedContext else { throw ContextError.detachedObject(description) }
        try context._withUnsafeGuaranteedRef { context in
            try context.willChange(self)
            changedValues.set(normalized, at: position, layout: handle.layout, arena: context.changeArena)
        }
    }

    /// The value of attribute `key` as `T`, `nil` when unset; another stored kind is `ContextError.typeMismatch`.
    @inlinable
    public func get<T: AttributeConvertible>(_ key: String, as type: T.Type = T.self) throws -> T? {
        let v = try value(forKey: key)
        if v.isNull { return nil }
        guard let typed = T(attributeValue: v) else {
            throw ContextError.typeMismatch(
                entity: entity.name, key: key, expected: "\(T.self)", actual: "\(v) (\(v.kindName))")
        }
        return typed
    }

    /// Sets attribute `key` from a Swift value (`nil` clears it).
    @inlinable
    public func set<T: AttributeConvertible>(_ key: String, _ value: T?) throws {
        try setValue(value?.attributeValue ?? .null, forKey: key)
    }

    // MARK: - To-one relationships

    /// The object at the end of to-one relationship `key`, or nil.
    public func relatedObject(forKey key: String) throws -> ManagedObject? {
        let relationship = try toOneRelationship(key)
        let context = try liveContext()
        if let changed = changedToOne[key] { return changed }
        guard let reference = snapshot?.toOne[relationship.name], let store else { return nil }
        return try context.object(
            with: ObjectID(store: store.identifier, entityName: reference.entityName, primaryKey: reference.primaryKey),
            in: store)
    }

    /// Points to-one relationship `key` at `object` (nil clears it). The destination must be of the
    /// relationship's entity and in the same context.
    public func setRelatedObject(_ object: ManagedObject?, forKey key: String) throws {
        let relationship = try toOneRelationship(key)
        try liveContext().willChange(self)
        if let object {
            guard object.context != nil else { throw ContextError.detachedObject(object.description) }
            guard object.context === context else { throw ContextError.foreignObject(object.objectID.description) }
            guard !object.isDeleted else { throw ContextError.deletedObject(object.description) }
            guard context!.model.entity(object.entity.name, isKindOf: relationship.destinationEntityName) else {
                throw ContextError.typeMismatch(
                    entity: entity.name, key: key, expected: relationship.destinationEntityName, actual: object.entity.name)
            }
        }
        try context?.willChange(self)
        // A member of an ordered to-many moves through its to-one: it leaves the old owner's list and goes last
        // in the new owner's, so every backend is sent the same order (as Core Data appends it).
        var reordered: [(owner: ManagedObject, members: [ManagedObject], key: String)] = []
        if let inverse = relationship.inverseName, let context,
            let inverseRelationship = context.model.entity(named: relationship.destinationEntityName)?
                .relationship(named: inverse), inverseRelationship.isToMany, inverseRelationship.isOrdered
        {
            let old = try relatedObject(forKey: key)
            if old !== object {
                if let old, !old.isDeleted {
                    reordered.append((old, try old.relatedObjects(forKey: inverse).filter { $0 !== self }, inverse))
                }
                if let object {
                    reordered.append((object, try object.relatedObjects(forKey: inverse).filter { $0 !== self } + [self], inverse))
                }
            }
        }
        defer {
            for (owner, members, inverse) in reordered where (try? context?.willChange(owner)) != nil {
                owner.changedToMany[inverse] = members
            }
        }
        // Core Data marks the owners on the to-many side changed too: the old one lost this object, the new one
        // gained it (an ordered to-many records its new list above).
        if let inverse = relationship.inverseName, let context,
            let inverseRelationship = context.model.entity(named: relationship.destinationEntityName)?
                .relationship(named: inverse), inverseRelationship.isToMany, !inverseRelationship.isOrdered, !inverseRelationship.isTransient,
            !context.model.isManyToMany(inverseRelationship)
        {
            let old = try relatedObject(forKey: key)
            if old !== object {
                for owner in [old, object].compactMap({ $0 }) where !owner.isDeleted {
                    try context.willChange(owner)
                    owner.touchedToMany.insert(inverse)
                }
            }
        }
        // One-to-one: both rows hold a key, so the old partners on either side must let go.
        if let inverse = relationship.inverseName, let context,
            let inverseRelationship = context.model.entity(named: relationship.destinationEntityName)?
                .relationship(named: inverse), !inverseRelationship.isToMany
        {
            let old = try relatedObject(forKey: key)
            if old !== object {
                if let old, !old.isDeleted, try old.relatedObject(forKey: inverse) === self {
                    try context.willChange(old)
                    old.changedToOne[inverse] = .some(nil)
                }
                if let object {
                    if let previous = try object.relatedObject(forKey: inverse), previous !== self, !previous.isDeleted {
                        try context.willChange(previous)
                        previous.changedToOne[key] = .some(nil)
                    }
                    try context.willChange(object)
                    object.changedToOne[inverse] = .some(self)
                }
            }
        }
        changedToOne[key] = .some(object)
    }

    /// The object's context, or `ContextError.detachedObject` when it has none (so nothing written is lost
    /// silently).
    package func liveContext() throws -> ObjectContext {
        guard let context else { throw ContextError.detachedObject(description) }
        return context
    }

    private func toOneRelationship(_ key: String) throws -> RelationshipDescription {
        guard let relationship = handle.relationship(named: key) else {
            throw ContextError.unknownKey(entity: handle.name, key: key)
        }
        guard !relationship.isToMany else {
            throw ContextError.typeMismatch(entity: entity.name, key: key, expected: "to-many (use relatedObjects)", actual: "to-one access")
        }
        return relationship
    }

    // MARK: - Fetched properties

    /// Resolves fetched property `name` through the coordinator, in whichever store its destination lives;
    /// the result is cached until the object is refreshed.
    public func fetchedProperty(_ name: String) throws -> [ManagedObject] {
        // Only a fetched property of the entity is ever cached, so a cached result needs no lookup of the name.
        if let cached = fetchedCache[name] { return cached }
        guard let property = handle.fetchedProperty(named: name) else {
            throw ContextError.unknownKey(entity: handle.name, key: name)
        }
        let context = try liveContext()
        let result = try context.resolve(property, for: self)
        fetchedCache[name] = result
        return result
    }
}

// MARK: - CustomStringConvertible

extension ManagedObject: CustomStringConvertible {
    public var description: String { "<\(entity.name) \(objectID)>" }
}

@available(*, unavailable, message: "a ManagedObject belongs to one context and one task; pass its objectID instead")
extension ManagedObject: @unchecked Sendable {}

// MARK: - Predicate arguments

extension ManagedObject: PredicateArgumentConvertible {
    /// An object stands for its `ObjectID` (`chat == %@`): it matches that object only, in the store that holds
    /// it (rows of another store never match, whatever their keys), and unsaved objects in this context.
    public var predicateArgument: PredicateArgument { .object(objectID) }
}

extension EntityHandle {
    /// `value` for attribute `key` as the store will hold it, with the attribute's position: what setting an
    /// attribute and a batch operation check alike. An unknown key is `ContextError.unknownKey`, a value that
    /// does not fit the attribute's type `ContextError.typeMismatch` saying why.
    package func checked(_ value: AttributeValue, forKey key: String) throws -> (position: Int, value: AttributeValue) {
        guard let position = attributePositions[name: key] else { throw ContextError.unknownKey(entity: name, key: key) }
        let type = attributeTypes[position]
        guard let normalized = value.normalizedForObject(type) else {
            let refusal = value.objectRefusal(for: type)
            throw ContextError.typeMismatch(
                entity: name, key: key, expected: refusal.map { "\(type.rawValue) (\($0))" } ?? type.rawValue,
                actual: "\(value) (\(value.kindName))")
        }
        return (position, normalized)
    }
}

import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardQuery

// MARK: - Typed inserts and fetches

extension ObjectContext {
    /// Inserts a new object of `type`'s entity (registering the type with the coordinator first).
    public func insert<E: EntityObject>(_ type: E.Type) throws -> E {
        try register(type)
        return E(managedObject: try insert(E.entityName))
    }

    /// Fetches objects of `type`'s entity (and its subentities) as `type`, with a predicate and sort keys
    /// written against its key paths; unsaved changes are taken into account as in `fetch(_:)`.
    /// ```swift
    /// let recent = try context.fetch(Message.self, where: \.sentAt > cutoff, sortedBy: [.descending(\.sentAt)], limit: 20)
    /// ```
    // Inlinable, so it is specialized for `E` where it is called: unspecialized, each operation on `[E]` and
    // `[TypedSortKey<E>]` looked up generic metadata (about 1,300 instructions a call in callgrind).
    @inlinable
    public func fetch<E: EntityObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sortKeys: [TypedSortKey<E>] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws -> [E] {
        try register(type)
        var objects: [E] = []
        try fetch(try request(type, predicate, sortKeys, limit, offset), expecting: { objects.reserveCapacity($0) }) { object in
            objects.append(E(managedObject: consume object))
        }
        return objects
    }

    /// The number of objects `fetch(_:where:...)` would return.
    @inlinable
    public func count<E: EntityObject>(_ type: E.Type, where predicate: TypedPredicate<E>? = nil) throws -> Int {
        try register(type)
        return try count(try request(type, predicate, [], nil, 0))
    }

    /// The object with this ID as `type` (it must be of that entity or a subentity).
    public func existingObject<E: EntityObject>(_ type: E.Type, with id: ObjectID) throws -> E {
        try coordinator.registerType(type)
        let object = try existingObject(with: id)
        guard model.entity(object.entity.name, isKindOf: E.entityName) else {
            throw ContextError.wrongEntity(object: id.description, entity: object.entity.name, expected: E.entityName)
        }
        return E(managedObject: object)
    }

    /// Deletes a typed object, as `delete(_:)` does its `managedObject` (delete rules run at save).
    /// ```swift
    /// try context.delete(message)
    /// ```
    public func delete<E: EntityObject>(_ object: E) throws {
        try delete(object.managedObject)
    }

    /// Resolves fetched property `name` of many typed objects at once, as `prefetchFetchedProperty(_:for:)`
    /// does for `ManagedObject`s: one query per destination store where the predicate allows, and each
    /// object's generated accessor then reads the cached result.
    /// ```swift
    /// let messages = try context.fetch(Message.self)
    /// try context.prefetchFetchedProperty("preview", for: messages)
    /// let previews = try messages.map { try $0.preview() }   // no further query
    /// ```
    public func prefetchFetchedProperty<E: EntityObject>(_ name: String, for objects: [E]) throws {
        try prefetchFetchedProperty(name, for: objects.map { $0.managedObject })
    }

    /// Registers `type` with the coordinator (`StoreCoordinator.register(_:)`), unless it is the type this
    /// context registered last: the coordinator's check takes a lock and hashes the type, about 270 instructions
    /// of an indexed lookup in callgrind.
    @usableFromInline
    package func register<E: EntityObject>(_ type: E.Type) throws {
        let key = ObjectIdentifier(type)
        if lastRegisteredType == key { return }
        try coordinator.registerType(type)
        lastRegisteredType = key
    }

    /// The string-keyed request a typed fetch or count runs (inlinable with them, see `fetch(_:where:...)`).
    @inlinable
    package func request<E: EntityObject>(
        _ type: E.Type, _ predicate: TypedPredicate<E>?, _ sortKeys: [TypedSortKey<E>], _ limit: Int?, _ offset: Int
    ) throws -> FetchRequest {
        // No sort keys, no call: `checked` runs unspecialized here and looks up its generic metadata each time.
        FetchRequest(
            entityName: E.entityName, predicate: try predicate?.checked(),
            sortKeys: sortKeys.isEmpty ? [] : try TypedSortKey.checked(sortKeys), fetchLimit: limit, fetchOffset: offset)
    }
}

// MARK: - Registration

extension StoreCoordinator {
    /// Checks `types` against the model and remembers them: an entity the model lacks, or a declared property
    /// that is missing, of another type or optionality, or leads elsewhere, is `EntityTypeError` here — not
    /// at first access. Typed inserts and fetches register their type on first use.
    public func register(_ types: any EntityObject.Type...) throws {
        for type in types { try registerType(type) }
    }

    @usableFromInline
    package func registerType<E: EntityObject>(_ type: E.Type) throws {
        if registeredEntityTypes.withLock({ $0.contains(ObjectIdentifier(type)) }) { return }
        var checking: Set<ObjectIdentifier> = []
        try registerType(type, checking: &checking)
        // Only now, every type reached having matched: a failure anywhere leaves none of them registered.
        registeredEntityTypes.withLock { $0.formUnion(checking) }
    }

    /// Checks `type`, then the types its relationships and fetched properties hand out (each once: `checking`
    /// holds the types checked in this registration, so cycles through inverses end); the caller remembers
    /// them all only when every one matched.
    private func registerType<E: EntityObject>(_ type: E.Type, checking: inout Set<ObjectIdentifier>) throws {
        let key = ObjectIdentifier(type)
        if registeredEntityTypes.withLock({ $0.contains(key) }) || !checking.insert(key).inserted { return }
        guard let entity = model.entity(named: E.entityName) else {
            throw EntityTypeError(type: "\(E.self)", entity: E.entityName, problems: ["the model has no entity named '\(E.entityName)'"])
        }
        var problems = E.declaredProperties.compactMap { $0.mismatch(in: entity, model: model) }
        let declared = Set(E.declaredProperties.map(\.name))
        for name in Set(E.keyPathNames.values) where !declared.contains(name) {
            problems.append("keyPathNames names '\(name)', which declaredProperties does not declare")
        }
        // A key path must read what the property it names holds: one naming another attribute (say `\.name` for
        // 'age') would have predicates and sorts compare the wrong attribute without an error.
        let byName = Dictionary(E.declaredProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (keyPath, name) in E.keyPathNames {
            guard let property = byName[name], let mismatch = property.keyPathMismatch(valueType: Swift.type(of: keyPath).valueType) else { continue }
            problems.append("keyPathNames maps \(keyPath) to '\(name)', \(mismatch)")
        }
        guard problems.isEmpty else { throw EntityTypeError(type: "\(E.self)", entity: E.entityName, problems: problems) }
        for destination in E.declaredProperties.compactMap(\.destinationType) {
            try registerType(destination, checking: &checking)
        }
    }
}

// MARK: - EntityTypeError

/// A Swift entity type that does not match the model, found when the type is registered.
public struct EntityTypeError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The Swift type.
    public let type: String
    /// The entity it declares.
    public let entity: String
    /// Each mismatch, as a sentence.
    public let problems: [String]

    public var description: String {
        "Swift type \(type) does not match entity \(entity) of the model: " + problems.joined(separator: "; ")
    }

    public var errorDescription: String? { description }
}

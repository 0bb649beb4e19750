import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - EntityObject

/// A Swift type for one entity of the model: a typed view over a `ManagedObject`, so attribute and relationship
/// names are checked by the compiler instead of written as strings.
///
/// Write one by hand or generate it from an `.xcdatamodel(d)` (`storeinspect codegen MODEL`, or the
/// `SwitchyardCodegen` build plugin), as Xcode's codegen writes `NSManagedObject` subclasses:
/// ```swift
/// struct Chat: EntityObject {
///     static let entityName = "Chat"
///     static let declaredProperties: [DeclaredProperty] = [.attribute("title", String.self)]
///     static let keyPathNames: [PartialKeyPath<Chat>: String] = [\Chat.title: "title"]
///     let managedObject: ManagedObject
///     init(managedObject: ManagedObject) { self.managedObject = managedObject }
///     var title: String {
///         get { managedObject[attribute: "title"] }
///         nonmutating set { managedObject[attribute: "title"] = newValue }
///     }
/// }
/// let chat = try context.insert(Chat.self)
/// chat.title = "Team"
/// let chats = try context.fetch(Chat.self, where: \.title == "Team")
/// ```
/// Two views of one object (typed and string-keyed, or two typed values) always agree: they read and write
/// the same `ManagedObject`. The type is checked against the model when it is first registered with the
/// coordinator (`StoreCoordinator.register(_:)`, done by the first typed insert or fetch).
///
/// Values compare and hash by the object they view, as `NSManagedObject`s do: `message.chat == chat` is true when
/// both are the same object of the same context (`Set<Chat>` and dictionary keys work alike). Objects of two
/// contexts are different values; compare their `objectID`s to ask whether they are the same stored object.
///
/// The type itself (not its values) may be shared between threads (`SendableMetatype`): declarations name
/// their destination types, which registration then checks too.
public protocol EntityObject: Hashable, SendableMetatype {
    /// The entity's name in the model.
    static var entityName: String { get }
    /// The properties the type declares, checked against the model when the type is registered.
    static var declaredProperties: [DeclaredProperty] { get }
    /// The model name behind each key path the type offers to predicates and sort keys. Read once per type
    /// (a computed property is not recomputed for every predicate).
    static var keyPathNames: [PartialKeyPath<Self>: String] { get }
    /// The object this value views.
    var managedObject: ManagedObject { get }
    /// A view over `managedObject`, which must be of the entity (or a subentity).
    init(managedObject: ManagedObject)
}

extension EntityObject {
    /// True when both values view the same object (of the same context).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.managedObject === rhs.managedObject }

    /// Hashes the identity of the object the value views.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(managedObject)) }

    /// The object's ID.
    public var objectID: ObjectID { managedObject.objectID }

    /// True for `\Self.objectID`: a `#Predicate` comparing the object (or a to-one) with an `ObjectID`.
    package static func isObjectIDKeyPath(_ keyPath: AnyKeyPath) -> Bool { keyPath == \Self.objectID as AnyKeyPath }

    /// The model name `keyPathNames` gives a key path rooted at this type, nil when it lists none.
    package static func listedName(of keyPath: AnyKeyPath) -> String? {
        (keyPath as? PartialKeyPath<Self>).flatMap { KeyPathNameCache.name(of: $0) }
    }

    /// The model name of `keyPath`, or `QueryError.unsupported` for a key path the type does not list (a
    /// computed property of the user's own, say).
    package static func name(of keyPath: PartialKeyPath<Self>) throws -> String {
        guard let name = KeyPathNameCache.name(of: keyPath) else { throw QueryError.unsupported(unlisted(keyPath)) }
        return name
    }

    /// Why `keyPath`, which `keyPathNames` does not list, cannot be used.
    package static func unlisted(_ keyPath: AnyKeyPath) -> String {
        // Swift names a stored property's key path (`\Note.title`) but not a computed one's, which every entity
        // property is: that one is described by its value type.
        let text = "\(keyPath)"
        let named = text.contains("<computed") ? "a key path of \(Self.self) to a \(type(of: keyPath).valueType) property" : text
        return "\(named) is not one of \(Self.self).keyPathNames (entity \(entityName)): only the model's attributes and "
            + "relationships listed there can be used in typed predicates, sort keys and relationship methods; add it to "
            + "keyPathNames with its attribute's name"
    }

    /// A view of this object as another entity type, when its entity is of that kind (a `Special` object seen
    /// as its parent `Item`, or back).
    public func `as`<Other: EntityObject>(_ type: Other.Type) -> Other? {
        guard let context = managedObject.context,
            context.model.entity(managedObject.entity.name, isKindOf: Other.entityName)
        else { return managedObject.entity.name == Other.entityName ? Other(managedObject: managedObject) : nil }
        return Other(managedObject: managedObject)
    }

    // MARK: Throwing access

    /// Sets an attribute or relationship through its key path (a to-many's members in this order), throwing
    /// where the property setter would stop the program (a deleted or detached object, a value the attribute
    /// does not accept).
    public func set<Value>(_ keyPath: KeyPath<Self, Value>, _ value: Value) throws {
        let name = try Self.name(of: keyPath)
        if let relationship = managedObject.handle.relationship(named: name) {
            if relationship.isToMany {
                guard let members = value as? [any EntityObject] else {
                    throw ContextError.typeMismatch(
                        entity: managedObject.entity.name, key: name, expected: "an array of \(relationship.destinationEntityName)",
                        actual: "\(Swift.type(of: value))")
                }
                try managedObject.setRelatedObjects(members.map { $0.managedObject }, forKey: name)
            } else {
                guard let target = Self.reference(value) else {
                    throw ContextError.typeMismatch(
                        entity: managedObject.entity.name, key: name, expected: "a \(relationship.destinationEntityName) or nil",
                        actual: "\(Swift.type(of: value))")
                }
                try managedObject.setRelatedObject(target, forKey: name)
            }
        } else {
            // A key path whose Swift type is no attribute type (a hand-written keyPathNames entry for a computed
            // property, say) is an error, not a cleared attribute.
            guard let attributeValue = AttributeValue(converting: value) else {
                throw ContextError.typeMismatch(
                    entity: managedObject.entity.name, key: name,
                    expected: managedObject.entity.attribute(named: name)?.type.rawValue ?? "an attribute value",
                    actual: "\(Swift.type(of: value))")
            }
            try managedObject.setValue(attributeValue, forKey: name)
        }
    }

    /// Reads a to-one relationship through its key path, throwing where the property getter would stop the
    /// program (a detached object, a store that cannot be read).
    public func related<Destination: EntityObject>(_ keyPath: KeyPath<Self, Destination?>) throws -> Destination? {
        try managedObject.relatedObject(forKey: try Self.name(of: keyPath)).map(Destination.init(managedObject:))
    }

    /// Reads a to-many relationship through its key path (ordered ones in order), throwing where the property
    /// getter would stop the program.
    public func related<Destination: EntityObject>(_ keyPath: KeyPath<Self, [Destination]>) throws -> [Destination] {
        try managedObject.relatedObjects(forKey: try Self.name(of: keyPath)).map(Destination.init(managedObject:))
    }

    /// Replaces the members of a to-many relationship (in this order for an ordered one).
    public func setRelated<Destination: EntityObject>(_ keyPath: KeyPath<Self, [Destination]>, _ members: [Destination]) throws {
        try managedObject.setRelatedObjects(members.map { $0.managedObject }, forKey: try Self.name(of: keyPath))
    }

    /// Adds `member` to a to-many relationship (at the end of an ordered one).
    public func add<Destination: EntityObject>(_ member: Destination, to keyPath: KeyPath<Self, [Destination]>) throws {
        try managedObject.addRelatedObject(member.managedObject, forKey: try Self.name(of: keyPath))
    }

    /// Removes `member` from a to-many relationship.
    public func remove<Destination: EntityObject>(_ member: Destination, from keyPath: KeyPath<Self, [Destination]>) throws {
        try managedObject.removeRelatedObject(member.managedObject, forKey: try Self.name(of: keyPath))
    }

    /// Inserts `member` at `index` of an ordered to-many relationship.
    public func insert<Destination: EntityObject>(_ member: Destination, at index: Int, into keyPath: KeyPath<Self, [Destination]>) throws {
        try managedObject.insertRelatedObject(member.managedObject, at: index, forKey: try Self.name(of: keyPath))
    }

    /// Moves the member at `from` to position `to` of an ordered to-many relationship.
    public func move<Destination: EntityObject>(from: Int, to: Int, in keyPath: KeyPath<Self, [Destination]>) throws {
        try managedObject.moveRelatedObject(from: from, to: to, forKey: try Self.name(of: keyPath))
    }

    /// The object a to-one value points at (`.some(nil)` for a nil entity optional), or nil when `value` is
    /// no entity at all.
    private static func reference(_ value: Any) -> ManagedObject?? {
        if let entity = value as? any EntityObject { return .some(entity.managedObject) }
        if let optional = value as? any OptionalEntity { return .some(optional.wrappedManagedObject) }
        return nil
    }
}

/// `Destination?` where Destination is an entity type, seen without knowing Destination.
package protocol OptionalEntity { var wrappedManagedObject: ManagedObject? { get } }
extension Optional: OptionalEntity where Wrapped: EntityObject {
    package var wrappedManagedObject: ManagedObject? { self?.managedObject }
}

/// `Value?` where Value is an attribute type, seen without knowing Value.
package protocol OptionalAttribute { var wrappedAttributeValue: AttributeValue { get } }
extension Optional: OptionalAttribute where Wrapped: AttributeConvertible {
    package var wrappedAttributeValue: AttributeValue { self?.attributeValue ?? .null }
}

extension AttributeValue {
    /// The stored form of a Swift value of an attribute type (`AttributeConvertible`) or an optional one; nil
    /// for any other value.
    package init?(converting value: Any) {
        if let convertible = value as? any AttributeConvertible {
            self = convertible.attributeValue
        } else if let optional = value as? any OptionalAttribute {
            self = optional.wrappedAttributeValue
        } else {
            return nil
        }
    }
}

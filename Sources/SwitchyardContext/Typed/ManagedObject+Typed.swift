import Foundation
import SwitchyardModel

// MARK: - Typed access for EntityObject types

extension ManagedObject {
    /// A required attribute as `Value`, for the properties of `EntityObject` types. Reading one that has no
    /// value yet, or one of another type, stops the program with the entity, key and value named; so does a
    /// write the object cannot take (a deleted or detached object): use `EntityObject.set(_:_:)` to get those
    /// as errors.
    @inlinable
    public subscript<Value: AttributeConvertible>(attribute key: String) -> Value {
        get {
            let value = readTyped(key)
            guard !value.isNull else {
                preconditionFailure("\(self): required attribute \(entity.name).\(key) has no value yet; set it before reading it")
            }
            guard let typed = Value(attributeValue: value) else {
                preconditionFailure("\(self): \(entity.name).\(key) holds \(value), not a \(Value.self)")
            }
            return typed
        }
        set { writeTyped(key, newValue.attributeValue) }
    }

    /// An optional attribute as `Value?` (nil when unset), for the properties of `EntityObject` types.
    @inlinable
    public subscript<Value: AttributeConvertible>(attribute key: String) -> Value? {
        get {
            let value = readTyped(key)
            if value.isNull { return nil }
            guard let typed = Value(attributeValue: value) else {
                preconditionFailure("\(self): \(entity.name).\(key) holds \(value), not a \(Value.self)")
            }
            return typed
        }
        set { writeTyped(key, newValue?.attributeValue ?? .null) }
    }

    /// A to-one relationship as its entity type, for the properties of `EntityObject` types. A read the store
    /// cannot answer or a write the object cannot take stops the program, as a Core Data fault that cannot be
    /// fulfilled does; `EntityObject.related(_:)` and `set(_:_:)` throw instead.
    public subscript<Destination: EntityObject>(toOne key: String) -> Destination? {
        get {
            do { return try relatedObject(forKey: key).map(Destination.init(managedObject:)) } catch {
                preconditionFailure("\(self): cannot read \(entity.name).\(key): \(error)")
            }
        }
        set {
            do { try setRelatedObject(newValue?.managedObject, forKey: key) } catch {
                preconditionFailure("\(self): cannot set \(entity.name).\(key): \(error)")
            }
        }
    }

    /// A to-many relationship's members as their entity type (ordered ones in order), for the properties of
    /// `EntityObject` types; setting replaces the members. Failures stop the program as for `[toOne:]`.
    public subscript<Destination: EntityObject>(toMany key: String) -> [Destination] {
        get {
            do { return try relatedObjects(forKey: key).map(Destination.init(managedObject:)) } catch {
                preconditionFailure("\(self): cannot read \(entity.name).\(key): \(error)")
            }
        }
        set {
            do { try setRelatedObjects(newValue.map { $0.managedObject }, forKey: key) } catch {
                preconditionFailure("\(self): cannot set \(entity.name).\(key): \(error)")
            }
        }
    }

    /// A fetched property's objects as their entity type (resolved through the coordinator and cached until
    /// the object is refreshed).
    public func fetched<Destination: EntityObject>(_ name: String, as type: Destination.Type = Destination.self) throws -> [Destination] {
        try fetchedProperty(name).map(Destination.init(managedObject:))
    }

    /// `value(forKey:)`, stopping the program on an error (the typed properties' contract).
    @usableFromInline
    func readTyped(_ key: String) -> AttributeValue {
        do { return try value(forKey: key) } catch {
            preconditionFailure("\(self): \(error)")
        }
    }

    /// `setValue(_:forKey:)`, stopping the program on an error (the typed properties' contract).
    @usableFromInline
    func writeTyped(_ key: String, _ value: AttributeValue) {
        do { try setValue(value, forKey: key) } catch {
            preconditionFailure("\(self): cannot set \(entity.name).\(key): \(error)")
        }
    }
}

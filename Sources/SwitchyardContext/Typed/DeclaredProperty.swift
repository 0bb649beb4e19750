import Foundation
import SwitchyardModel

// MARK: - DeclaredProperty

/// One property an `EntityObject` type declares, so the type can be checked against the model when it is
/// registered: a missing property, another attribute type, another optionality or another destination is an
/// error then, not at first access.
public struct DeclaredProperty: Sendable, Hashable, CustomStringConvertible {
    /// What kind of model property a Swift property stands for, with what registration checks against the model.
    public enum Kind: Sendable, Hashable {
        /// An attribute read as `swiftType` (optional when `isOptional`).
        case attribute(swiftType: String, isOptional: Bool)
        /// A to-one relationship to `destination`.
        case toOne(destination: String)
        /// A to-many relationship to `destination`.
        case toMany(destination: String, isOrdered: Bool)
        /// A fetched property whose objects are `destination`s.
        case fetched(destination: String)
    }

    /// The property's name in the model.
    public let name: String
    /// What the property is: an attribute of a Swift type, a relationship to an entity type, or a fetched property.
    public let kind: Kind

    /// The Swift type of a relationship's or fetched property's objects, when the declaration names it (the
    /// static constructors do): registering this type registers that one too, so its mismatches are found
    /// then rather than when a relationship first hands out one of its objects.
    package let destinationType: (any EntityObject.Type)?

    /// A declared property named `name` of kind `kind`.
    public init(name: String, kind: Kind) {
        self.init(name: name, kind: kind, destinationType: nil)
    }

    private init(name: String, kind: Kind, destinationType: (any EntityObject.Type)?) {
        self.name = name
        self.kind = kind
        self.destinationType = destinationType
    }

    public static func == (lhs: DeclaredProperty, rhs: DeclaredProperty) -> Bool {
        lhs.name == rhs.name && lhs.kind == rhs.kind
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(kind)
    }

    /// An attribute read as `Value` (`String`, `Int64`, `Date`...).
    public static func attribute<Value: AttributeConvertible>(_ name: String, _ type: Value.Type) -> DeclaredProperty {
        DeclaredProperty(name: name, kind: .attribute(swiftType: "\(Value.self)", isOptional: false))
    }

    /// An optional attribute read as `Value?`.
    public static func optionalAttribute<Value: AttributeConvertible>(_ name: String, _ type: Value.Type) -> DeclaredProperty {
        DeclaredProperty(name: name, kind: .attribute(swiftType: "\(Value.self)", isOptional: true))
    }

    /// A to-one relationship to `Destination`.
    public static func toOne<Destination: EntityObject>(_ name: String, _ type: Destination.Type) -> DeclaredProperty {
        DeclaredProperty(name: name, kind: .toOne(destination: Destination.entityName), destinationType: Destination.self)
    }

    /// A to-many relationship to `Destination`.
    public static func toMany<Destination: EntityObject>(_ name: String, _ type: Destination.Type, ordered: Bool = false) -> DeclaredProperty {
        DeclaredProperty(name: name, kind: .toMany(destination: Destination.entityName, isOrdered: ordered), destinationType: Destination.self)
    }

    /// A fetched property whose objects are `Destination`s.
    public static func fetched<Destination: EntityObject>(_ name: String, _ type: Destination.Type) -> DeclaredProperty {
        DeclaredProperty(name: name, kind: .fetched(destination: Destination.entityName), destinationType: Destination.self)
    }

    public var description: String {
        switch kind {
        case let .attribute(type, optional): return "\(name): \(type)\(optional ? "?" : "")"
        case .toOne(let d): return "\(name): \(d)?"
        case let .toMany(d, ordered): return "\(name): [\(d)]\(ordered ? " (ordered)" : "")"
        case .fetched(let d): return "\(name): fetched [\(d)]"
        }
    }

    /// The Swift types that read each attribute type without loss.
    package static func swiftTypes(for type: AttributeType) -> Set<String> {
        switch type {
        case .integer16: return ["Int16", "Int32", "Int64", "Int"]
        case .integer32: return ["Int32", "Int64", "Int"]
        case .integer64: return ["Int64", "Int"]
        case .decimal: return ["Decimal"]
        case .double: return ["Double"]
        case .float: return ["Float", "Double"]
        case .string: return ["String"]
        case .boolean: return ["Bool"]
        case .date: return ["Date"]
        case .binary, .transformable: return ["Data"]
        case .uuid: return ["UUID"]
        case .uri: return ["URL"]
        case .objectID: return ["String"]
        default: return []
        }
    }

    /// Why a `keyPathNames` entry whose key path reads a `valueType` cannot name this property, or nil when it
    /// can: an attribute's key path reads its Swift type (or that type's optional), a to-one's the destination
    /// type's optional, a to-many's an array of it. (A fetched property has no key path to check.)
    package func keyPathMismatch(valueType: Any.Type) -> String? {
        let actual = "\(valueType)"
        let expected: [String]
        switch kind {
        case .attribute(let swiftType, _): expected = [swiftType, "Optional<\(swiftType)>"]
        case .toOne:
            guard let destinationType else { return nil }
            expected = ["Optional<\(destinationType)>", "\(destinationType)"]
        case .toMany:
            guard let destinationType else { return nil }
            expected = ["Array<\(destinationType)>"]
        case .fetched:
            return nil
        }
        return expected.contains(actual) ? nil : "declared as \(self), which a key path to \(actual) cannot stand for"
    }

    /// Why this declaration does not fit `entity` of `model`, or nil when it does.
    package func mismatch(in entity: EntityDescription, model: ObjectModel) -> String? {
        switch kind {
        case let .attribute(swiftType, isOptional):
            guard let attribute = entity.attribute(named: name) else { return "\(entity.name) has no attribute '\(name)'" }
            guard Self.swiftTypes(for: attribute.type).contains(swiftType) else {
                return "\(entity.name).\(name) is \(attribute.type.rawValue), which \(swiftType) cannot hold (use \(Self.swiftTypes(for: attribute.type).sorted().joined(separator: " or ")))"
            }
            if attribute.isOptional, !isOptional, attribute.defaultValue == nil {
                return "\(entity.name).\(name) is optional in the model without a default; declare it as \(swiftType)?"
            }
            return nil
        case .toOne(let destination), .toMany(let destination, _):
            guard let relationship = entity.relationship(named: name) else { return "\(entity.name) has no relationship '\(name)'" }
            let isToMany: Bool
            if case .toMany = kind { isToMany = true } else { isToMany = false }
            if relationship.isToMany != isToMany {
                return "\(entity.name).\(name) is \(relationship.isToMany ? "to-many" : "to-one") in the model"
            }
            if case .toMany(_, let ordered) = kind, ordered != relationship.isOrdered {
                return "\(entity.name).\(name) is \(relationship.isOrdered ? "ordered" : "unordered") in the model"
            }
            guard model.entity(destination, isKindOf: relationship.destinationEntityName) || destination == relationship.destinationEntityName else {
                return "\(entity.name).\(name) leads to \(relationship.destinationEntityName), not \(destination)"
            }
            return nil
        case .fetched(let destination):
            guard let property = entity.fetchedProperty(named: name) else { return "\(entity.name) has no fetched property '\(name)'" }
            guard model.entity(destination, isKindOf: property.destinationEntityName) || destination == property.destinationEntityName else {
                return "fetched property \(entity.name).\(name) returns \(property.destinationEntityName), not \(destination)"
            }
            return nil
        }
    }
}

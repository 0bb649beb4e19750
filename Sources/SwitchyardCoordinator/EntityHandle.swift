import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - EntityHandle

/// One entity's description, shared by reference by every object of that entity in every context of a
/// coordinator, so an object carries one pointer instead of its own copy of the 256-byte `EntityDescription`
/// (and the retains of its arrays and dictionaries). It also keeps what the per-object hot paths read —
/// attribute positions, types and names — as plain arrays, so a get or set hashes the key once and copies no
/// description.
///
/// Immutable after creation, and every stored property is a `Sendable` value (or the immutable, `Sendable`
/// `RowLayout`), so it is `Sendable`.
package final class EntityHandle: Sendable {
    /// The entity, as the coordinator's model resolved it.
    package let description: EntityDescription
    /// The entity's name (also `description.name`), read without touching the description.
    package let name: String
    /// Positions in `description.allAttributes` by attribute name (the very index of `layout.positions`).
    package let attributePositions: NameIndex
    /// Whether the entity is abstract (`description.isAbstract`), read by every insert without copying the
    /// description.
    package let isAbstract: Bool
    /// Each attribute's type, by position.
    package let attributeTypes: [AttributeType]
    /// The attributes by position: what an object's changed values are positioned by.
    package let layout: RowLayout
    /// Positions of the persistent attributes that must have a value at save.
    package let requiredPositions: [Int]
    /// The model's default values (non-null), normalized, by position: what a new object starts with.
    package let defaults: [(position: Int, value: AttributeValue)]
    /// Positions of the transient attributes: the object keeps their values, no store is given them.
    package let transientPositions: [Int]
    /// The persistent to-many relationships with a minimum or maximum count, which a save checks.
    package let countedToMany: [RelationshipDescription]
    /// The persistent to-one relationships (also `description.persistentToOneRelationships`), read by a save's
    /// checks without borrowing the description.
    package let persistentToOnes: [RelationshipDescription]

    /// The position of attribute `name` (`attributePositions[name:]`). Read through this method, whose `self` is
    /// borrowed, the index is not retained around the lookup, as it was when callers read the property (a
    /// retain and a release on every attribute read, callgrind).
    package func position(ofAttribute name: String) -> Int? { attributePositions[name: name] }

    /// Relationship `name` (`description.relationship(named:)`), and fetched property `name`
    /// (`description.fetchedProperty(named:)`). Read through these methods, whose `self` is borrowed, the
    /// description is not copied: reading `ManagedObject.entity` and calling its method copied all 256 bytes and
    /// retained every array and dictionary in them, about 1,700 of the 2,000 instructions a read of a cached
    /// fetched property cost (callgrind), and the same on every to-one and to-many read.
    package func relationship(named name: String) -> RelationshipDescription? { description.relationship(named: name) }

    /// See `relationship(named:)`.
    package func fetchedProperty(named name: String) -> FetchedPropertyDescription? { description.fetchedProperty(named: name) }

    package init(_ description: EntityDescription) {
        self.description = description
        name = description.name
        isAbstract = description.isAbstract
        attributeTypes = description.allAttributes.map(\.type)
        layout = RowLayout(
            names: description.allAttributes.map(\.name), positions: description.attributeIndex,
            types: description.allAttributes.map(\.type))
        attributePositions = layout.positions
        requiredPositions = description.allAttributes.indices.filter {
            let attribute = description.allAttributes[$0]
            return !attribute.isOptional && !attribute.isTransient
        }
        transientPositions = description.allAttributes.indices.filter { description.allAttributes[$0].isTransient }
        countedToMany = description.allRelationships.filter {
            $0.isToMany && !$0.isTransient && ($0.minCount > 0 || $0.maxCount > 0)
        }
        persistentToOnes = description.persistentToOneRelationships
        defaults = description.allAttributes.enumerated().compactMap { position, attribute in
            guard let value = attribute.defaultValue, !value.isNull else { return nil }
            return (position, value.normalizedForObject(attribute.type) ?? value)
        }
    }
}

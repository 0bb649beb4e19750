import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - SplitPlan

/// What a split will do, decided before anything is written: which entity goes to which store with how many
/// rows, which relationships become attributes, and what is left behind.
public struct SplitPlan: Sendable {
    /// One entity to copy.
    public struct EntityCopy: Sendable, Hashable, Codable {
        /// The entity's name in the source model.
        public var sourceEntity: String
        /// Its name in the target model (differs after an `elementID` rename).
        public var targetEntity: String
        /// The target configuration (and so the output) that receives the rows.
        public var configuration: String
        /// Index into `destinations`.
        public var destination: Int
        /// Rows of exactly this entity in the source, counted at planning time.
        public var rowCount: Int
    }

    /// A to-one relationship that now crosses stores, written as an attribute of the source entity.
    public struct Conversion: Sendable, Hashable, Codable {
        /// What the attribute receives.
        public enum Kind: String, Sendable, Hashable, Codable {
            /// The Integer 64 attribute receives the destination object's primary key.
            case primaryKey
            /// The attribute receives the destination object's attribute `key` (`storesplit.key`).
            case key
        }
        /// Target entity and its relationship's old name.
        public var entity: String
        /// The source relationship's name (the attribute's `elementID`).
        public var relationship: String
        /// The target entity the relationship pointed to.
        public var destinationEntity: String
        /// The attribute (target model) that receives the value.
        public var attribute: String
        /// Primary key or key attribute.
        public var kind: Kind
        /// For `.key`: the destination entity's attribute (target model) whose value is copied.
        public var key: String?
        /// The configuration of the relationship's source entity.
        public var fromConfiguration: String
        /// The configuration of the relationship's destination entity.
        public var toConfiguration: String
    }

    /// A to-many relationship inside one output whose links or positions are copied after the rows: a
    /// many-to-many's links (with the positions of an ordered end), or an ordered to-many's positions (its
    /// members arrive with their to-one inverse, in the rows).
    public struct LinkCopy: Sendable, Hashable, Codable {
        /// What is copied.
        public enum Kind: String, Sendable, Hashable, Codable {
            /// A many-to-many: every link, and the positions of each ordered end.
            case manyToMany
            /// An ordered to-many with a to-one inverse: the members' positions.
            case order
            /// A to-many without inverse: every member's owner (Core Data's hidden foreign key), and the
            /// positions of an ordered one.
            case withoutInverse
        }
        /// The target entity declaring the relationship (a many-to-many's end Core Data names the join table after).
        public var entity: String
        /// The relationship's name in the target model.
        public var relationship: String
        /// The target entity declaring the inverse (for a to-many without inverse, its destination).
        public var inverseEntity: String
        /// The inverse's name in the target model (empty for a to-many without inverse).
        public var inverse: String
        /// Links and positions, or positions only.
        public var kind: Kind
        /// Whether `relationship`'s member order is copied.
        public var ordered: Bool
        /// Whether the inverse's member order is copied (a many-to-many ordered from the other side).
        public var inverseOrdered: Bool
        /// The target configuration (and so the output) holding both ends.
        public var configuration: String
        /// Index into `destinations`.
        public var destination: Int
    }

    /// Something in the source that is not copied, and why.
    public struct Skipped: Sendable, Hashable, Codable {
        /// "entity", "table", "trigger" or "index".
        public var kind: String
        /// The entity, table or trigger.
        public var name: String
        /// Rows it holds, where known.
        public var rows: Int?
        /// Why it is not copied.
        public var reason: String
    }

    /// The source store.
    public var source: URL
    /// The source's backend.
    public var sourceType: StoreType
    /// "--source-model", "model cache" or "target model".
    public var sourceModelOrigin: String
    /// The outputs, one per configuration given.
    public var destinations: [SplitDestination]
    /// Copy order: destination by destination, entities in source entity-number order.
    public var entities: [EntityCopy]
    /// Relationships that become attributes.
    public var conversions: [Conversion]
    /// Relationships whose links or positions are copied after the rows, destination by destination.
    public var links: [LinkCopy]
    /// What the source holds that is not copied.
    public var skipped: [Skipped]
    /// Things an operator should know before running the plan.
    public var warnings: [String]

    /// Rows the split copies.
    public var rowCount: Int { entities.reduce(0) { $0 + $1.rowCount } }

    // MARK: Internal mapping

    package let sourceModel: ObjectModel
    package let targetModel: ObjectModel
    /// Per entered `entities` element, how a source row becomes a target row.
    package let mappings: [EntityMapping]
    /// Per `links` element, the relationship's ends in both models.
    package let linkMappings: [LinkMapping]
    /// Source entity name -> target entity name, for the entity of a relationship's target.
    package let entityNames: [String: String]
    /// Source `Z_MAX` by target inheritance root, per destination.
    package var primaryKeyMaxima: [[String: Int64]]
    /// Per destination, the target roots whose source `Z_MAX` lay below the largest copied key: root -> the
    /// source's `Z_MAX` (`primaryKeyMaxima` holds the raised value).
    package var raisedPrimaryKeyMaxima: [[String: Int64]]
    /// App keys of the source metadata, copied into every output.
    package var metadataKeys: [String: PropertyListValue]
}

// MARK: - EntityMapping

/// How one source entity's rows become target rows: attribute by attribute, relationship by relationship.
package struct EntityMapping: Sendable {
    package struct Attribute: Sendable {
        package var target: AttributeDescription
        /// The source attribute's name; nil for an attribute the source lacks (filled with its default).
        package var source: String?
        /// Whether the value needs converting (the types differ).
        package var convert: Bool
    }
    package struct ToOne: Sendable {
        package var target: String
        package var source: String
    }
    package struct Crossing: Sendable {
        package var target: AttributeDescription
        package var sourceRelationship: String
        package var kind: SplitPlan.Conversion.Kind
        /// For `.key`: the attribute of the destination's source row whose value is copied.
        package var sourceKey: String?
    }
    package var sourceEntity: EntityDescription
    package var targetEntity: EntityDescription
    package var attributes: [Attribute]
    package var toOnes: [ToOne]
    package var crossings: [Crossing]
}

// MARK: - LinkMapping

/// The ends of one copied to-many relationship in both models: `target` (the to-many whose members are walked)
/// and its inverse, and the source model's ends they come from.
package struct LinkMapping: Sendable {
    package var target: RelationshipEnd
    package var targetInverse: RelationshipEnd
    package var source: RelationshipEnd
    package var sourceInverse: RelationshipEnd
}

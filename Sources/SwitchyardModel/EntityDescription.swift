import Foundation

// MARK: - EntityDescription

/// An entity: a kind of object with attributes, relationships and fetched properties.
///
/// Build it in code or load it from an `.xcdatamodel`; `ObjectModel` resolves inheritance, numbers and hashes.
/// ```swift
/// let account = EntityDescription(name: "Account", attributes: [
///     AttributeDescription(name: "accountID", type: .string, isOptional: false),
/// ])
/// ```
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name, unique in the model.
    public var name: String
    /// The class name Xcode's `representedClassName` gives; informational on Linux.
    public var className: String?
    /// Name of the parent entity (single-table inheritance), if any.
    public var parentName: String?
    /// An abstract entity has no instances of its own, only of its subentities.
    public var isAbstract: Bool
    /// Attributes declared on this entity (not inherited).
    public var attributes: [AttributeDescription]
    /// Relationships declared on this entity (not inherited).
    public var relationships: [RelationshipDescription]
    /// Fetched properties declared on this entity (not inherited).
    public var fetchedProperties: [FetchedPropertyDescription]
    /// Renaming identifier (`elementID`): the entity's former name.
    public var renamingIdentifier: String?
    /// Changes the entity's version hash without another change (Core Data's `versionHashModifier`).
    public var versionHashModifier: String?
    /// The model file's user info for the entity.
    public var userInfo: [String: String]
    /// Each constraint is a list of property names whose combined values must be unique.
    public var uniquenessConstraints: [[String]]
    /// Fetch indexes declared on this entity.
    public var indexes: [IndexDescription]
    /// Xcode's Codegen setting: what `storeinspect codegen` and the `SwitchyardCodegen` plugin generate for the
    /// entity's Swift type. A model built in code generates every type (`.classDefinition`); a model file says
    /// per entity (no setting in the file is Xcode's Manual/None). Not part of equality: it changes no stored
    /// data, and a compiled model (`.mom`, a store's model cache) does not keep it.
    public var codeGeneration: CodeGeneration {
        get { codeGenerationSetting.value }
        set { codeGenerationSetting.value = newValue }
    }
    private var codeGenerationSetting: OutsideEquality<CodeGeneration>

    // MARK: Resolved by ObjectModel

    /// `Z_ENT`: assigned by `ObjectModel`, the same number in every store of the model.
    public internal(set) var entityNumber: Int = 0
    /// The inheritance root (self for a root entity).
    public internal(set) var rootName: String = ""
    /// Direct subentities, sorted by name.
    public internal(set) var subentityNames: [String] = []
    /// Every descendant (depth-first), not including self.
    public internal(set) var descendantNames: [String] = []
    /// Attributes including inherited ones, parents' first.
    public internal(set) var allAttributes: [AttributeDescription] = []
    /// Relationships including inherited ones, parents' first.
    public internal(set) var allRelationships: [RelationshipDescription] = []
    /// Fetched properties including inherited ones.
    public internal(set) var allFetchedProperties: [FetchedPropertyDescription] = []
    /// Uniqueness constraints including inherited ones.
    public internal(set) var allUniquenessConstraints: [[String]] = []
    /// SHA-256 version hash (see DESIGN.md); 32 bytes.
    public internal(set) var versionHash: Data = Data()

    /// Creates an entity description; inheritance, numbers and hashes are filled in by `ObjectModel`.
    public init(
        name: String, className: String? = nil, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        fetchedProperties: [FetchedPropertyDescription] = [], renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil, userInfo: [String: String] = [:],
        uniquenessConstraints: [[String]] = [], indexes: [IndexDescription] = [],
        codeGeneration: CodeGeneration = .classDefinition
    ) {
        self.name = name
        self.className = className
        self.parentName = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.fetchedProperties = fetchedProperties
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.codeGenerationSetting = OutsideEquality(value: codeGeneration)
    }

    // MARK: Lookup

    /// Positions in `allAttributes` / `allRelationships` by name, filled by `ObjectModel`, so lookups on
    /// the per-object hot path (every get/set) are hashed, not linear.
    package var attributeIndex: [String: Int] = [:]
    package var relationshipIndex: [String: Int] = [:]

    /// The attribute (own or inherited) with this name.
    public func attribute(named name: String) -> AttributeDescription? {
        attributeIndex[name].map { allAttributes[$0] }
    }

    /// The relationship (own or inherited) with this name.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationshipIndex[name].map { allRelationships[$0] }
    }

    /// The fetched property (own or inherited) with this name.
    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        allFetchedProperties.first { $0.name == name }
    }

    /// Persistent (non-transient) attributes, own and inherited: the ones a store holds.
    public internal(set) var persistentAttributes: [AttributeDescription] = []

    /// Persistent to-one relationships: the ones stored as a foreign key in this entity's row.
    public internal(set) var persistentToOneRelationships: [RelationshipDescription] = []

    /// True when this is the root of its inheritance tree.
    public var isRoot: Bool { parentName == nil }

    /// This entity and all its descendants.
    public var selfAndDescendantNames: [String] { [name] + descendantNames }
}

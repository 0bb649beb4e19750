import Foundation

// MARK: - ObjectModel

/// A resolved, validated object model: entities numbered as Core Data numbers them, inheritance flattened,
/// version hashes computed, configurations checked.
///
/// ```swift
/// let model = try ObjectModel(entities: [account, chat], configurations: [
///     ConfigurationDescription(name: "Cloud", entityNames: ["Account", "Chat"]),
/// ])
/// let cloud = try model.entities(inConfiguration: "Cloud")
/// ```
public struct ObjectModel: Sendable, Hashable {
    /// Every entity, in entity-number order (`entities[i].entityNumber == i + 1`).
    public let entities: [EntityDescription]
    /// The named configurations, in declaration order (the implicit `Default` is not listed).
    public let configurations: [ConfigurationDescription]
    /// Version identifiers (Xcode's `userDefinedModelVersionIdentifier`), written to store metadata.
    public let versionIdentifiers: [String]
    /// Where each entity was declared (file path, or "model built in code"), for error messages.
    public let entitySources: [String: String]

    /// Entity positions by name, found by their bytes (`NameIndex`): every fetch, count and insert looks its
    /// entity up here several times, and SipHash of the name was most of each lookup (callgrind).
    private let indexByName: NameIndex
    /// Each entity's attribute positions (`attributeIndex`), by their bytes: a fetch's key paths are checked
    /// against them, and SipHash of the name was about 300 instructions of an indexed lookup (callgrind).
    private let attributeIndexes: [NameIndex]
    /// Shared by every copy of this model and by no other model, equal or not: a store given a fetch its
    /// coordinator already checked against this very model (`validateFetch`) need not check it again. Compared
    /// with `===`; whoever holds it keeps it alive, so no later model can take its address.
    package let identity = Identity()

    /// See `identity`.
    package final class Identity: Sendable {}

    /// Validates and resolves `entities`. `source` names the file in errors.
    public init(
        entities: [EntityDescription], configurations: [ConfigurationDescription] = [],
        versionIdentifiers: [String] = [], source: String = "model built in code"
    ) throws {
        try self.init(
            entities: entities, configurations: configurations, versionIdentifiers: versionIdentifiers,
            entitySources: Dictionary(entities.map { ($0.name, source) }, uniquingKeysWith: { a, _ in a }),
            source: source)
    }

    package init(
        entities: [EntityDescription], configurations: [ConfigurationDescription], versionIdentifiers: [String],
        entitySources: [String: String], source: String
    ) throws {
        let resolved = try ObjectModel.resolve(entities, sources: entitySources, fallbackSource: source)
        self.entities = resolved
        self.configurations = configurations
        self.versionIdentifiers = versionIdentifiers
        self.entitySources = entitySources
        self.indexByName = NameIndex(Dictionary(uniqueKeysWithValues: resolved.enumerated().map { ($1.name, $0) }))
        self.attributeIndexes = resolved.map { NameIndex($0.attributeIndex) }
        try validateConfigurations(source: source)
    }

    // MARK: - Lookup

    /// The entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        indexByName[name: name].map { entities[$0] }
    }

    /// The position in `entities` of the entity with this name: reading `entities[i]` in place copies no
    /// 256-byte description, which `entity(named:)` does (a fetch checks its key paths twice).
    package func entityPosition(named name: String) -> Int? {
        indexByName[name: name]
    }

    /// The position in `entities[entity].allAttributes` of the attribute `name`, as `attributeIndex[name]`.
    package func attributePosition(_ name: String, inEntityAt entity: Int) -> Int? {
        attributeIndexes[entity][name: name]
    }

    /// The entity with this `Z_ENT` number.
    public func entity(number: Int) -> EntityDescription? {
        number >= 1 && number <= entities.count ? entities[number - 1] : nil
    }

    /// Names of every configuration, `Default` first.
    public var configurationNames: [String] {
        [ConfigurationDescription.defaultName] + configurations.map(\.name).filter { $0 != ConfigurationDescription.defaultName }
    }

    /// The entities a store of `configuration` holds, in entity-number order; `Default` holds every entity.
    public func entities(inConfiguration configuration: String) throws -> [EntityDescription] {
        if let config = configurations.first(where: { $0.name == configuration }) {
            let members = Set(config.entityNames)
            return entities.filter { members.contains($0.name) }
        }
        if configuration == ConfigurationDescription.defaultName { return entities }
        throw ModelError.unknownConfiguration(name: configuration, available: configurationNames)
    }

    /// Named configurations (not `Default`) that list `entity`.
    public func configurations(containing entity: String) -> [String] {
        configurations.filter { $0.entityNames.contains(entity) }.map(\.name)
    }

    /// The ancestors of `entity`, nearest first.
    public func ancestors(of entity: EntityDescription) -> [EntityDescription] {
        var result: [EntityDescription] = []
        var current = entity.parentName.flatMap { self.entity(named: $0) }
        while let e = current {
            result.append(e)
            current = e.parentName.flatMap { self.entity(named: $0) }
        }
        return result
    }

    /// True when `entity` is `ancestor` or descends from it.
    public func entity(_ entity: String, isKindOf ancestor: String) -> Bool {
        if entity == ancestor { return true }
        guard let e = self.entity(named: entity) else { return false }
        return ancestors(of: e).contains { $0.name == ancestor }
    }

    /// Version hash per entity name, as written to `NSStoreModelVersionHashes`.
    public var versionHashes: [String: Data] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.versionHash) })
    }

    // MARK: - Equatable

    public static func == (lhs: ObjectModel, rhs: ObjectModel) -> Bool {
        lhs.entities == rhs.entities && lhs.configurations == rhs.configurations
            && lhs.versionIdentifiers == rhs.versionIdentifiers
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entities)
        hasher.combine(configurations)
    }
}

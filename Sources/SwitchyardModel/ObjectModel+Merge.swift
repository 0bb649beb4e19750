// MARK: - Merge

extension ObjectModel {
    /// Merges several models into one. A duplicate entity is an error naming both sources; configurations
    /// with the same name are united.
    ///
    /// ```swift
    /// let merged = try ObjectModel.merged([try ModelLoader.load(at: a), try ModelLoader.load(at: b)])
    /// ```
    public static func merged(_ models: [ObjectModel]) throws -> ObjectModel {
        var entities: [EntityDescription] = []
        var sources: [String: String] = [:]
        var configurations: [ConfigurationDescription] = []
        var identifiers: [String] = []
        for model in models {
            for entity in model.entities {
                let source = model.entitySources[entity.name] ?? "model built in code"
                if let first = sources[entity.name] {
                    throw ModelError.duplicateEntity(name: entity.name, firstSource: first, secondSource: source)
                }
                sources[entity.name] = source
                entities.append(entity.unresolved)
            }
            for configuration in model.configurations {
                if let i = configurations.firstIndex(where: { $0.name == configuration.name }) {
                    configurations[i].entityNames += configuration.entityNames.filter {
                        !configurations[i].entityNames.contains($0)
                    }
                } else {
                    configurations.append(configuration)
                }
            }
            identifiers += model.versionIdentifiers.filter { !identifiers.contains($0) }
        }
        return try ObjectModel(
            entities: entities, configurations: configurations, versionIdentifiers: identifiers,
            entitySources: sources, source: Set(sources.values).sorted().joined(separator: " + "))
    }
}

extension EntityDescription {
    /// The declaration alone, without what a model resolved, so it can be resolved again in another model.
    public var unresolved: EntityDescription {
        EntityDescription(
            name: name, className: className, parent: parentName, isAbstract: isAbstract, attributes: attributes,
            relationships: relationships, fetchedProperties: fetchedProperties,
            renamingIdentifier: renamingIdentifier, versionHashModifier: versionHashModifier, userInfo: userInfo,
            uniquenessConstraints: uniquenessConstraints, indexes: indexes)
    }
}

import Foundation

// MARK: - Resolution

extension ObjectModel {
    /// Orders entities as Core Data numbers them (roots by name, each followed by its descendants depth-first,
    /// siblings by name), flattens inheritance and computes version hashes.
    package static func resolve(
        _ input: [EntityDescription], sources: [String: String], fallbackSource: String
    ) throws -> [EntityDescription] {
        func source(_ entity: String) -> String { sources[entity] ?? fallbackSource }
        var byName: [String: EntityDescription] = [:]
        for entity in input {
            if byName[entity.name] != nil {
                throw ModelError.duplicateEntity(
                    name: entity.name, firstSource: source(entity.name), secondSource: source(entity.name))
            }
            byName[entity.name] = entity
        }
        var children: [String: [String]] = [:]
        for entity in input {
            guard let parent = entity.parentName else { continue }
            guard byName[parent] != nil else {
                throw ModelError.missingParentEntity(file: source(entity.name), entity: entity.name, parent: parent)
            }
            children[parent, default: []].append(entity.name)
        }
        // Cycle check: every entity must reach a root within `count` steps.
        for entity in input {
            var steps = 0
            var current = entity.parentName
            while let p = current {
                steps += 1
                if steps > input.count { throw ModelError.inheritanceCycle(file: source(entity.name), entity: entity.name) }
                current = byName[p]?.parentName
            }
        }

        var ordered: [EntityDescription] = []
        func visit(_ name: String, root: String, inherited: EntityDescription?) throws {
            var entity = byName[name]!
            entity.rootName = root
            entity.subentityNames = (children[name] ?? []).sorted()
            entity.allAttributes = (inherited?.allAttributes ?? []) + entity.attributes
            entity.allRelationships = (inherited?.allRelationships ?? []) + entity.relationships
            entity.allFetchedProperties = (inherited?.allFetchedProperties ?? []) + entity.fetchedProperties
            entity.allUniquenessConstraints = (inherited?.allUniquenessConstraints ?? []) + entity.uniquenessConstraints
            entity.persistentAttributes = entity.allAttributes.filter { !$0.isTransient }
            entity.persistentToOneRelationships = entity.allRelationships.filter { !$0.isTransient && !$0.isToMany }
            entity.attributeIndex = Dictionary(entity.allAttributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
            entity.relationshipIndex = Dictionary(entity.allRelationships.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
            var seen = Set<String>()
            let names = entity.allAttributes.map(\.name) + entity.allRelationships.map(\.name)
                + entity.allFetchedProperties.map(\.name)
            for property in names where !seen.insert(property).inserted {
                throw ModelError.duplicateProperty(file: source(name), entity: name, property: property)
            }
            entity.entityNumber = ordered.count + 1
            let index = ordered.count
            ordered.append(entity)
            for child in entity.subentityNames { try visit(child, root: root, inherited: entity) }
            ordered[index].descendantNames = Array(ordered[(index + 1)...].map(\.name))
        }
        for root in input.filter({ $0.parentName == nil }).map(\.name).sorted() {
            try visit(root, root: root, inherited: nil)
        }

        let resolvedByName = Dictionary(uniqueKeysWithValues: ordered.map { ($0.name, $0) })
        for entity in ordered { try validateProperties(of: entity, in: resolvedByName, file: source(entity.name)) }
        return computeVersionHashes(ordered)
    }

    private static func validateProperties(
        of entity: EntityDescription, in byName: [String: EntityDescription], file: String
    ) throws {
        // Core Data's model compiler rejects this too: a store column needs a type.
        for attribute in entity.attributes where attribute.type == .undefined && !attribute.isTransient {
            throw ModelError.undefinedAttributeType(file: file, entity: entity.name, attribute: attribute.name)
        }
        for relationship in entity.relationships {
            guard let destination = byName[relationship.destinationEntityName] else {
                throw ModelError.missingDestinationEntity(
                    file: file, entity: entity.name, relationship: relationship.name,
                    destination: relationship.destinationEntityName)
            }
            if let inverse = relationship.inverseName, destination.relationship(named: inverse) == nil {
                throw ModelError.missingInverse(
                    file: file, entity: entity.name, relationship: relationship.name, inverse: inverse,
                    destination: destination.name)
            }
        }
        for fetched in entity.fetchedProperties where byName[fetched.destinationEntityName] == nil {
            throw ModelError.missingDestinationEntity(
                file: file, entity: entity.name, relationship: fetched.name, destination: fetched.destinationEntityName)
        }
        let propertyNames = Set(entity.allAttributes.map(\.name) + entity.allRelationships.map(\.name))
        for index in entity.indexes {
            for element in index.elements where !propertyNames.contains(element.property) {
                throw ModelError.unknownIndexProperty(
                    file: file, entity: entity.name, index: index.name, property: element.property)
            }
        }
        for constraint in entity.uniquenessConstraints {
            for property in constraint where !propertyNames.contains(property) {
                throw ModelError.unknownIndexProperty(
                    file: file, entity: entity.name, index: "uniqueness constraint", property: property)
            }
        }
    }

    // MARK: - Configurations

    /// Checks that configurations name real entities and that no relationship joins two entities that are
    /// never in the same named configuration.
    package func validateConfigurations(source: String) throws {
        for configuration in configurations {
            for name in configuration.entityNames where entity(named: name) == nil {
                throw ModelError.unknownConfigurationEntity(
                    file: source, configuration: configuration.name, entity: name)
            }
        }
        for entity in entities {
            for relationship in entity.relationships where !relationship.isTransient {
                let mine = storeConfigurations(of: entity.name)
                let theirs = storeConfigurations(of: relationship.destinationEntityName)
                // An entity in no named configuration lives only in Default, which holds everything.
                guard !mine.isEmpty, !theirs.isEmpty, mine.isDisjoint(with: theirs) else { continue }
                throw ModelError.crossConfigurationRelationship(
                    file: entitySources[entity.name] ?? source, entity: entity.name, relationship: relationship.name,
                    entityConfigurations: mine.sorted(), destination: relationship.destinationEntityName,
                    destinationConfigurations: theirs.sorted())
            }
        }
    }

    /// Named configurations whose stores hold rows of `entity`: those listing it or one of its ancestors or
    /// descendants (single-table inheritance keeps a tree in one table).
    package func storeConfigurations(of entityName: String) -> Set<String> {
        guard let entity = entity(named: entityName), let root = self.entity(named: entity.rootName) else { return [] }
        let family = Set(root.selfAndDescendantNames)
        return Set(configurations.filter { !family.isDisjoint(with: $0.entityNames) }.map(\.name))
    }
}

import Foundation
import SwitchyardModel

// MARK: - ArchivedModelReader

/// Rebuilds an `ObjectModel` from Core Data's keyed archive of an NSManagedObjectModel (the model cache).
///
/// What the archive holds, checked against real stores and their `.xcdatamodel` files:
/// - the model: `NSEntities` (an `NSKnownKeysDictionary1` name -> NSEntityDescription), `NSConfigurations`
///   (name -> NSSet of entities), `NSVersionIdentifiers` (NSSet), `NSFetchRequestTemplates` (ignored: the model
///   here has no fetch request templates);
/// - each entity: `NSEntityName`, `NSSuperentity`, `NSSubentities`, `NSIsAbstract`, `NSClassNameForEntity`,
///   `NSRenamingIdentifier` (Core Data writes the name itself when none was set), `NSVersionHashModifier`,
///   `NSUserInfo`, `NSUniqueTuples`, `NSFetchIndexDescriptions` / `NSCompoundIndexes`, and `NSProperties`, which
///   for a subentity repeats every inherited property: a property is the entity's own when its parent has no
///   property of that name.
///
/// Property details are in `ArchivedModelReader+Properties.swift`, predicates in `ArchivedPredicateReader`.
package struct ArchivedModelReader {
    package let archive: KeyedArchive
    /// What errors and `ObjectModel.entitySources` name.
    package let source: String

    package init(archive: KeyedArchive, source: String) {
        self.archive = archive
        self.source = source
    }

    /// An entity's archived object with the names that other entities and properties resolve against.
    package struct ArchivedEntity {
        package let object: ArchivedObject
        package let name: String
        /// Names in `NSProperties` (own and inherited).
        package let propertyNames: Set<String>
    }

    // MARK: - Model

    /// The model the archive describes; throws `ModelCacheError`, `KeyedArchiveError` or, from resolution,
    /// `ModelError`.
    package func model() throws -> ObjectModel {
        let top = try archive.topValue()
        guard case .object(let rootUID, let rootClass) = top else {
            throw invalid("the archive's root is \(Self.kind(of: top)), not an NSManagedObjectModel")
        }
        let root = try archive.object(rootUID)
        guard root.isKind(of: "NSManagedObjectModel") else {
            throw invalid("the archive's root is a \(rootClass), not an NSManagedObjectModel")
        }
        guard let entries = root["NSEntities"]?.entries else {
            throw invalid("the NSManagedObjectModel has no NSEntities dictionary")
        }
        var entitiesByUID: [Int: ArchivedEntity] = [:]
        var order: [Int] = []
        for entry in entries {
            guard case .object(let uid, _) = entry.value else {
                throw invalid("NSEntities entry \(entry.key) is not an entity description")
            }
            let entity = try archivedEntity(uid)
            if entitiesByUID[uid] == nil { order.append(uid) }
            entitiesByUID[uid] = entity
        }
        var entities: [EntityDescription] = []
        for uid in order {
            guard let archived = entitiesByUID[uid] else { continue }
            entities.append(try entity(archived, entities: entitiesByUID))
        }
        return try ObjectModel(
            entities: entities, configurations: try configurations(root, entities: entitiesByUID),
            versionIdentifiers: versionIdentifiers(root), source: source)
    }

    /// Configuration name -> member entities, both sorted by name (the archive keeps them in hash order).
    private func configurations(_ root: ArchivedObject, entities: [Int: ArchivedEntity]) throws -> [ConfigurationDescription] {
        guard let entries = root["NSConfigurations"]?.entries else { return [] }
        var result: [ConfigurationDescription] = []
        for entry in entries {
            guard let name = entry.key.stringValue else { throw invalid("NSConfigurations has a key that is not a name") }
            var members: [String] = []
            for member in entry.value.elements ?? [] {
                switch member {
                case .object(let uid, _): members.append(try entityName(uid, entities: entities))
                case .string(let entityName): members.append(entityName)
                default: throw invalid("configuration \(name) lists \(member), which is not an entity")
                }
            }
            result.append(ConfigurationDescription(name: name, entityNames: Array(Set(members)).sorted()))
        }
        return result.sorted { $0.name < $1.name }
    }

    /// `NSVersionIdentifiers`, sorted; empty identifiers are dropped, as the XML loader drops an empty
    /// `userDefinedModelVersionIdentifier`.
    private func versionIdentifiers(_ root: ArchivedObject) -> [String] {
        let values = root["NSVersionIdentifiers"]?.elements ?? []
        return values.compactMap { value -> String? in
            switch value {
            case .string(let s): return s
            case .integer(let i): return String(i)
            case .real(let d): return String(d)
            default: return nil
            }
        }.filter { !$0.isEmpty }.sorted()
    }

    // MARK: - Entities

    private func archivedEntity(_ uid: Int) throws -> ArchivedEntity {
        let object = try archive.object(uid)
        guard object.isKind(of: "NSEntityDescription") else {
            throw invalid("UID \(uid) in NSEntities is a \(object.className), not an NSEntityDescription")
        }
        guard let name = object["NSEntityName"]?.stringValue, !name.isEmpty else {
            throw invalid("the entity description with UID \(uid) has no NSEntityName")
        }
        let names = (object["NSProperties"]?.entries ?? []).compactMap(\.key.stringValue)
        return ArchivedEntity(object: object, name: name, propertyNames: Set(names))
    }

    /// The name of the entity with this UID, whether or not `NSEntities` lists it.
    package func entityName(_ uid: Int, entities: [Int: ArchivedEntity]) throws -> String {
        if let entity = entities[uid] { return entity.name }
        return try archivedEntity(uid).name
    }

    private func entity(_ archived: ArchivedEntity, entities: [Int: ArchivedEntity]) throws -> EntityDescription {
        let object = archived.object
        let name = archived.name
        var parent: ArchivedEntity?
        if case .object(let parentUID, _) = object["NSSuperentity"] ?? .null {
            parent = try entities[parentUID] ?? archivedEntity(parentUID)
        }
        var entity = EntityDescription(
            name: name, className: object["NSClassNameForEntity"]?.stringValue, parent: parent?.name,
            isAbstract: object["NSIsAbstract"]?.boolValue ?? false,
            renamingIdentifier: renamingIdentifier(object, name: name),
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.stringValue),
            userInfo: userInfo(object["NSUserInfo"]))
        for entry in object["NSProperties"]?.entries ?? [] {
            guard let propertyName = entry.key.stringValue, case .object(let uid, _) = entry.value else {
                throw invalid("entity \(name) has an NSProperties entry that is not a named property")
            }
            // A subentity's NSProperties repeats what it inherits; the model here declares it once, on the parent.
            if parent?.propertyNames.contains(propertyName) == true { continue }
            try addProperty(uid, named: propertyName, to: &entity, entities: entities)
        }
        // Keep the XML loader's (and Xcode's) property order, which is by name: the archive's is hash order.
        entity.attributes.sort { $0.name < $1.name }
        entity.relationships.sort { $0.name < $1.name }
        entity.fetchedProperties.sort { $0.name < $1.name }
        let inheritedConstraints = parent.map { uniquenessConstraints($0.object) } ?? []
        entity.uniquenessConstraints = uniquenessConstraints(object).filter { !inheritedConstraints.contains($0) }
        entity.indexes = try indexes(object, entity: name)
        return entity
    }

    /// `NSUniqueTuples`: lists of property names (or of property descriptions, read by their name).
    private func uniquenessConstraints(_ object: ArchivedObject) -> [[String]] {
        (object["NSUniqueTuples"]?.elements ?? []).compactMap { tuple -> [String]? in
            let names = (tuple.elements ?? []).compactMap { propertyName($0) }
            return names.isEmpty ? nil : names
        }
    }

    /// Fetch indexes; pre-2017 archives have only `NSCompoundIndexes` (lists of names), which newer ones also
    /// write alongside `NSFetchIndexDescriptions`, so they are read only when there are no descriptions.
    private func indexes(_ object: ArchivedObject, entity: String) throws -> [IndexDescription] {
        var result: [IndexDescription] = []
        for value in object["NSFetchIndexDescriptions"]?.elements ?? [] {
            guard case .object(let uid, _) = value else { continue }
            let index = try archive.object(uid)
            guard let name = index["NSIndexName"]?.stringValue else {
                throw invalid("entity \(entity) has a fetch index without NSIndexName")
            }
            var elements: [IndexDescription.Element] = []
            for elementValue in index["NSIndexElements"]?.elements ?? [] {
                guard case .object(let elementUID, _) = elementValue else { continue }
                let element = try archive.object(elementUID)
                // Expression-based elements name no property and have no equivalent here, as in the XML loader.
                guard let property = element["NSPropertyName"].flatMap({ propertyName($0) }) else { continue }
                elements.append(.init(property: property, ascending: element["NSAscending"]?.boolValue ?? true))
            }
            if !elements.isEmpty { result.append(IndexDescription(name: name, elements: elements)) }
        }
        if !result.isEmpty { return result }
        for (number, list) in (object["NSCompoundIndexes"]?.elements ?? []).enumerated() {
            let names = (list.elements ?? []).compactMap { propertyName($0) }
            // Numbered as the XML loader numbers unnamed compound indexes, so both readings agree.
            if !names.isEmpty { result.append(IndexDescription(name: "compound_\(number + 1)", properties: names)) }
        }
        return result
    }

    // MARK: - Shared helpers

    /// "an array", "a string", ... for messages about a value that should have been an object.
    package static func kind(of value: ArchiveValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool: return "a boolean"
        case .integer, .real: return "a number"
        case .string: return "a string"
        case .data: return "data"
        case .date: return "a date"
        case .uuid: return "a UUID"
        case .array: return "an array"
        case .set: return "a set"
        case .dictionary: return "a dictionary"
        case .object(_, let className): return "a \(className)"
        }
    }

    package func invalid(_ reason: String) -> ModelCacheError {
        .invalidModel(source: source, reason: reason)
    }

    /// A property's name from a name string or a property description object.
    package func propertyName(_ value: ArchiveValue) -> String? {
        switch value {
        case .string(let s): return s
        case .object(let uid, _): return (try? archive.object(uid))?["NSPropertyName"]?.stringValue
        default: return nil
        }
    }

    /// `NSRenamingIdentifier`, except when it is just the name (Core Data's default, which the XML leaves out).
    package func renamingIdentifier(_ object: ArchivedObject, name: String) -> String? {
        guard let identifier = nonEmpty(object["NSRenamingIdentifier"]?.stringValue), identifier != name else { return nil }
        return identifier
    }

    /// A userInfo dictionary as strings (Xcode only writes strings; other values are spelled out).
    package func userInfo(_ value: ArchiveValue?) -> [String: String] {
        var result: [String: String] = [:]
        for entry in value?.entries ?? [] {
            guard let key = entry.key.stringValue else { continue }
            switch entry.value {
            case .string(let s): result[key] = s
            case .integer(let i): result[key] = String(i)
            case .real(let d): result[key] = String(d)
            case .bool(let b): result[key] = b ? "YES" : "NO"
            case .uuid(let u): result[key] = u.uuidString
            case .date(let d): result[key] = String(d.timeIntervalSinceReferenceDate)
            default: continue  // nested collections and objects have no string form in a model file
            }
        }
        return result
    }

    package func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}

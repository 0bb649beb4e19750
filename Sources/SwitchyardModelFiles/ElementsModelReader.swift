import Foundation
import SwitchyardModel

// MARK: - ElementsModelReader

/// Reads a model in the pre-Xcode-4 format: an `.xcdatamodel` directory holding `elements` (and `layout`, the
/// diagram, ignored) instead of `contents`. `elements` is a keyed archive read with `KeyedArchive`, like the
/// model cache, but of Xcode's design-time classes rather than Core Data's:
///
/// - the root `XDPMModel`: `_xd_rootPackage` (an `XDModelPackage` whose `XDBucketForClassesstorage` maps entity
///   name -> `XDPMEntity`), `_configurationsByName` (name -> entities), `_modelVersionIdentifier`;
/// - an `XDPMEntity`: `_name`, `_isAbstract`, `XDBucketForGeneralizationsstorage` (generalizations whose
///   `_general` is the parent entity), `XDBucketForOwnedAttributesstorage` (property name -> `XDPMAttribute` or
///   `XDPMRelationship`);
/// - every element's details live in "stereotypes" (`XDBucketForStereotypesstorage`: `XDUMLStereotypeImp`s whose
///   `XDBucketForOwnedAttributesstorage` maps a key to an `XDUMLPropertyImp` holding the value in `_default`):
///   `XD_PSK_…` for entities (class name, user info, renaming identifier, version hash modifier),
///   `XD_PPSK_…` for every property (optional, transient, indexed, user info, …), `XD_PAttK_…` for attributes
///   (`attributeType`, an `NSAttributeType` number; `defaultValueAsString`; `valueTransformerName`;
///   `allowsExternalBinaryDataStorage`) and `XD_PRK_…` for relationships (destination, inverse, to-many,
///   ordered, min/max count, delete rule).
///
/// Checked against RestKit's `RKTwitterCoreData.xcdatamodel`. Anything else (a fetched property, an unknown
/// class) is an error that names the file, the entity and the element.
package struct ElementsModelReader {
    package let archive: KeyedArchive
    /// The `elements` file's path, for errors and `ObjectModel.entitySources`.
    package let source: String

    /// Reads `elements` at `url`.
    package static func load(at url: URL) throws -> ObjectModel {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelError.unreadableFile(path: url.path, reason: error.localizedDescription)
        }
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data, source: url.path)
        } catch {
            throw ModelError.unreadableFile(path: url.path, reason: "not a keyed archive of a pre-Xcode-4 model: \(error)")
        }
        return try ElementsModelReader(archive: archive, source: url.path).model()
    }

    package func model() throws -> ObjectModel {
        let top = try archive.topValue()
        guard case .object = top else { throw invalid("the archive's root is \(Self.kind(of: top)), not an XDPMModel") }
        let root = try object(top, what: "the archive's root")
        guard root.isKind(of: "XDPMModel") else { throw invalid("the archive's root is a \(root.className), not an XDPMModel") }
        let package = try object(root["_xd_rootPackage"], what: "the model's root package (_xd_rootPackage)")
        guard let classes = package["XDBucketForClassesstorage"]?.entries else {
            throw invalid("the root package has no entities (XDBucketForClassesstorage)")
        }
        var entities: [EntityDescription] = []
        for entry in classes {
            let element = try object(entry.value, what: "entity \(entry.key.stringValue ?? "?")")
            guard element.isKind(of: "XDPMEntity") else {
                throw invalid("element \(entry.key.stringValue ?? "?") is a \(element.className), not an XDPMEntity")
            }
            entities.append(try entity(element))
        }
        entities.sort { $0.name < $1.name }
        var configurations: [ConfigurationDescription] = []
        for entry in root["_configurationsByName"]?.entries ?? [] {
            guard let name = entry.key.stringValue else { throw invalid("a configuration has no name") }
            let members = try (entry.value.elements ?? []).map { member -> String in
                if let name = member.stringValue { return name }
                return try self.name(of: try object(member, what: "a member of configuration \(name)"))
            }
            configurations.append(ConfigurationDescription(name: name, entityNames: Array(Set(members)).sorted()))
        }
        let identifier = root["_modelVersionIdentifier"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return try ObjectModel(
            entities: entities, configurations: configurations.sorted { $0.name < $1.name },
            versionIdentifiers: identifier.map { [$0] } ?? [], source: source)
    }

    // MARK: - Entities

    private func entity(_ element: ArchivedObject) throws -> EntityDescription {
        let name = try self.name(of: element)
        let details = try stereotypeValues(element)
        var parent: String?
        for generalization in element["XDBucketForGeneralizationsstorage"]?.elements ?? [] {
            let record = try object(generalization, what: "a generalization of entity \(name)")
            let general = try object(record["_general"], what: "the parent (_general) of entity \(name)")
            parent = try self.name(of: general)
        }
        var entity = EntityDescription(
            name: name, className: nonEmpty(details["XD_PSK_entityClassName"]), parent: parent,
            isAbstract: element["_isAbstract"]?.boolValue ?? details["XD_PSK_isAbstract"]?.boolValue ?? false,
            renamingIdentifier: nonEmpty(details["XD_PSK_elementID"]),
            versionHashModifier: nonEmpty(details["XD_PSK_versionHashModifier"]),
            userInfo: userInfo(details["XD_PSK_userInfo"]),
            codeGeneration: .manual)                // before Xcode 8's Codegen setting: Manual/None
        for entry in element["XDBucketForOwnedAttributesstorage"]?.entries ?? [] {
            let property = try object(entry.value, what: "property \(entry.key.stringValue ?? "?") of entity \(name)")
            if property.isKind(of: "XDPMAttribute") {
                entity.attributes.append(try attribute(property, entity: name))
            } else if property.isKind(of: "XDPMRelationship") {
                entity.relationships.append(try relationship(property, entity: name))
            } else {
                throw invalid(
                    "property \(entry.key.stringValue ?? "?") of entity \(name) is a \(property.className); this reader "
                        + "knows attributes (XDPMAttribute) and relationships (XDPMRelationship) only")
            }
        }
        entity.attributes.sort { $0.name < $1.name }
        entity.relationships.sort { $0.name < $1.name }
        return entity
    }

    // MARK: - Properties

    private func attribute(_ element: ArchivedObject, entity: String) throws -> AttributeDescription {
        let name = try self.name(of: element)
        let details = try stereotypeValues(element)
        guard let code = details["XD_PAttK_attributeType"]?.integerValue,
            let type = ArchivedModelReader.attributeTypes[code]
        else {
            throw invalid("attribute \(entity).\(name) has no known XD_PAttK_attributeType (\(details["XD_PAttK_attributeType"].map { "\($0)" } ?? "none"))")
        }
        var attribute = AttributeDescription(
            name: name, type: type, isOptional: details["XD_PPSK_isOptional"]?.boolValue ?? true,
            isTransient: details["XD_PPSK_isTransient"]?.boolValue ?? false,
            renamingIdentifier: nonEmpty(details["XD_PPSK_elementID"]),
            versionHashModifier: nonEmpty(details["XD_PPSK_versionHashModifier"]),
            userInfo: userInfo(details["XD_PPSK_userInfo"]), isIndexed: details["XD_PPSK_isIndexed"]?.boolValue ?? false,
            allowsExternalBinaryDataStorage: details["XD_PAttK_allowsExternalBinaryDataStorage"]?.boolValue ?? false,
            valueTransformerName: nonEmpty(details["XD_PAttK_valueTransformerName"]))
        if let text = details["XD_PAttK_defaultValueAsString"]?.stringValue, !text.isEmpty || type == .string {
            guard let value = AttributeValue(xcodeDefault: text, type: type) else {
                throw ModelError.invalidDefaultValue(file: source, entity: entity, attribute: name, value: text, type: type)
            }
            attribute.defaultValue = value
        }
        return attribute
    }

    private func relationship(_ element: ArchivedObject, entity: String) throws -> RelationshipDescription {
        let name = try self.name(of: element)
        let details = try stereotypeValues(element)
        let destination = try self.name(of: try object(details["XD_PRK_destination"], what: "the destination of \(entity).\(name)"))
        var inverse: String?
        if let value = details["XD_PRK_inverseRelationship"], !value.isNull {
            inverse = try self.name(of: try object(value, what: "the inverse of \(entity).\(name)"))
        }
        let toMany = details["XD_PRK_isToMany"]?.boolValue ?? false
        let ruleCode = details["XD_PRK_deleteRule"]?.integerValue ?? 1
        guard let rule = ArchivedModelReader.deleteRules[ruleCode] else {
            throw invalid("relationship \(entity).\(name) has delete rule \(ruleCode), which is not an NSDeleteRule")
        }
        return RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: toMany,
            isOrdered: details["XD_PRK_ordered"]?.boolValue ?? false,
            minCount: Int(details["XD_PRK_minCount"]?.integerValue ?? 0),
            // A to-one always has maxCount 1; a to-many's 0 means unbounded (as in the XML format).
            maxCount: toMany ? Int(details["XD_PRK_maxCount"]?.integerValue ?? 0) : 1, deleteRule: rule,
            isOptional: details["XD_PPSK_isOptional"]?.boolValue ?? true,
            isTransient: details["XD_PPSK_isTransient"]?.boolValue ?? false,
            renamingIdentifier: nonEmpty(details["XD_PPSK_elementID"]),
            versionHashModifier: nonEmpty(details["XD_PPSK_versionHashModifier"]),
            userInfo: userInfo(details["XD_PPSK_userInfo"]))
    }

    // MARK: - Archive helpers

    /// Every stereotype value of an element: key (`XD_PPSK_isOptional`, …) -> the property's `_default`.
    private func stereotypeValues(_ element: ArchivedObject) throws -> [String: ArchiveValue] {
        var values: [String: ArchiveValue] = [:]
        for stereotype in element["XDBucketForStereotypesstorage"]?.entries ?? [] {
            let record = try object(stereotype.value, what: "stereotype \(stereotype.key.stringValue ?? "?") of \(element.className)")
            for property in record["XDBucketForOwnedAttributesstorage"]?.entries ?? [] {
                guard let key = property.key.stringValue else { continue }
                let holder = try object(property.value, what: "stereotype value \(key)")
                values[key] = holder["_default"] ?? .null
            }
        }
        return values
    }

    private func object(_ value: ArchiveValue?, what: String) throws -> ArchivedObject {
        guard case .object(let uid, _)? = value else {
            throw invalid("\(what) is \(value.map(Self.kind(of:)) ?? "missing"), not an object")
        }
        do {
            return try archive.object(uid)
        } catch {
            throw invalid("\(what): \(error)")
        }
    }

    private func name(of element: ArchivedObject) throws -> String {
        guard let name = element["_name"]?.stringValue, !name.isEmpty else {
            throw invalid("a \(element.className) (UID \(element.uid)) has no _name")
        }
        return name
    }

    /// A short description of a value's kind for errors ("a dictionary", "the string \"x\"").
    package static func kind(of value: ArchiveValue) -> String {
        switch value {
        case .null: return "null"
        case .bool, .integer, .real: return "the number \(value.integerValue.map(String.init) ?? "?")"
        case .string(let s): return "the string \"\(s.prefix(40))\""
        case .data: return "data"
        case .date: return "a date"
        case .uuid: return "a UUID"
        case .array: return "an array"
        case .set: return "a set"
        case .dictionary: return "a dictionary"
        case .object(_, let className): return "a \(className)"
        }
    }

    private func nonEmpty(_ value: ArchiveValue?) -> String? {
        guard let string = value?.stringValue, !string.isEmpty else { return nil }
        return string
    }

    /// A user-info dictionary with its values as text (nested values rendered, as the XML format flattens them).
    private func userInfo(_ value: ArchiveValue?) -> [String: String] {
        var result: [String: String] = [:]
        for entry in value?.entries ?? [] {
            guard let key = entry.key.stringValue else { continue }
            result[key] = entry.value.stringValue ?? "\(entry.value)"
        }
        return result
    }

    private func invalid(_ reason: String) -> ModelError {
        ModelError.unreadableFile(path: source, reason: "pre-Xcode-4 model (elements): \(reason)")
    }
}

import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - MappingModel

/// An Xcode mapping model (`.xcmappingmodel`), as far as a migration can apply it without Core Data's runtime:
/// entity mappings whose attribute values are `$source` key paths or constants.
///
/// The file (`xcmapping.xml` inside the `.xcmappingmodel` directory) is a Core Data XML store of Xcode's
/// editing objects: an `XDDEVMAPPINGMODEL`, one `XDDEVENTITYMAPPING` per mapping (`sourcename`,
/// `destinationname`, `migrationpolicyclassname`, `sourcefilterpredicatestring`, `autogenerateexpression`,
/// `sourceexpressiondata`) and one `XDDEVATTRIBUTEMAPPING` / `XDDEVRELATIONSHIPMAPPING` per property (`name`,
/// and `valueexpressiondata`, an `NSKeyedArchiver` archive of the value's `NSExpression`; without it the value
/// is `$source.<name>`). A migration policy class, a source filter, a custom source fetch or a value that is not
/// a `$source` key path or a constant cannot be applied here and is an error naming the mapping.
///
/// ```swift
/// let mapping = try MappingModel.load(at: URL(fileURLWithPath: "V2ToV3.xcmappingmodel"))
/// try chain.setCustomStep(to: "V3", CustomMigration(mappingModel: mapping))
/// ```
public struct MappingModel: Sendable {
    /// Where an attribute's new value comes from.
    public enum Value: Sendable, Hashable {
        /// `$source.<key path>`: an attribute of the source object (one component).
        case source(String)
        /// A constant.
        case constant(AttributeValue)
    }

    /// One entity mapping.
    public struct EntityMapping: Sendable {
        /// The mapping's name (Xcode's, or `<Source>To<Destination>`).
        public var name: String
        /// The source entity; nil for an entity the new version adds.
        public var sourceEntity: String?
        /// The destination entity; nil for an entity the new version removes.
        public var destinationEntity: String?
        /// Destination attribute name -> its value.
        public var attributes: [String: Value]
        /// Destination relationships the mapping fills, each from the source relationship of the same name.
        public var relationships: [String]
    }

    /// The mapping model's file.
    public var source: String
    /// The entity mappings, in the order the author gave them.
    public var entityMappings: [EntityMapping]

    /// Reads an `.xcmappingmodel` directory or its `xcmapping.xml`.
    public static func load(at url: URL) throws -> MappingModel {
        var file = url
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            file = url.appendingPathComponent("xcmapping.xml")
        }
        guard FileManager.default.fileExists(atPath: file.path) else { throw ModelError.fileNotFound(path: file.path) }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelError.unreadableFile(path: file.path, reason: error.localizedDescription)
        }
        return try load(xml: data, source: file.path)
    }

    /// Parses `xcmapping.xml` bytes; `source` is what errors name.
    public static func load(xml: Data, source: String) throws -> MappingModel {
        let objects = try MappingModelXMLReader.read(xml, source: source)
        let entities = objects.values.filter { $0.type == "XDDEVENTITYMAPPING" }
            .sorted { (Int($0.attributes["mappingnumber"] ?? "") ?? 0, $0.id) < (Int($1.attributes["mappingnumber"] ?? "") ?? 0, $1.id) }
        guard !entities.isEmpty else {
            throw ModelError.missingElement(file: source, element: "XDDEVENTITYMAPPING", reason: "the mapping model has no entity mapping")
        }
        var mappings: [EntityMapping] = []
        for entity in entities {
            let sourceName = entity.attributes["sourcename"].flatMap { $0.isEmpty ? nil : $0 }
            let destinationName = entity.attributes["destinationname"].flatMap { $0.isEmpty ? nil : $0 }
            let name = entity.attributes["name"].flatMap { $0.isEmpty ? nil : $0 }
                ?? [sourceName, destinationName].compactMap { $0 }.joined(separator: "To")
            func refuse(_ reason: String) -> ModelError { .unsupportedMapping(file: source, mapping: name, reason: reason) }
            if let policy = entity.attributes["migrationpolicyclassname"], !policy.isEmpty {
                throw refuse("it uses the migration policy class \(policy), Objective-C code that only Core Data can run; "
                    + "write the step as a CustomMigration transform instead")
            }
            if let filter = entity.attributes["sourcefilterpredicatestring"], !filter.isEmpty {
                throw refuse("it filters its source with \"\(filter)\"; drop rows in a CustomMigration transform instead")
            }
            if entity.attributes["autogenerateexpression"].map(Self.isTrue) == false, entity.attributes["sourceexpressiondata"] != nil {
                throw refuse("it fetches its source objects with a custom expression")
            }
            var attributes: [String: Value] = [:]
            for id in entity.relationships["attributemappings"] ?? [] {
                guard let property = objects[id], let propertyName = property.attributes["name"] else { continue }
                attributes[propertyName] = try value(of: property, name: propertyName, source: source, refuse: refuse)
            }
            var relationships: [String] = []
            for id in entity.relationships["relationshipmappings"] ?? [] {
                guard let property = objects[id], let propertyName = property.attributes["name"] else { continue }
                try checkRelationship(property, name: propertyName, source: source, refuse: refuse)
                relationships.append(propertyName)
            }
            mappings.append(EntityMapping(
                name: name, sourceEntity: sourceName, destinationEntity: destinationName, attributes: attributes,
                relationships: relationships))
        }
        return MappingModel(source: source, entityMappings: mappings)
    }

    // MARK: - Values

    private static func isTrue(_ text: String) -> Bool { ["1", "YES", "true"].contains(text) }

    /// The archived `NSExpression` of a property mapping, nil when the mapping has none (the default
    /// `$source.<name>`).
    private static func expression(of property: MappingModelXMLReader.Object, name: String, source: String, refuse: (String) -> ModelError) throws -> PredicateOperand? {
        if property.attributes["autogenerateexpression"].map(isTrue) == true { return nil }
        guard let encoded = property.attributes["valueexpressiondata"] else { return nil }
        guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
            throw refuse("the value expression of \(name) is not base64")
        }
        do {
            let archive = try KeyedArchive(data, source: "\(source) (\(name))")
            return try ArchivedPredicateReader(archive: archive).operand(try archive.topValue(), depth: 0)
        } catch let error as ArchivedPredicateReader.Unconvertible {
            throw refuse("the value of \(name) is not a $source key path or a constant: \(error.reason)")
        } catch {
            throw refuse("the value expression of \(name) cannot be read: \(error.localizedDescription)")
        }
    }

    private static func value(of property: MappingModelXMLReader.Object, name: String, source: String, refuse: (String) -> ModelError) throws -> Value {
        guard let operand = try expression(of: property, name: name, source: source, refuse: refuse) else { return .source(name) }
        switch operand {
        case .variable("source", let path) where path.count == 1:
            return .source(path[0])
        case .variable("source", let path) where path.isEmpty:
            throw refuse("the value of \(name) is the whole source object")
        case .variable(let variable, let path):
            throw refuse("the value of \(name) is $\(([variable] + path).joined(separator: ".")); only $source.<attribute> can be applied")
        case .constant(let constant):
            return .constant(constant)
        default:
            throw refuse("the value of \(name) is not a $source key path or a constant")
        }
    }

    /// A relationship mapping is applied only as Xcode generates it: the source relationship of the same name,
    /// carried through the mapping of its destination entity.
    private static func checkRelationship(_ property: MappingModelXMLReader.Object, name: String, source: String, refuse: (String) -> ModelError) throws {
        if let keyPath = property.attributes["sourcekeypath"], !keyPath.isEmpty, keyPath != name {
            throw refuse("relationship \(name) is filled from $source.\(keyPath); only the relationship of the same name can be carried over")
        }
        guard property.attributes["valueexpressiondata"] != nil, property.attributes["autogenerateexpression"].map(isTrue) != true else { return }
        guard let encoded = property.attributes["valueexpressiondata"],
            let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters),
            let archive = try? KeyedArchive(data, source: "\(source) (\(name))"),
            let root = try? archive.topValue(), case .object(let uid, _) = root,
            let function = try? archive.object(uid),
            function["NSSelectorName"]?.stringValue == "destinationInstancesForEntityMappingNamed:sourceInstances:",
            let arguments = function["NSArguments"]?.elements, arguments.count == 2,
            case .variable("source", [name])? = try? ArchivedPredicateReader(archive: archive).operand(arguments[1], depth: 0)
        else {
            throw refuse("relationship \(name) has a value expression other than the destination instances of $source.\(name)")
        }
    }
}

import Foundation

// MARK: - ModelError

/// A model that cannot be loaded, merged or resolved. Every case names the file (or "model built in code")
/// and the element at fault.
public enum ModelError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The XML is not well formed; `line`/`column` where the parser reports them.
    case malformedXML(file: String, line: Int, column: Int, reason: String)
    /// A required element or attribute is missing.
    case missingElement(file: String, element: String, reason: String)
    /// An attribute type the model format does not define.
    case unknownAttributeType(file: String, entity: String, attribute: String, type: String)
    /// A persistent attribute of type Undefined: no store can hold a value without a type.
    case undefinedAttributeType(file: String, entity: String, attribute: String)
    /// A default value that cannot be read as the attribute's type.
    case invalidDefaultValue(file: String, entity: String, attribute: String, value: String, type: AttributeType)
    /// A relationship whose destination entity is not in the model.
    case missingDestinationEntity(file: String, entity: String, relationship: String, destination: String)
    /// A relationship whose named inverse is not a relationship of the destination.
    case missingInverse(file: String, entity: String, relationship: String, inverse: String, destination: String)
    /// An entity whose parent entity is not in the model.
    case missingParentEntity(file: String, entity: String, parent: String)
    /// An entity that is its own ancestor.
    case inheritanceCycle(file: String, entity: String)
    /// Two models being merged both declare the entity `name`.
    case duplicateEntity(name: String, firstSource: String, secondSource: String)
    /// An entity (with its ancestors) declares two properties with one name.
    case duplicateProperty(file: String, entity: String, property: String)
    /// A configuration names an entity the model does not have.
    case unknownConfigurationEntity(file: String, configuration: String, entity: String)
    /// The model has no configuration of this name; `available` lists those it has.
    case unknownConfiguration(name: String, available: [String])
    /// An index names a property the entity does not have.
    case unknownIndexProperty(file: String, entity: String, index: String, property: String)
    /// A relationship whose two ends are never in the same configuration, so no store can hold both.
    case crossConfigurationRelationship(
        file: String, entity: String, relationship: String, entityConfigurations: [String],
        destination: String, destinationConfigurations: [String])
    /// `.xccurrentversion` names a version the bundle does not contain.
    case missingCurrentVersion(file: String, version: String, available: [String])
    /// No file or bundle at `path`.
    case fileNotFound(path: String)
    /// The file at `path` exists but cannot be read; `reason` says why.
    case unreadableFile(path: String, reason: String)
    /// Writing a model file failed.
    case unwritableFile(path: String, reason: String)
    /// A mapping model (`.xcmappingmodel`) asks for something only Core Data's own migration code can do.
    case unsupportedMapping(file: String, mapping: String, reason: String)

    public var description: String {
        switch self {
        case let .malformedXML(file, line, column, reason):
            return "\(file):\(line):\(column): malformed model XML: \(reason)"
        case let .unsupportedMapping(file, mapping, reason):
            return "\(file): entity mapping \(mapping): \(reason)"
        case let .missingElement(file, element, reason):
            return "\(file): missing \(element): \(reason)"
        case let .unknownAttributeType(file, entity, attribute, type):
            return "\(file): entity \(entity), attribute \(attribute): unknown attribute type '\(type)'"
        case let .undefinedAttributeType(file, entity, attribute):
            return "\(file): entity \(entity), attribute \(attribute): type Undefined is only allowed on a transient attribute"
        case let .invalidDefaultValue(file, entity, attribute, value, type):
            return "\(file): entity \(entity), attribute \(attribute): default value '\(value)' is not a valid \(type.rawValue)"
        case let .missingDestinationEntity(file, entity, relationship, destination):
            return "\(file): relationship \(entity).\(relationship) points at entity '\(destination)', which the model does not declare"
        case let .missingInverse(file, entity, relationship, inverse, destination):
            return "\(file): relationship \(entity).\(relationship) names inverse '\(inverse)', which entity \(destination) does not declare"
        case let .missingParentEntity(file, entity, parent):
            return "\(file): entity \(entity) has parent '\(parent)', which the model does not declare"
        case let .inheritanceCycle(file, entity):
            return "\(file): entity \(entity) is its own ancestor"
        case let .duplicateEntity(name, first, second):
            return "entity \(name) is declared twice: in \(first) and in \(second)"
        case let .duplicateProperty(file, entity, property):
            return "\(file): entity \(entity) declares property '\(property)' twice (or also inherits it)"
        case let .unknownConfigurationEntity(file, configuration, entity):
            return "\(file): configuration \(configuration) lists entity '\(entity)', which the model does not declare"
        case let .unknownConfiguration(name, available):
            return "unknown configuration '\(name)'; the model has: \(available.joined(separator: ", "))"
        case let .unknownIndexProperty(file, entity, index, property):
            return "\(file): entity \(entity), index/constraint \(index): unknown property '\(property)'"
        case let .crossConfigurationRelationship(file, entity, relationship, ec, destination, dc):
            return "\(file): relationship \(entity).\(relationship) -> \(destination) crosses stores: \(entity) is in "
                + "configuration(s) \(ec.joined(separator: ", ")) and \(destination) in \(dc.joined(separator: ", ")), "
                + "which never share a store; declare a fetched property (e.g. \(destination) where "
                + "key == $FETCH_SOURCE.key) instead of the relationship"
        case let .missingCurrentVersion(file, version, available):
            return "\(file): .xccurrentversion names '\(version)', which is not in the bundle (it has: \(available.joined(separator: ", ")))"
        case let .fileNotFound(path):
            return "\(path): no such model file"
        case let .unreadableFile(path, reason):
            return "\(path): cannot read model: \(reason)"
        case let .unwritableFile(path, reason):
            return "\(path): cannot write model: \(reason)"
        }
    }
}

extension ModelError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}

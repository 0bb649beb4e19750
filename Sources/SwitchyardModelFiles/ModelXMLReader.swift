import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif
import SwitchyardModel

// MARK: - ModelXMLReader

/// Turns Xcode's `contents` XML into unresolved declarations; `ObjectModel` then resolves and validates them.
///
/// Unknown elements and attributes (`elements`, `syncable`, `codeGenerationType`, ...) are ignored, so models
/// from any Xcode version load. Elements are only recognised under their proper parent, so an `attribute`
/// nested somewhere unexpected cannot be mistaken for an entity's attribute.
package final class ModelXMLReader: NSObject, XMLParserDelegate {
    /// The file path every error names.
    package let source: String
    package private(set) var entities: [EntityDescription] = []
    package private(set) var configurations: [ConfigurationDescription] = []
    package private(set) var versionIdentifiers: [String] = []

    /// Names of the open elements, outermost first.
    private var stack: [String] = []
    private var sawModel = false
    private var entity: EntityDescription?
    private var attribute: AttributeDescription?
    private var relationship: RelationshipDescription?
    private var fetched: PendingFetchedProperty?
    private var configuration: ConfigurationDescription?
    private var constraint: [String]?
    private var fetchIndex: IndexDescription?
    private var compoundIndex: [String]?
    private var compoundIndexCount = 0
    private var failure: ModelError?
    private var parseError: (line: Int, column: Int, reason: String)?

    /// A fetched property whose destination comes from the nested `fetchRequest`.
    private struct PendingFetchedProperty {
        var name: String
        var destination: String?
        var predicate: String?
        var renamingIdentifier: String?
        var versionHashModifier: String?
        var userInfo: [String: String] = [:]
    }

    private init(source: String) {
        self.source = source
    }

    /// Parses `data`; throws `ModelError` naming `source` for malformed XML or an invalid declaration.
    package static func read(_ data: Data, source: String) throws -> ModelXMLReader {
        try checkEncoding(data, source: source)
        let reader = ModelXMLReader(source: source)
        let parser = XMLParser(data: data)
        parser.delegate = reader
        // Model files never need external entities; resolving them would let a file read other files.
        parser.shouldResolveExternalEntities = false
        let ok = parser.parse()
        if let failure = reader.failure { throw failure }
        if !ok || reader.parseError != nil {
            let error = reader.parseError
                ?? (parser.lineNumber, parser.columnNumber, Self.reason(for: parser.parserError))
            throw ModelError.malformedXML(file: source, line: error.line, column: error.column, reason: error.reason)
        }
        guard reader.sawModel else {
            // XMLParser accepts an empty document without complaint; for a model file that is malformed.
            throw ModelError.malformedXML(
                file: source, line: max(parser.lineNumber, 1), column: max(parser.columnNumber, 1),
                reason: "no root element: the file is empty or holds no XML element")
        }
        return reader
    }

    // MARK: - XMLParserDelegate

    package func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        do {
            try start(elementName, parent: stack.last, attributes: attributes)
        } catch let error as ModelError {
            fail(error, parser)
        } catch {
            fail(.missingElement(file: source, element: "<\(elementName)>", reason: "\(error)"), parser)
        }
        stack.append(elementName)
    }

    package func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        _ = stack.popLast()
        guard failure == nil else { return }
        do {
            try end(elementName, parent: stack.last)
        } catch let error as ModelError {
            fail(error, parser)
        } catch {
            fail(.missingElement(file: source, element: "<\(elementName)>", reason: "\(error)"), parser)
        }
    }

    package func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        // The first report is the one that points at the real fault; later ones are consequences.
        guard self.parseError == nil, failure == nil else { return }
        self.parseError = (parser.lineNumber, parser.columnNumber, Self.reason(for: parseError))
    }

    private func fail(_ error: ModelError, _ parser: XMLParser) {
        failure = error
        parser.abortParsing()
    }

    private static func reason(for error: (any Error)?) -> String {
        guard let error else { return "the XML parser gave up without a reason" }
        let nsError = error as NSError
        if nsError.domain == XMLParser.errorDomain, let code = XMLParser.ErrorCode(rawValue: nsError.code) {
            return "\(code) (XMLParser error \(nsError.code))"
        }
        return nsError.localizedDescription
    }

    // MARK: - Element start

    private func start(_ element: String, parent: String?, attributes a: [String: String]) throws {
        switch (element, parent) {
        case (_, nil):
            guard element == "model" else {
                throw ModelError.missingElement(
                    file: source, element: "<model>",
                    reason: "the root element is <\(element)>; this is not an Xcode model's contents file")
            }
            sawModel = true
            if let identifier = a["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
                versionIdentifiers = [identifier]
            }
        case ("entity", "model"):
            let name = try required(a, "name", of: "entity")
            entity = EntityDescription(
                name: name, className: nonEmpty(a["representedClassName"]), parent: nonEmpty(a["parentEntity"]),
                isAbstract: flag(a["isAbstract"]), renamingIdentifier: nonEmpty(a["elementID"]),
                versionHashModifier: nonEmpty(a["versionHashModifier"]),
                // Absent is Xcode's Manual/None; a value Xcode never writes still generates the type.
                codeGeneration: nonEmpty(a["codeGenerationType"]).map { EntityDescription.CodeGeneration(rawValue: $0) ?? .classDefinition } ?? .manual)
            compoundIndexCount = 0
        case ("attribute", "entity"):
            attribute = try makeAttribute(a)
        case ("relationship", "entity"):
            relationship = try makeRelationship(a)
        case ("fetchedProperty", "entity"):
            let name = try required(a, "name", of: "fetchedProperty in entity \(entityName)")
            fetched = PendingFetchedProperty(
                name: name, renamingIdentifier: nonEmpty(a["elementID"]),
                versionHashModifier: nonEmpty(a["versionHashModifier"]))
        case ("fetchRequest", "fetchedProperty"):
            fetched?.destination = nonEmpty(a["entity"])
            fetched?.predicate = nonEmpty(a["predicateString"])
        case ("entry", "userInfo"):
            try addUserInfoEntry(a)
        case ("uniquenessConstraint", "uniquenessConstraints"):
            constraint = []
        case ("constraint", "uniquenessConstraint"):
            if let value = nonEmpty(a["value"]) { constraint?.append(value) }
        case ("fetchIndex", "entity"):
            let name = try required(a, "name", of: "fetchIndex in entity \(entityName)")
            fetchIndex = IndexDescription(name: name, elements: [])
        case ("fetchIndexElement", "fetchIndex"):
            // Expression-based elements (no `property`) have no equivalent here; the rest of the index still counts.
            if let property = nonEmpty(a["property"]) {
                fetchIndex?.elements.append(.init(property: property, ascending: a["order"] != "descending"))
            }
        case ("compoundIndex", "compoundIndexes"):
            compoundIndex = []
        case ("index", "compoundIndex"):
            if let value = nonEmpty(a["value"]) { compoundIndex?.append(value) }
        case ("configuration", "model"):
            let name = try required(a, "name", of: "configuration")
            // Flags Xcode writes on the element itself (usedWithCloudKit) are kept with the configuration.
            var userInfo = a
            userInfo["name"] = nil
            configuration = ConfigurationDescription(name: name, entityNames: [], userInfo: userInfo)
        case ("memberEntity", "configuration"):
            let name = try required(a, "name", of: "memberEntity in configuration \(configuration?.name ?? "")")
            configuration?.entityNames.append(name)
        default:
            break
        }
    }

    private func makeAttribute(_ a: [String: String]) throws -> AttributeDescription {
        let name = try required(a, "name", of: "attribute in entity \(entityName)")
        // Xcode omits attributeType for an Undefined (transient-only) attribute.
        let typeName = a["attributeType"] ?? AttributeType.undefined.rawValue
        guard let type = AttributeType(xcodeName: typeName) else {
            throw ModelError.unknownAttributeType(file: source, entity: entityName, attribute: name, type: typeName)
        }
        var attribute = AttributeDescription(
            name: name, type: type, isOptional: flag(a["optional"]), isTransient: flag(a["transient"]),
            renamingIdentifier: nonEmpty(a["elementID"]), versionHashModifier: nonEmpty(a["versionHashModifier"]),
            isIndexed: flag(a["indexed"]),
            allowsExternalBinaryDataStorage: flag(a["allowsExternalBinaryDataStorage"]),
            derivationExpression: a["derived"] == "NO" ? nil : nonEmpty(a["derivationExpression"]),
            valueTransformerName: nonEmpty(a["valueTransformerName"]))
        attribute.defaultValue = try defaultValue(a, type: type, attribute: name)
        return attribute
    }

    /// A date's default lives in `defaultDateTimeInterval`; when both are present (old models write
    /// `defaultValueString="now"` next to it) the interval wins. An empty string means "no default" except
    /// for String attributes, where it is the empty string.
    private func defaultValue(_ a: [String: String], type: AttributeType, attribute: String) throws -> AttributeValue? {
        let text: String
        if type == .date, let interval = a["defaultDateTimeInterval"], !interval.isEmpty {
            text = interval
        } else if let string = a["defaultValueString"], !string.isEmpty || type == .string {
            text = string
        } else {
            return nil
        }
        guard let value = AttributeValue(xcodeDefault: text, type: type) else {
            throw ModelError.invalidDefaultValue(
                file: source, entity: entityName, attribute: attribute, value: text, type: type)
        }
        return value
    }

    private func makeRelationship(_ a: [String: String]) throws -> RelationshipDescription {
        let name = try required(a, "name", of: "relationship in entity \(entityName)")
        guard let destination = nonEmpty(a["destinationEntity"]) else {
            throw ModelError.missingElement(
                file: source, element: "destinationEntity",
                reason: "relationship \(entityName).\(name) has no destinationEntity attribute")
        }
        var rule = DeleteRule.nullify
        if let ruleName = a["deletionRule"] {
            guard let parsed = DeleteRule(rawValue: ruleName) else {
                throw ModelError.missingElement(
                    file: source, element: "deletionRule",
                    reason: "relationship \(entityName).\(name) has deletion rule '\(ruleName)'; expected "
                        + "Nullify, Cascade, Deny or No Action")
            }
            rule = parsed
        }
        let toMany = flag(a["toMany"])
        return RelationshipDescription(
            name: name, destination: destination, inverse: nonEmpty(a["inverseName"]), isToMany: toMany,
            isOrdered: flag(a["ordered"]), minCount: a["minCount"].flatMap { Int($0) } ?? 0,
            // A to-one always has maxCount 1, whatever the XML says; a to-many's 0 means unbounded.
            maxCount: toMany ? a["maxCount"].flatMap { Int($0) } ?? 0 : 1, deleteRule: rule,
            isOptional: flag(a["optional"]), isTransient: flag(a["transient"]),
            renamingIdentifier: nonEmpty(a["elementID"]), versionHashModifier: nonEmpty(a["versionHashModifier"]))
    }

    private func addUserInfoEntry(_ a: [String: String]) throws {
        guard let key = a["key"] else { return }
        let value = a["value"] ?? ""
        // stack is [..., owner, "userInfo"] while an entry starts.
        let owner = stack.count >= 2 ? stack[stack.count - 2] : nil
        switch owner {
        case "attribute": attribute?.userInfo[key] = value
        case "relationship": relationship?.userInfo[key] = value
        case "fetchedProperty": fetched?.userInfo[key] = value
        case "entity": entity?.userInfo[key] = value
        case "configuration": configuration?.userInfo[key] = value
        default: break  // the model's own userInfo has no home in ObjectModel
        }
    }

    // MARK: - Element end

    private func end(_ element: String, parent: String?) throws {
        switch (element, parent) {
        case ("entity", "model"):
            if let entity { entities.append(entity) }
            entity = nil
        case ("attribute", "entity"):
            if let attribute { entity?.attributes.append(attribute) }
            attribute = nil
        case ("relationship", "entity"):
            if let relationship { entity?.relationships.append(relationship) }
            relationship = nil
        case ("fetchedProperty", "entity"):
            if let fetched {
                guard let destination = fetched.destination else {
                    throw ModelError.missingElement(
                        file: source, element: "fetchRequest entity",
                        reason: "fetched property \(entityName).\(fetched.name) has no fetch request entity")
                }
                entity?.fetchedProperties.append(
                    FetchedPropertyDescription(
                        name: fetched.name, destination: destination,
                        // No predicate fetches every object of the destination, as Core Data does.
                        predicate: fetched.predicate ?? "TRUEPREDICATE", renamingIdentifier: fetched.renamingIdentifier,
                        versionHashModifier: fetched.versionHashModifier, userInfo: fetched.userInfo))
            }
            fetched = nil
        case ("uniquenessConstraint", "uniquenessConstraints"):
            if let constraint, !constraint.isEmpty { entity?.uniquenessConstraints.append(constraint) }
            constraint = nil
        case ("fetchIndex", "entity"):
            if let fetchIndex, !fetchIndex.elements.isEmpty { entity?.indexes.append(fetchIndex) }
            fetchIndex = nil
        case ("compoundIndex", "compoundIndexes"):
            if let compoundIndex, !compoundIndex.isEmpty {
                // Pre-2017 models have unnamed compound indexes; number them per entity so they round-trip.
                compoundIndexCount += 1
                entity?.indexes.append(IndexDescription(name: "compound_\(compoundIndexCount)", properties: compoundIndex))
            }
            compoundIndex = nil
        case ("configuration", "model"):
            if let configuration { configurations.append(configuration) }
            configuration = nil
        default:
            break
        }
    }

    // MARK: - Attribute helpers

    private var entityName: String { entity?.name ?? "(outside any entity)" }

    private func required(_ a: [String: String], _ key: String, of element: String) throws -> String {
        guard let value = a[key], !value.isEmpty else {
            throw ModelError.missingElement(file: source, element: "\(key) attribute", reason: "\(element) has no \(key)")
        }
        return value
    }

    private func flag(_ value: String?) -> Bool { value == "YES" }

    private func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}

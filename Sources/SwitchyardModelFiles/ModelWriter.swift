import Foundation
import SwitchyardModel

// MARK: - ModelWriter

/// Writes an `ObjectModel` as Xcode's `contents` XML, which Xcode's model editor and `ModelLoader` read back.
///
/// Declarations are written in the model's order (attributes, relationships and fetched properties as the
/// entity lists them), so `ModelLoader.load` of the output equals the model. Entities are written sorted by
/// name, as Xcode does; their order carries no meaning because entity numbers come from names.
///
/// ```swift
/// let xml = ModelWriter.xml(for: model)
/// let written = try ModelWriter.write(model, toDirectory: outputFolder)   // .../Messenger.xcdatamodel
/// ```
public enum ModelWriter {
    /// Configuration flags Xcode writes as XML attributes of `<configuration>` rather than as userInfo entries.
    package static let configurationAttributes: Set<String> = ["usedWithCloudKit"]

    /// The `contents` XML for `model`.
    ///
    /// Xcode's format holds one version identifier, so a merged model with several keeps only the first.
    public static func xml(for model: ObjectModel) -> String {
        var out = XMLOutput()
        out.line(#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
        out.open(
            "model",
            [
                ("type", "com.apple.IDECoreDataModeler.DataModel"), ("documentVersion", "1.0"),
                ("minimumToolsVersion", "Automatic"), ("sourceLanguage", "Swift"),
                ("userDefinedModelVersionIdentifier", model.versionIdentifiers.first ?? ""),
            ])
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            writeEntity(entity, to: &out)
        }
        for configuration in model.configurations {
            writeConfiguration(configuration, to: &out)
        }
        out.close("model")
        return out.text
    }

    /// Writes `model` to `<directory>/<name>.xcdatamodel/contents`, creating folders as needed, and returns the
    /// `.xcdatamodel` URL. `name` defaults to the `.xcdatamodel` the model was loaded from, else "Model".
    @discardableResult
    public static func write(_ model: ObjectModel, name: String? = nil, toDirectory url: URL) throws -> URL {
        let versionName = name ?? defaultName(for: model)
        let versionURL = url.appendingPathComponent("\(versionName).xcdatamodel")
        let contents = versionURL.appendingPathComponent("contents")
        do {
            try FileManager.default.createDirectory(at: versionURL, withIntermediateDirectories: true)
            try Data(xml(for: model).utf8).write(to: contents, options: .atomic)
        } catch {
            throw ModelError.unwritableFile(path: contents.path, reason: error.localizedDescription)
        }
        return versionURL
    }

    /// The name of the `.xcdatamodel` the model's first entity came from, so a loaded model is written back
    /// under its own name.
    package static func defaultName(for model: ObjectModel) -> String {
        let sources = model.entities.compactMap { model.entitySources[$0.name] }
        for source in sources {
            let version = URL(fileURLWithPath: source).deletingLastPathComponent()
            if version.pathExtension == "xcdatamodel" { return version.deletingPathExtension().lastPathComponent }
        }
        return "Model"
    }

    // MARK: - Entities

    private static func writeEntity(_ entity: EntityDescription, to out: inout XMLOutput) {
        let attributes: [(String, String?)] = [
            ("name", entity.name), ("representedClassName", entity.className), ("parentEntity", entity.parentName),
            ("isAbstract", yes(entity.isAbstract)), ("elementID", entity.renamingIdentifier),
            ("versionHashModifier", entity.versionHashModifier),
            ("codeGenerationType", entity.codeGeneration == .manual ? nil : entity.codeGeneration.rawValue),
        ]
        let isEmpty = entity.attributes.isEmpty && entity.relationships.isEmpty && entity.fetchedProperties.isEmpty
            && entity.indexes.isEmpty && entity.userInfo.isEmpty && entity.uniquenessConstraints.isEmpty
        if isEmpty {
            out.empty("entity", attributes)
            return
        }
        out.open("entity", attributes)
        for attribute in entity.attributes { writeAttribute(attribute, to: &out) }
        for relationship in entity.relationships { writeRelationship(relationship, to: &out) }
        for fetched in entity.fetchedProperties { writeFetchedProperty(fetched, to: &out) }
        for index in entity.indexes {
            out.open("fetchIndex", [("name", index.name)])
            for element in index.elements {
                out.empty(
                    "fetchIndexElement",
                    [("property", element.property), ("type", "Binary"),
                     ("order", element.ascending ? "ascending" : "descending")])
            }
            out.close("fetchIndex")
        }
        writeUserInfo(entity.userInfo, to: &out)
        if !entity.uniquenessConstraints.isEmpty {
            out.open("uniquenessConstraints", [])
            for constraint in entity.uniquenessConstraints {
                out.open("uniquenessConstraint", [])
                for property in constraint { out.empty("constraint", [("value", property)]) }
                out.close("uniquenessConstraint")
            }
            out.close("uniquenessConstraints")
        }
        out.close("entity")
    }

    private static func writeAttribute(_ attribute: AttributeDescription, to out: inout XMLOutput) {
        let type = attribute.type
        let attributes: [(String, String?)] = [
            ("name", attribute.name), ("optional", yes(attribute.isOptional)), ("transient", yes(attribute.isTransient)),
            // Xcode writes no attributeType for Undefined; the loader reads its absence back as Undefined.
            ("attributeType", type == .undefined ? nil : type.rawValue),
            ("defaultValueString", attribute.defaultValue?.xcodeDefaultString),
            ("defaultDateTimeInterval", attribute.defaultValue?.xcodeDateInterval),
            ("indexed", yes(attribute.isIndexed)),
            ("allowsExternalBinaryDataStorage", yes(attribute.allowsExternalBinaryDataStorage)),
            ("derived", yes(attribute.derivationExpression != nil)),
            ("derivationExpression", attribute.derivationExpression),
            ("valueTransformerName", attribute.valueTransformerName),
            ("elementID", attribute.renamingIdentifier), ("versionHashModifier", attribute.versionHashModifier),
        ]
        writeElement("attribute", attributes, userInfo: attribute.userInfo, to: &out)
    }

    private static func writeRelationship(_ relationship: RelationshipDescription, to out: inout XMLOutput) {
        let r = relationship
        let attributes: [(String, String?)] = [
            ("name", r.name), ("optional", yes(r.isOptional)), ("transient", yes(r.isTransient)),
            ("toMany", yes(r.isToMany)), ("minCount", r.minCount != 0 ? String(r.minCount) : nil),
            // Xcode always writes maxCount="1" on a to-one; a to-many's 0 (unbounded) is left out.
            ("maxCount", r.isToMany ? (r.maxCount != 0 ? String(r.maxCount) : nil) : "1"),
            ("deletionRule", r.deleteRule.rawValue), ("ordered", yes(r.isOrdered)),
            ("destinationEntity", r.destinationEntityName), ("inverseName", r.inverseName),
            ("inverseEntity", r.inverseName == nil ? nil : r.destinationEntityName),
            ("elementID", r.renamingIdentifier), ("versionHashModifier", r.versionHashModifier),
        ]
        writeElement("relationship", attributes, userInfo: r.userInfo, to: &out)
    }

    private static func writeFetchedProperty(_ fetched: FetchedPropertyDescription, to out: inout XMLOutput) {
        out.open(
            "fetchedProperty",
            [("name", fetched.name), ("optional", "YES"), ("elementID", fetched.renamingIdentifier),
             ("versionHashModifier", fetched.versionHashModifier)])
        out.empty(
            "fetchRequest",
            [("name", "fetchedPropertyFetchRequest"), ("entity", fetched.destinationEntityName),
             ("predicateString", fetched.predicateFormat)])
        writeUserInfo(fetched.userInfo, to: &out)
        out.close("fetchedProperty")
    }

    // MARK: - Configurations and userInfo

    private static func writeConfiguration(_ configuration: ConfigurationDescription, to out: inout XMLOutput) {
        let flags = configuration.userInfo.filter { configurationAttributes.contains($0.key) }
        let entries = configuration.userInfo.filter { !configurationAttributes.contains($0.key) }
        let attributes = [("name", configuration.name)] + flags.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if configuration.entityNames.isEmpty && entries.isEmpty {
            out.empty("configuration", attributes)
            return
        }
        out.open("configuration", attributes)
        for name in configuration.entityNames { out.empty("memberEntity", [("name", name)]) }
        writeUserInfo(entries, to: &out)
        out.close("configuration")
    }

    /// An element whose only possible children are userInfo entries: self-closing when it has none.
    private static func writeElement(
        _ name: String, _ attributes: [(String, String?)], userInfo: [String: String], to out: inout XMLOutput
    ) {
        guard !userInfo.isEmpty else {
            out.empty(name, attributes)
            return
        }
        out.open(name, attributes)
        writeUserInfo(userInfo, to: &out)
        out.close(name)
    }

    private static func writeUserInfo(_ userInfo: [String: String], to out: inout XMLOutput) {
        guard !userInfo.isEmpty else { return }
        out.open("userInfo", [])
        // Sorted so the same model always produces the same bytes.
        for (key, value) in userInfo.sorted(by: { $0.key < $1.key }) {
            out.empty("entry", [("key", key), ("value", value)])
        }
        out.close("userInfo")
    }

    /// "YES" for true; nil (attribute left out, as Xcode does) for false.
    private static func yes(_ flag: Bool) -> String? { flag ? "YES" : nil }
}

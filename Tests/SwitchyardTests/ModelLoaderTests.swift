import Foundation
import Testing
@testable import Switchyard

/// Loading hand-written `contents` files, good and bad, written into a temporary directory at test time.
@Suite struct ModelLoaderTests {
    // MARK: - Helpers

    static let header = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#

    /// Wraps `body` in a `<model>` element.
    static func modelXML(_ body: String, identifier: String = "") -> String {
        """
        \(header)
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="\(identifier)">
        \(body)
        </model>
        """
    }

    /// Writes `xml` as `<dir>/<name>.xcdatamodel/contents` and returns the `contents` URL.
    @discardableResult
    static func writeVersion(_ xml: String, named name: String, in directory: URL) throws -> URL {
        let version = directory.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        let contents = version.appendingPathComponent("contents")
        try Data(xml.utf8).write(to: contents)
        return contents
    }

    static func writeCurrentVersion(_ name: String, in bundle: URL) throws {
        let plist: [String: Any] = [ModelLoader.currentVersionKey: name]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        try data.write(to: bundle.appendingPathComponent(".xccurrentversion"))
    }

    /// Runs `body`, requiring it to throw a `ModelError`, and returns that error.
    static func modelError(_ body: () throws -> ObjectModel) throws -> ModelError {
        do {
            _ = try body()
        } catch let error as ModelError {
            return error
        }
        Issue.record("expected a ModelError, got a model")
        throw CancellationError()
    }

    // MARK: - Errors that name the file

    @Test func malformedXMLNamesFileAndLine() throws {
        let dir = TemporaryDirectory()
        let xml = """
            \(Self.header)
            <model>
                <entity name="A">
                    <attribute name="x" attributeType="String">
                </entity>
            </model>
            """
        let contents = try Self.writeVersion(xml, named: "Broken", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        guard case let .malformedXML(file, line, _, reason) = error else {
            Issue.record("expected malformedXML, got \(error)")
            return
        }
        #expect(file == contents.path)
        // The mismatched </entity> is on line 5.
        #expect(line == 5)
        #expect(!reason.isEmpty)
        #expect(error.description.contains(contents.path))
        #expect(error.description.contains(":5:"))
    }

    @Test func emptyFileIsMalformed() throws {
        let dir = TemporaryDirectory()
        let contents = try Self.writeVersion("", named: "Empty", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        guard case let .malformedXML(file, _, _, _) = error else {
            Issue.record("expected malformedXML, got \(error)")
            return
        }
        #expect(file == contents.path)
    }

    @Test func foreignRootElementIsRejected() throws {
        let dir = TemporaryDirectory()
        let contents = try Self.writeVersion("\(Self.header)\n<plist version=\"1.0\"><dict/></plist>", named: "P", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        guard case .missingElement(file: contents.path, element: "<model>", _) = error else {
            Issue.record("expected missingElement(<model>), got \(error)")
            return
        }
        #expect(error.description.contains("<plist>"))
    }

    @Test func unknownAttributeType() throws {
        let dir = TemporaryDirectory()
        let xml = Self.modelXML(#"<entity name="A"><attribute name="big" attributeType="Integer 128"/></entity>"#)
        let contents = try Self.writeVersion(xml, named: "Types", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        #expect(error == .unknownAttributeType(file: contents.path, entity: "A", attribute: "big", type: "Integer 128"))
        #expect(error.description.contains(contents.path))
    }

    @Test func danglingDestinationEntity() throws {
        let dir = TemporaryDirectory()
        let xml = Self.modelXML(
            #"<entity name="A"><relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B"/></entity>"#)
        let contents = try Self.writeVersion(xml, named: "Dangling", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        #expect(error == .missingDestinationEntity(file: contents.path, entity: "A", relationship: "b", destination: "B"))
        #expect(error.description.contains(contents.path))
    }

    @Test func missingDestinationEntityAttribute() throws {
        let dir = TemporaryDirectory()
        let xml = Self.modelXML(#"<entity name="A"><relationship name="b" optional="YES" maxCount="1"/></entity>"#)
        let contents = try Self.writeVersion(xml, named: "NoDestination", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        guard case .missingElement(file: contents.path, element: "destinationEntity", let reason) = error else {
            Issue.record("expected missingElement(destinationEntity), got \(error)")
            return
        }
        #expect(reason.contains("A.b"))
    }

    @Test func missingCurrentVersionTarget() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("App.xcdatamodeld")
        try Self.writeVersion(Self.modelXML(#"<entity name="A"/>"#), named: "App", in: bundle)
        try Self.writeVersion(Self.modelXML(#"<entity name="A"/>"#), named: "App 2", in: bundle)
        try Self.writeCurrentVersion("App 3.xcdatamodel", in: bundle)
        let error = try Self.modelError { try ModelLoader.load(at: bundle) }
        let marker = bundle.appendingPathComponent(".xccurrentversion").path
        #expect(
            error == .missingCurrentVersion(
                file: marker, version: "App 3.xcdatamodel", available: ["App.xcdatamodel", "App 2.xcdatamodel"]))
        #expect(error.description.contains(marker))
        #expect(error.description.contains("App 2.xcdatamodel"))
    }

    @Test func missingFile() throws {
        let dir = TemporaryDirectory()
        let missing = dir.file("Nowhere.xcdatamodeld")
        let error = try Self.modelError { try ModelLoader.load(at: missing) }
        #expect(error == .fileNotFound(path: missing.path))
        #expect(error.description.contains(missing.path))
    }

    @Test func versionDirectoryWithoutContents() throws {
        let dir = TemporaryDirectory()
        let version = dir.file("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        let error = try Self.modelError { try ModelLoader.load(at: version) }
        #expect(error == .fileNotFound(path: version.appendingPathComponent("contents").path))
    }

    @Test func bundleWithoutVersions() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("Hollow.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let error = try Self.modelError { try ModelLoader.load(at: bundle) }
        guard case .missingElement(file: bundle.path, _, _) = error else {
            Issue.record("expected missingElement naming the bundle, got \(error)")
            return
        }
    }

    @Test func invalidDefaultValue() throws {
        let dir = TemporaryDirectory()
        let xml = Self.modelXML(
            #"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="70000"/></entity>"#)
        let contents = try Self.writeVersion(xml, named: "Defaults", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: contents) }
        #expect(
            error == .invalidDefaultValue(file: contents.path, entity: "A", attribute: "n", value: "70000", type: .integer16))
        #expect(error.description.contains(contents.path))
    }

    @Test func undefinedTypeOnlyOnTransientAttributes() throws {
        let dir = TemporaryDirectory()
        let stored = try Self.writeVersion(
            Self.modelXML(#"<entity name="A"><attribute name="u" optional="YES"/></entity>"#), named: "Stored", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(at: stored) }
        #expect(error == .undefinedAttributeType(file: stored.path, entity: "A", attribute: "u"))
        #expect(error.description.contains(stored.path))

        let transient = try Self.writeVersion(
            Self.modelXML(#"<entity name="A"><attribute name="u" optional="YES" transient="YES"/></entity>"#),
            named: "Transient", in: dir.url)
        let model = try ModelLoader.load(at: transient)
        #expect(model.entity(named: "A")?.attribute(named: "u")?.type == .undefined)
    }

    // MARK: - What loads

    @Test func parsesEveryDeclaration() throws {
        let dir = TemporaryDirectory()
        let xml = Self.modelXML(
            """
            <entity name="Base" representedClassName="BaseMO" isAbstract="YES" elementID="OldBase" versionHashModifier="v2" syncable="YES">
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO" elementID="identifier"/>
                <attribute name="note" optional="YES" transient="YES" attributeType="String" versionHashModifier="m"/>
                <userInfo><entry key="owner" value="core &amp; friends"/></userInfo>
            </entity>
            <entity name="Item" parentEntity="Base" codeGenerationType="class">
                <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="colors" optional="YES" attributeType="Transformable" valueTransformerName="ColorsTransformer" customClassName="Colors"/>
                <attribute name="count" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="tags.@count"/>
                <attribute name="title" attributeType="String" indexed="YES" spotlightIndexingEnabled="YES">
                    <userInfo><entry key="storesplit.key" value="title"/></userInfo>
                </attribute>
                <relationship name="tags" optional="YES" toMany="YES" minCount="1" maxCount="5" deletionRule="Cascade" ordered="YES" destinationEntity="Tag" inverseName="item" inverseEntity="Tag" elementID="labels">
                    <userInfo><entry key="k" value="v"/></userInfo>
                </relationship>
                <fetchedProperty name="related" optional="YES" elementID="similar">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Tag" predicateString="name BEGINSWITH $FETCH_SOURCE.title"/>
                    <userInfo><entry key="fp" value="1"/></userInfo>
                </fetchedProperty>
                <fetchIndex name="byTitle">
                    <fetchIndexElement property="title" type="Binary" order="descending"/>
                    <fetchIndexElement expression="length:(title)" expressionType="Integer 64" order="ascending"/>
                </fetchIndex>
                <compoundIndexes>
                    <compoundIndex><index value="title"/><index value="count"/></compoundIndex>
                    <compoundIndex><index value="count"/></compoundIndex>
                </compoundIndexes>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="title"/><constraint value="id"/></uniquenessConstraint>
                </uniquenessConstraints>
                <somethingNew attribute="ignored"><attribute name="notAnAttribute" attributeType="Nonsense"/></somethingNew>
            </entity>
            <entity name="Tag">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="item" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
            </entity>
            <configuration name="Main" usedWithCloudKit="YES">
                <memberEntity name="Item"/>
                <memberEntity name="Tag"/>
                <userInfo><entry key="purpose" value="tests"/></userInfo>
            </configuration>
            <elements><element name="Item" positionX="0" positionY="0" width="128" height="60"/></elements>
            """, identifier: "7")
        let contents = try Self.writeVersion(xml, named: "Everything", in: dir.url)
        let model = try ModelLoader.load(at: contents)

        #expect(model.versionIdentifiers == ["7"])
        #expect(model.entities.map(\.name) == ["Base", "Item", "Tag"])
        let base = try #require(model.entity(named: "Base"))
        #expect(base.className == "BaseMO")
        #expect(base.isAbstract)
        #expect(base.renamingIdentifier == "OldBase")
        #expect(base.versionHashModifier == "v2")
        #expect(base.userInfo == ["owner": "core & friends"])
        let id = try #require(base.attribute(named: "id"))
        #expect(id.type == .uuid && !id.isOptional && id.renamingIdentifier == "identifier")
        let note = try #require(base.attribute(named: "note"))
        #expect(note.isTransient && note.isOptional && note.versionHashModifier == "m")

        let item = try #require(model.entity(named: "Item"))
        #expect(item.parentName == "Base")
        #expect(item.attributes.map(\.name) == ["blob", "colors", "count", "title"])
        #expect(item.allAttributes.map(\.name) == ["id", "note", "blob", "colors", "count", "title"])
        #expect(item.attribute(named: "blob")?.allowsExternalBinaryDataStorage == true)
        #expect(item.attribute(named: "colors")?.valueTransformerName == "ColorsTransformer")
        #expect(item.attribute(named: "count")?.derivationExpression == "tags.@count")
        let title = try #require(item.attribute(named: "title"))
        #expect(title.isIndexed && !title.isOptional && title.userInfo == ["storesplit.key": "title"])

        let tags = try #require(item.relationship(named: "tags"))
        #expect(tags.isToMany && tags.isOrdered && tags.minCount == 1 && tags.maxCount == 5)
        #expect(tags.deleteRule == .cascade && tags.destinationEntityName == "Tag" && tags.inverseName == "item")
        #expect(tags.renamingIdentifier == "labels" && tags.userInfo == ["k": "v"] && tags.isOptional)
        let related = try #require(item.fetchedProperty(named: "related"))
        #expect(related.destinationEntityName == "Tag")
        #expect(related.predicateFormat == "name BEGINSWITH $FETCH_SOURCE.title")
        #expect(related.renamingIdentifier == "similar" && related.userInfo == ["fp": "1"])

        #expect(
            item.indexes == [
                IndexDescription(name: "byTitle", elements: [.init(property: "title", ascending: false)]),
                IndexDescription(name: "compound_1", properties: ["title", "count"]),
                IndexDescription(name: "compound_2", properties: ["count"]),
            ])
        #expect(item.uniquenessConstraints == [["title", "id"]])
        #expect(item.attribute(named: "notAnAttribute") == nil)

        let tagItem = try #require(model.entity(named: "Tag")?.relationship(named: "item"))
        #expect(!tagItem.isToMany && tagItem.maxCount == 1 && tagItem.deleteRule == .nullify)

        #expect(
            model.configurations == [
                ConfigurationDescription(
                    name: "Main", entityNames: ["Item", "Tag"], userInfo: ["usedWithCloudKit": "YES", "purpose": "tests"])
            ])
    }

    /// One default per attribute type, as Xcode writes them.
    @Test(arguments: [
        ("Integer 16", "-12", AttributeValue.integer(-12)),
        ("Integer 32", "2147483647", .integer(2_147_483_647)),
        ("Integer 64", "0", .integer(0)),
        ("Decimal", "12.50", .decimal(Decimal(string: "12.5")!)),
        ("Double", "0.25", .double(0.25)),
        ("Float", "1", .double(1)),
        ("String", "Set From Core Data Model Editor", .string("Set From Core Data Model Editor")),
        ("String", "", .string("")),
        ("Boolean", "YES", .bool(true)),
        ("Boolean", "NO", .bool(false)),
        ("Date", "631152000", .date(Date(timeIntervalSinceReferenceDate: 631_152_000))),
        ("UUID", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        ("URI", "https://example.com/a?b=c", .uri(URL(string: "https://example.com/a?b=c")!)),
    ])
    func defaultValues(type: String, text: String, expected: AttributeValue) throws {
        let xml = Self.modelXML(
            "<entity name=\"A\"><attribute name=\"a\" optional=\"YES\" attributeType=\"\(type)\" defaultValueString=\"\(text)\"/></entity>")
        let model = try ModelLoader.load(contentsXML: Data(xml.utf8), source: "defaults.xml")
        #expect(model.entity(named: "A")?.attribute(named: "a")?.defaultValue == expected)
    }

    @Test(arguments: [
        ("Integer 32", "ten"), ("Integer 16", "1.5"), ("Decimal", "12abc"), ("Double", "x"), ("Boolean", "maybe"),
        ("Date", "yesterday"), ("UUID", "not-a-uuid"), ("Binary", "AAAA"),
    ])
    func unparsableDefaultValues(type: String, text: String) throws {
        let xml = Self.modelXML(
            "<entity name=\"A\"><attribute name=\"a\" optional=\"YES\" attributeType=\"\(type)\" defaultValueString=\"\(text)\"/></entity>")
        let error = try Self.modelError { try ModelLoader.load(contentsXML: Data(xml.utf8), source: "bad-defaults.xml") }
        guard case .invalidDefaultValue(file: "bad-defaults.xml", entity: "A", attribute: "a", value: text, _) = error else {
            Issue.record("expected invalidDefaultValue, got \(error)")
            return
        }
    }

    @Test func dateDefaultPrefersDateTimeInterval() throws {
        // Old Xcode versions wrote defaultValueString="now" next to the interval; the interval is the value.
        let xml = Self.modelXML(
            #"<entity name="A"><attribute name="d" optional="YES" attributeType="Date" defaultDateTimeInterval="362848762.5" defaultValueString="now"/><attribute name="id" optional="YES" attributeType="UUID" defaultValueString=""/></entity>"#)
        let model = try ModelLoader.load(contentsXML: Data(xml.utf8), source: "dates.xml")
        let entity = try #require(model.entity(named: "A"))
        #expect(entity.attribute(named: "d")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 362_848_762.5)))
        #expect(entity.attribute(named: "id")?.defaultValue == nil)
    }

    @Test func fetchedPropertyWithoutPredicateFetchesEverything() throws {
        let xml = Self.modelXML(
            #"<entity name="A"><fetchedProperty name="all" optional="YES"><fetchRequest name="r" entity="A"/></fetchedProperty></entity>"#)
        let model = try ModelLoader.load(contentsXML: Data(xml.utf8), source: "fetched.xml")
        #expect(model.entity(named: "A")?.fetchedProperty(named: "all")?.predicateFormat == "TRUEPREDICATE")
    }

    @Test func fetchedPropertyWithoutEntityIsAnError() throws {
        let xml = Self.modelXML(#"<entity name="A"><fetchedProperty name="all" optional="YES"/></entity>"#)
        let error = try Self.modelError { try ModelLoader.load(contentsXML: Data(xml.utf8), source: "fetched.xml") }
        guard case .missingElement(file: "fetched.xml", element: "fetchRequest entity", _) = error else {
            Issue.record("expected missingElement(fetchRequest entity), got \(error)")
            return
        }
    }

    // MARK: - Bundles

    @Test func currentVersionMayBeTheOlderOne() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("Cars.xcdatamodeld")
        try Self.writeVersion(Self.modelXML(#"<entity name="Old"/>"#, identifier: "1"), named: "Cars", in: bundle)
        try Self.writeVersion(Self.modelXML(#"<entity name="New"/>"#, identifier: "2"), named: "Cars 2", in: bundle)
        try Self.writeCurrentVersion("Cars.xcdatamodel", in: bundle)
        let model = try ModelLoader.load(at: bundle)
        #expect(model.entities.map(\.name) == ["Old"])
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test func withoutCurrentVersionTheLastVersionByNumericNameWins() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("Cars.xcdatamodeld")
        try Self.writeVersion(Self.modelXML(#"<entity name="Nine"/>"#), named: "Cars 9", in: bundle)
        try Self.writeVersion(Self.modelXML(#"<entity name="Ten"/>"#), named: "Cars 10", in: bundle)
        try Self.writeVersion(Self.modelXML(#"<entity name="One"/>"#), named: "Cars", in: bundle)
        #expect(try ModelLoader.load(at: bundle).entities.map(\.name) == ["Ten"])
    }

    @Test func loadsAnXcdatamodelDirectoryAndABareContentsFile() throws {
        let dir = TemporaryDirectory()
        let contents = try Self.writeVersion(Self.modelXML(#"<entity name="A"/>"#), named: "Plain", in: dir.url)
        let fromDirectory = try ModelLoader.load(at: contents.deletingLastPathComponent())
        let fromFile = try ModelLoader.load(at: contents)
        #expect(fromDirectory == fromFile)
        #expect(fromFile.entitySources["A"] == contents.path)
    }

    // MARK: - Several files

    @Test func loadsSeveralFilesIntoOneModel() throws {
        let dir = TemporaryDirectory()
        let a = try Self.writeVersion(
            Self.modelXML(#"<entity name="A"/><configuration name="Main"><memberEntity name="A"/></configuration>"#),
            named: "First", in: dir.url)
        let b = try Self.writeVersion(
            Self.modelXML(#"<entity name="B"/><configuration name="Main"><memberEntity name="B"/></configuration>"#),
            named: "Second", in: dir.url)
        let model = try ModelLoader.load(urls: [a, b])
        #expect(model.entities.map(\.name) == ["A", "B"])
        #expect(model.configurations == [ConfigurationDescription(name: "Main", entityNames: ["A", "B"])])
        #expect(model.entitySources == ["A": a.path, "B": b.path])
    }

    @Test func duplicateEntityAcrossFilesNamesBothFiles() throws {
        let dir = TemporaryDirectory()
        let a = try Self.writeVersion(Self.modelXML(#"<entity name="A"/>"#), named: "First", in: dir.url)
        let b = try Self.writeVersion(Self.modelXML(#"<entity name="A"/>"#), named: "Second", in: dir.url)
        let error = try Self.modelError { try ModelLoader.load(urls: [a, b]) }
        #expect(error == .duplicateEntity(name: "A", firstSource: a.path, secondSource: b.path))
        #expect(error.description.contains(a.path) && error.description.contains(b.path))
    }
}

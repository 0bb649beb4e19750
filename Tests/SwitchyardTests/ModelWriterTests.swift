import Foundation
import Testing
@testable import Switchyard

/// `ModelWriter` output reads back as the same model.
@Suite struct ModelWriterTests {
    /// Writes `model`, loads the written file, and returns the reloaded model.
    static func roundTrip(_ model: ObjectModel) throws -> ObjectModel {
        let dir = TemporaryDirectory()
        let version = try ModelWriter.write(model, toDirectory: dir.url)
        return try ModelLoader.load(at: version)
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: FixtureModelCounts.all)
    func fixtureModelsRoundTrip(_ fixture: FixtureModelCounts) throws {
        let model = try ModelLoader.load(at: Fixtures.url(fixture.path))
        let reloaded = try Self.roundTrip(model)
        #expect(reloaded == model)
        #expect(reloaded.versionHashes == model.versionHashes)
    }

    @Test func messengerRoundTrips() throws {
        let model = try ModelLoader.load(at: MessengerSchemaTests.url)
        #expect(try Self.roundTrip(model) == model)
    }

    @Test func writesUnderTheLoadedVersionName() throws {
        let model = try ModelLoader.load(at: MessengerSchemaTests.url)
        let dir = TemporaryDirectory()
        let version = try ModelWriter.write(model, toDirectory: dir.url)
        #expect(version.lastPathComponent == "Messenger.xcdatamodel")
        #expect(FileManager.default.fileExists(atPath: version.appendingPathComponent("contents").path))
        let named = try ModelWriter.write(model, name: "Copy", toDirectory: dir.url)
        #expect(named.lastPathComponent == "Copy.xcdatamodel")
    }

    @Test func modelBuiltInCodeIsWrittenAsModel() throws {
        let model = try ObjectModel(entities: [EntityDescription(name: "A")])
        let dir = TemporaryDirectory()
        #expect(try ModelWriter.write(model, toDirectory: dir.url).lastPathComponent == "Model.xcdatamodel")
    }

    @Test func outputIsDeterministic() throws {
        let model = try ModelLoader.load(at: MessengerSchemaTests.url)
        #expect(ModelWriter.xml(for: model) == ModelWriter.xml(for: model))
        #expect(ModelWriter.xml(for: model) == ModelWriter.xml(for: try Self.roundTrip(model)))
    }

    /// Every value a model can hold that XML must escape, and every default type, survive the trip.
    @Test func everythingBuiltInCodeRoundTrips() throws {
        let awkward = "a & b < c > d \"quoted\" 'single'\ttab\nnew line\r\u{0301}é 😀"
        let thing = EntityDescription(
            name: "Thing", className: "ThingMO", isAbstract: true,
            attributes: [
                AttributeDescription(name: "i16", type: .integer16, isOptional: false, defaultValue: .integer(-7)),
                AttributeDescription(name: "i32", type: .integer32, defaultValue: .integer(Int64(Int32.max))),
                AttributeDescription(name: "i64", type: .integer64, defaultValue: .integer(Int64.min)),
                AttributeDescription(name: "dec", type: .decimal, defaultValue: .decimal(Decimal(string: "-1234.5678")!)),
                AttributeDescription(name: "dbl", type: .double, defaultValue: .double(0.1)),
                AttributeDescription(name: "flt", type: .float, defaultValue: .double(1e-7)),
                AttributeDescription(name: "str", type: .string, defaultValue: .string(awkward)),
                AttributeDescription(name: "empty", type: .string, defaultValue: .string("")),
                AttributeDescription(name: "yes", type: .boolean, defaultValue: .bool(true)),
                AttributeDescription(
                    name: "date", type: .date, defaultValue: .date(Date(timeIntervalSinceReferenceDate: -978_307_200.25))),
                AttributeDescription(name: "uuid", type: .uuid, defaultValue: .uuid(UUID())),
                AttributeDescription(name: "uri", type: .uri, defaultValue: .uri(URL(string: "https://x.example/a?b=1&c=2")!)),
                AttributeDescription(name: "blob", type: .binary, allowsExternalBinaryDataStorage: true),
                AttributeDescription(name: "xf", type: .transformable, valueTransformerName: "NSSecureUnarchiveFromData"),
                AttributeDescription(name: "scratch", type: .undefined, isTransient: true),
                AttributeDescription(
                    name: "renamed", type: .string, renamingIdentifier: "old<name>", versionHashModifier: "v\"2\"",
                    userInfo: [awkward: awkward, "storesplit.key": "id"], isIndexed: true),
                AttributeDescription(name: "count", type: .integer64, derivationExpression: "things.@count"),
            ],
            fetchedProperties: [
                FetchedPropertyDescription(
                    name: "similar", destination: "Other",
                    predicate: #"name BEGINSWITH[cd] "x&y" AND size < $FETCH_SOURCE.i32 AND size > 0"#,
                    renamingIdentifier: "alike", versionHashModifier: "m", userInfo: ["k": "<v>"])
            ],
            renamingIdentifier: "OldThing", versionHashModifier: "entity-mod", userInfo: ["why": "because & so"],
            uniquenessConstraints: [["i16", "str"], ["uuid"]],
            indexes: [
                IndexDescription(
                    name: "mixed", elements: [.init(property: "i32", ascending: false), .init(property: "date")])
            ])
        let sub = EntityDescription(
            name: "SubThing", parent: "Thing",
            relationships: [
                RelationshipDescription(
                    name: "others", destination: "Other", inverse: "owner", isToMany: true, isOrdered: true, minCount: 1,
                    maxCount: 9, deleteRule: .deny, isOptional: false, renamingIdentifier: "friends",
                    versionHashModifier: "r", userInfo: ["a": "b"]),
                RelationshipDescription(name: "pal", destination: "Other", deleteRule: .noAction, isTransient: true),
            ])
        let other = EntityDescription(
            name: "Other",
            relationships: [
                RelationshipDescription(name: "owner", destination: "SubThing", inverse: "others", deleteRule: .cascade)
            ])
        let model = try ObjectModel(
            entities: [other, sub, thing],
            configurations: [
                ConfigurationDescription(
                    name: "Store", entityNames: ["Thing", "SubThing", "Other"],
                    userInfo: ["usedWithCloudKit": "YES", "note": awkward]),
                ConfigurationDescription(name: "Empty", entityNames: []),
            ],
            versionIdentifiers: ["v1 & more"])
        let xml = ModelWriter.xml(for: model)
        let reloaded = try ModelLoader.load(contentsXML: Data(xml.utf8), source: "written")
        #expect(reloaded == model)
        #expect(reloaded.versionHashes == model.versionHashes)
        // Xcode's own spellings.
        #expect(xml.contains(#"<configuration name="Store" usedWithCloudKit="YES">"#))
        #expect(xml.contains(#"defaultDateTimeInterval="-978307200.25""#))
        #expect(xml.contains(#"<attribute name="scratch" optional="YES" transient="YES"/>"#))
        #expect(xml.contains("&amp;") && xml.contains("&lt;") && xml.contains("&#10;"))
    }

    @Test func controlCharactersCannotBreakTheFile() throws {
        let entity = EntityDescription(name: "A", userInfo: ["bell": "ring\u{07}ring", "nul": "a\u{0}b"])
        let xml = ModelWriter.xml(for: try ObjectModel(entities: [entity]))
        let reloaded = try ModelLoader.load(contentsXML: Data(xml.utf8), source: "controls")
        // XML 1.0 cannot carry these at all; they become U+FFFD instead of an unreadable file.
        #expect(reloaded.entity(named: "A")?.userInfo == ["bell": "ring\u{FFFD}ring", "nul": "a\u{FFFD}b"])
    }

    @Test func unwritableDirectoryIsATypedError() throws {
        let dir = TemporaryDirectory()
        let blocker = dir.file("file")
        try Data("x".utf8).write(to: blocker)
        let model = try ObjectModel(entities: [EntityDescription(name: "A")])
        do {
            try ModelWriter.write(model, toDirectory: blocker)
            Issue.record("writing under a regular file should fail")
        } catch let error as ModelError {
            guard case let .unwritableFile(path, _) = error else {
                Issue.record("expected unwritableFile, got \(error)")
                return
            }
            #expect(path.hasPrefix(blocker.path))
            #expect(error.description.contains(blocker.path))
        }
    }
}

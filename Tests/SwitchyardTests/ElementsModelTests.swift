import Foundation
import Testing
import Switchyard

/// Issue #12 point 6: models in the pre-Xcode-4 binary format (`elements` keyed archive and `layout`, no
/// `contents`), alone and in a bundle next to XML versions; damaged or foreign files are errors naming the file.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage))
struct ElementsModelTests {
    static let restKit = "RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel"

    @Test func restKitTwitterModelLoads() throws {
        let model = try ModelLoader.load(at: Fixtures.url(Self.restKit))
        #expect(model.entities.map(\.name) == ["Tweet", "User"])
        let tweet = try #require(model.entity(named: "Tweet"))
        #expect(tweet.attributes.map(\.name) == ["createdAt", "inReplyToScreenName", "isFavorited", "statusID", "text", "urlString"])
        #expect(tweet.attribute(named: "createdAt")?.type == .date)
        #expect(tweet.attribute(named: "isFavorited")?.type == .boolean)
        #expect(tweet.attribute(named: "statusID")?.type == .integer64)
        #expect(tweet.attribute(named: "statusID")?.defaultValue == .integer(0))
        #expect(tweet.attribute(named: "text")?.type == .string && tweet.attribute(named: "text")?.isOptional == true)
        let user = try #require(tweet.relationship(named: "user"))
        #expect(user.destinationEntityName == "User" && user.inverseName == "status" && !user.isToMany)
        #expect(user.deleteRule == .nullify)
        let status = try #require(model.entity(named: "User")?.relationship(named: "status"))
        #expect(status.isToMany && status.inverseName == "user" && status.destinationEntityName == "Tweet")
        #expect(model.entitySources["Tweet"]?.hasSuffix("RKTwitterCoreData.xcdatamodel/elements") == true)
        // It opens the RestKit seed store it describes (written by framework 419, no model cache) as identical.
        let temp = TemporaryDirectory()
        let store = temp.file("RKSeedDatabase.sqlite")
        try FileManager.default.copyItem(
            at: Fixtures.url("RestKit__RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite"), to: store)
        let result = try StoreCompatibility.check(.sqlite, at: store, model: model, configuration: "Default")
        #expect(result.report.verdict == .identical)
    }

    /// A bundle with an `elements` version and an XML version: `.xccurrentversion` picks either.
    @Test(arguments: ["Old.xcdatamodel", "New.xcdatamodel"])
    func mixedBundleLoadsEitherVersion(current: String) throws {
        let temp = TemporaryDirectory()
        let bundle = temp.file("Twitter.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Fixtures.url(Self.restKit), to: bundle.appendingPathComponent("Old.xcdatamodel"))
        let new = bundle.appendingPathComponent("New.xcdatamodel")
        try FileManager.default.createDirectory(at: new, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Tweet"><attribute name="text" optional="YES" attributeType="String"/></entity>
            </model>
            """.utf8).write(to: new.appendingPathComponent("contents"))
        let marker = try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": current], format: .xml, options: 0)
        try marker.write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let model = try ModelLoader.load(at: bundle)
        #expect(model.entities.map(\.name) == (current == "Old.xcdatamodel" ? ["Tweet", "User"] : ["Tweet"]))
    }

    /// A truncated `elements` and a keyed archive of something else: typed errors naming the file and the problem.
    @Test func unreadableElementsNameTheFile() throws {
        let temp = TemporaryDirectory()
        let version = temp.file("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        let elements = version.appendingPathComponent("elements")
        let original = try Data(contentsOf: Fixtures.url(Self.restKit).appendingPathComponent("elements"))
        try original.prefix(original.count / 2).write(to: elements)
        #expect {
            try ModelLoader.load(at: version)
        } throws: { error in
            guard case ModelError.unreadableFile(let path, let reason) = error else { return false }
            return path == elements.path && reason.contains("keyed archive")
        }
        // `layout` (the diagram) is a keyed archive too, but not of a model.
        try FileManager.default.removeItem(at: elements)
        try FileManager.default.copyItem(at: Fixtures.url(Self.restKit).appendingPathComponent("layout"), to: elements)
        #expect {
            try ModelLoader.load(at: version)
        } throws: { error in
            guard case ModelError.unreadableFile(let path, let reason) = error else { return false }
            return path == elements.path && reason.contains("not an XDPMModel")
        }
        // Neither contents nor elements: the missing contents file is named.
        try FileManager.default.removeItem(at: elements)
        #expect(throws: ModelError.fileNotFound(path: version.appendingPathComponent("contents").path)) {
            try ModelLoader.load(at: version)
        }
    }
}

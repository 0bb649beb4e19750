import Foundation
import Switchyard
import Testing

/// Xcode mapping models (`.xcmappingmodel`) applied as a chain step. The files are built here to the format of
/// Xcode's `xcmapping.xml` (a Core Data XML store of XDDEV… objects; property values are keyed archives of
/// NSExpression, made by `Tools/fixtures/archive-expression.py`). Real ones from CoreStore's demo read the same
/// way (see README, "Migration chains").
@Suite struct MappingModelTests {
    /// `$source.name`
    static let sourceName = "YnBsaXN0MDDUAQIDBAUGNDdZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKpBwgTGB0iKi0xVSRudWxs1QkKCwwNDg8QERJWJGNsYXNzW05TQXJndW1lbnRzXxAQTlNFeHByZXNzaW9uVHlwZVlOU09wZXJhbmReTlNTZWxlY3Rvck5hbWWABYADEAOAAl8QEHZhbHVlRm9yS2V5UGF0aDrTCQsUFRYXWk5TVmFyaWFibGWABhACVnNvdXJjZdIJGRobWk5TLm9iamVjdHOAB6EcgATTCQseHyAhWU5TS2V5UGF0aIAIEApUbmFtZdIjJCUmWCRjbGFzc2VzWiRjbGFzc25hbWWkJicoKV8QE05TS2V5UGF0aEV4cHJlc3Npb25fEBROU0Z1bmN0aW9uRXhwcmVzc2lvblxOU0V4cHJlc3Npb25YTlNPYmplY3TSIyQrLKMsKClfEBROU1ZhcmlhYmxlRXhwcmVzc2lvbtIjJC4voy8wKV5OU011dGFibGVBcnJheVdOU0FycmF50iMkMjOjMygpXxAcTlNLZXlQYXRoU3BlY2lmaWVyRXhwcmVzc2lvbtE1NlRyb290gAESAAGGoAAIABEAGwAkACkAMgBEAE4AVABfAGYAcgCFAI8AngCgAKIApACmALkAwADLAM0AzwDWANsA5gDoAOoA7ADzAP0A/wEBAQYBCwEUAR8BJAE6AVEBXgFnAWwBcAGHAYwBkAGfAacBrAGwAc8B0gHXAdkAAAAAAAACAQAAAAAAAAA4AAAAAAAAAAAAAAAAAAAB3g=="
    /// The constant "imported"
    static let importedConstant = "YnBsaXN0MDDUAQIDBAUGFhlZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKjBwgPVSRudWxs0wkKCwwNDlYkY2xhc3NfEA9OU0NvbnN0YW50VmFsdWVfEBBOU0V4cHJlc3Npb25UeXBlgAJYaW1wb3J0ZWQQANIQERITWCRjbGFzc2VzWiRjbGFzc25hbWWjExQVXxAZTlNDb25zdGFudFZhbHVlRXhwcmVzc2lvblxOU0V4cHJlc3Npb25YTlNPYmplY3TRFxhUcm9vdIABEgABhqAIERskKTJESE5VXG6Bg4yOk5ynq8fU3eDl5wAAAAAAAAEBAAAAAAAAABoAAAAAAAAAAAAAAAAAAADs"
    /// `$manager.thing`: not a $source key path
    static let managerThing = "YnBsaXN0MDDUAQIDBAUGNDdZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKpBwgTGB0iKi0xVSRudWxs1QkKCwwNDg8QERJWJGNsYXNzW05TQXJndW1lbnRzXxAQTlNFeHByZXNzaW9uVHlwZVlOU09wZXJhbmReTlNTZWxlY3Rvck5hbWWABYADEAOAAl8QEHZhbHVlRm9yS2V5UGF0aDrTCQsUFRYXWk5TVmFyaWFibGWABhACV21hbmFnZXLSCRkaG1pOUy5vYmplY3RzgAehHIAE0wkLHh8gIVlOU0tleVBhdGiACBAKVXRoaW5n0iMkJSZYJGNsYXNzZXNaJGNsYXNzbmFtZaQmJygpXxATTlNLZXlQYXRoRXhwcmVzc2lvbl8QFE5TRnVuY3Rpb25FeHByZXNzaW9uXE5TRXhwcmVzc2lvblhOU09iamVjdNIjJCssoywoKV8QFE5TVmFyaWFibGVFeHByZXNzaW9u0iMkLi+jLzApXk5TTXV0YWJsZUFycmF5V05TQXJyYXnSIyQyM6MzKClfEBxOU0tleVBhdGhTcGVjaWZpZXJFeHByZXNzaW9u0TU2VHJvb3SAARIAAYagAAgAEQAbACQAKQAyAEQATgBUAF8AZgByAIUAjwCeAKAAogCkAKYAuQDAAMsAzQDPANcA3ADnAOkA6wDtAPQA/gEAAQIBCAENARYBIQEmATwBUwFgAWkBbgFyAYkBjgGSAaEBqQGuAbIB0QHUAdkB2wAAAAAAAAIBAAAAAAAAADgAAAAAAAAAAAAAAAAAAAHg"

    static func xml(entityAttributes: String = "", attributeMappings: [(String, String?)]) -> String {
        var objects = ""
        var ids: [String] = []
        for (index, (name, expression)) in attributeMappings.enumerated() {
            let id = "z\(200 + index)"
            ids.append(id)
            objects += """
                <object type="XDDEVATTRIBUTEMAPPING" id="\(id)">
                    \(expression.map { "<attribute name=\"valueexpressiondata\" type=\"binary\">\($0)</attribute>" } ?? "")
                    <attribute name="name" type="string">\(name)</attribute>
                    <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
                </object>

            """
        }
        return """
            <?xml version="1.0" standalone="yes"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
            <database>
                <databaseInfo><version>134481920</version></databaseInfo>
                <object type="XDDEVENTITYMAPPING" id="z102">
                    \(entityAttributes)
                    <attribute name="sourcename" type="string">Person</attribute>
                    <attribute name="mappingtypename" type="string">Undefined</attribute>
                    <attribute name="mappingnumber" type="int16">1</attribute>
                    <attribute name="destinationname" type="string">Person</attribute>
                    <attribute name="autogenerateexpression" type="bool">1</attribute>
                    <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z105"></relationship>
                    <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="\(ids.joined(separator: " "))"></relationship>
                    <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING"></relationship>
                </object>
            \(objects)    <object type="XDDEVMAPPINGMODEL" id="z105">
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
                </object>
            </database>
            """
    }

    static func person(_ attributes: [AttributeDescription]) throws -> ObjectModel {
        try ObjectModel(
            entities: [EntityDescription(name: "Person", attributes: attributes)],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Person"])])
    }

    @Test(arguments: Backend.persistent)
    func aMappingModelRenamesAndFillsAttributes(_ backend: Backend) throws {
        let dir = try TempDir()
        let v1 = try Self.person([AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .integer64)])
        let v2 = try Self.person([
            AttributeDescription(name: "displayName", type: .string, isOptional: false),
            AttributeDescription(name: "origin", type: .string),
            AttributeDescription(name: "age", type: .integer64),
        ])
        do {
            let coordinator = StoreCoordinator(model: v1)
            try backend.add(to: coordinator, configuration: "Main", in: dir.url)
            let context = ObjectContext(coordinator: coordinator)
            for i in 0..<25 {
                let person = try context.insert("Person")
                try person.set("name", "P\(i)")
                try person.set("age", Int64(i))
            }
            try context.save()
        }
        let bundle = dir.url.appendingPathComponent("V1ToV2.xcmappingmodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Self.xml(attributeMappings: [("displayName", Self.sourceName), ("origin", Self.importedConstant), ("age", nil)])
            .write(to: bundle.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
        let mapping = try MappingModel.load(at: bundle)
        #expect(mapping.entityMappings.map(\.name) == ["PersonToPerson"])
        #expect(mapping.entityMappings.first?.attributes["displayName"] == .source("name"))

        var chain = try MigrationChain(versions: [ModelVersion(name: "V1", model: v1), ModelVersion(name: "V2", model: v2)])
        try chain.setCustomStep(to: "V2", CustomMigration(mappingModel: mapping, batchSize: 10))
        let coordinator = StoreCoordinator(model: v2)
        try coordinator.setMigrationChain(chain)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let people = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Person", sortKeys: [SortKey("age")]))
        #expect(people.count == 25)
        #expect(try people.map { try $0.get("displayName", as: String.self) } == (0..<25).map { "P\($0)" })
        #expect(try people.allSatisfy { try $0.get("origin", as: String.self) == "imported" })
        #expect(try people.last?.get("age", as: Int64.self) == 24)
    }

    /// What only Core Data's runtime can apply is refused when the file is read, naming the file and the mapping.
    @Test func unsupportedMappingsAreRefusedWithTheMappingNamed() throws {
        let cases: [(String, String)] = [
            (Self.xml(
                entityAttributes: #"<attribute name="migrationpolicyclassname" type="string">MyPolicy</attribute>"#,
                attributeMappings: [("displayName", Self.sourceName)]), "MyPolicy"),
            (Self.xml(
                entityAttributes: #"<attribute name="sourcefilterpredicatestring" type="string">age > 3</attribute>"#,
                attributeMappings: []), "age > 3"),
            (Self.xml(attributeMappings: [("displayName", Self.managerThing)]), "$manager.thing"),
            (Self.xml(attributeMappings: [("displayName", "bm90IGFuIGFyY2hpdmU=")]), "displayName"),
        ]
        for (xml, detail) in cases {
            #expect {
                try MappingModel.load(xml: Data(xml.utf8), source: "Test.xcmappingmodel/xcmapping.xml")
            } throws: { error in
                let text = error.localizedDescription
                return text.contains("Test.xcmappingmodel") && text.contains("PersonToPerson") && text.contains(detail)
            }
        }
        #expect(throws: ModelError.self) { try MappingModel.load(xml: Data("<database><object".utf8), source: "broken.xml") }
        #expect(throws: ModelError.self) { try MappingModel.load(xml: Data("<database></database>".utf8), source: "empty.xml") }
    }
}

import Foundation
import Testing
import Switchyard

/// Issue #12 point 4: a many-to-many's join table is named after one of its ends. Core Data names it after the
/// lower-numbered entity's end (every join table in the fixtures: `Z_8REPOSITORIES`, `Z_9INTEGRATIONS`,
/// `Z_9DEVICESPECIFICATIONS`, `Z_1BOOKS`, `Z_2CREATEDENTRIES`, `Z_3CATEGORYINVERSE`), but for two relationships
/// of one entity its choice is not alphabetical (`Z_2BLOCKING(Z_2BLOCKEDBY, Z_2BLOCKING)`). Opening uses the
/// names the store has; a split keeps them.
@Suite(.enabled(if: SQLite3.available, "needs the sqlite3 CLI to rename a join table as Core Data names it"))
struct JoinTableNameTests {
    /// Person.blocking <<->> Person.blockedBy: both ends on entity 1, so the model's rule names the table after
    /// `blockedBy` (alphabetical), where Core Data named it after `blocking`.
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(
                name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "blockedBy", destination: "Person", inverse: "blocking", isToMany: true),
                    RelationshipDescription(name: "blocking", destination: "Person", inverse: "blockedBy", isToMany: true),
                ])
        ])
    }

    static func tables(_ path: String) throws -> [String] {
        try SQLite3.query(path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' "
            + "AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE') ORDER BY name").split(separator: "\n").map(String.init)
    }

    /// Who blocks whom, read through a context: name -> sorted names it blocks.
    static func blocking(_ url: URL, type: StoreType, model: ObjectModel) throws -> [String: [String]] {
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(type, configuration: "Default", at: url)
        let context = ObjectContext(coordinator: coordinator)
        var result: [String: [String]] = [:]
        for person in try context.fetch(FetchRequest(entityName: "Person")) {
            let name = try #require(try person.get("name", as: String.self))
            result[name] = try person.relatedObjects(forKey: "blocking").map { try $0.get("name", as: String.self) ?? "" }.sorted()
        }
        return result
    }

    @Test(arguments: [StoreType.sqlite, .lmdb])
    func storeNamesAreUsedAndKeptBySplit(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let model = try Self.model()
        let url = temp.file("People.sqlite")
        do {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url)
            let context = ObjectContext(coordinator: coordinator)
            let people = try ["ann", "bob", "cy", "di"].map { name -> ManagedObject in
                let person = try context.insert("Person")
                try person.set("name", name)
                return person
            }
            try people[0].setRelatedObjects([people[1], people[2]], forKey: "blocking")
            try people[3].setRelatedObjects([people[0]], forKey: "blocking")
            try context.save()
        }
        let expected = ["ann": ["bob", "cy"], "bob": [], "cy": [], "di": ["ann"]]
        #expect(try Self.tables(url.path) == ["Z_1BLOCKEDBY"])
        // Core Data's name for the same table: after the other end; the columns are the same.
        try SQLite3.execute(url.path, "ALTER TABLE Z_1BLOCKEDBY RENAME TO Z_1BLOCKING")
        #expect(try Self.blocking(url, type: .sqlite, model: model) == expected)

        let output = SplitDestination(
            configuration: "Default", url: temp.file("Out.\(outputType == .lmdb ? "lmdb" : "sqlite")"), type: outputType)
        let splitter = try StoreSplitter(source: url, targetModel: model, destinations: [output])
        let report = try splitter.run(try splitter.plan(), options: SplitOptions(verifyContent: true))
        #expect(report.outputs[0].links.map(\.links) == [3])
        if outputType == .sqlite {
            #expect(try Self.tables(output.url.path) == ["Z_1BLOCKING"])
            #expect(try SQLite3.query(output.url.path, "SELECT COUNT(*) FROM Z_1BLOCKING") == "3")
        }
        #expect(try Self.blocking(output.url, type: outputType, model: model) == expected)
    }
}

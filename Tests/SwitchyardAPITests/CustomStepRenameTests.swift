import Foundation
import Switchyard
import SwitchyardPostgreSQL
import Testing

/// A custom migration step's default copy of entities and attributes renamed in a chain or swapped: it copies into
/// a new store, so it follows the renaming identifiers, as Core Data and `storesplit` do (an inferred migration in
/// place refuses such a change; see `EntityRenameChainTests`). Matched by name first, the new `B` took the old
/// `B`'s rows and the new `C` took them too, and the old `A`'s rows were lost.
@Suite struct CustomStepRenameTests {
    private static func entity(_ name: String, was old: String? = nil, attributes: [AttributeDescription]? = nil) -> EntityDescription {
        EntityDescription(name: name, attributes: attributes ?? [AttributeDescription(name: "value", type: .string)], renamingIdentifier: old)
    }

    private static func model(_ entities: [EntityDescription]) throws -> ObjectModel {
        try ObjectModel(entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    /// V1: A, B, X, Y (a `value` each) and P (`first`, `second`, `kept`).
    static func v1() throws -> ObjectModel {
        try model([
            entity("A"), entity("B"), entity("X"), entity("Y"),
            entity("P", attributes: ["first", "second", "kept"].map { AttributeDescription(name: $0, type: .string) }),
        ])
    }

    /// V2: A became B and B became C (a chain), X and Y traded names (a swap), P's `first` became `second` and
    /// `second` became `third` while `kept` keeps an identifier naming no V1 attribute.
    static func v2() throws -> ObjectModel {
        try model([
            entity("B", was: "A"), entity("C", was: "B"), entity("X", was: "Y"), entity("Y", was: "X"),
            entity("P", attributes: [
                AttributeDescription(name: "second", type: .string, renamingIdentifier: "first"),
                AttributeDescription(name: "third", type: .string, renamingIdentifier: "second"),
                AttributeDescription(name: "kept", type: .string, renamingIdentifier: "older"),
            ]),
        ])
    }

    @Test(arguments: MigrationChainTests.persistent)
    func aCustomStepsDefaultCopyFollowsChainedAndSwappedRenames(_ backend: Backend) async throws {
        let dir = try TempDir()
        let url = try MigrationChainTests.url(backend, in: dir)
        do {
            let coordinator = StoreCoordinator(model: try Self.v1())
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            for (entity, values) in [("A", ["a1", "a2"]), ("B", ["b1"]), ("X", ["x1"]), ("Y", ["y1", "y2", "y3"])] {
                for value in values { try context.insert(entity).set("value", value) }
            }
            let p = try context.insert("P")
            try p.set("first", "1st")
            try p.set("second", "2nd")
            try p.set("kept", "k")
            try context.save()
            for store in coordinator.stores { try coordinator.removeStore(store) }
        }
        var chain = try MigrationChain(versions: [ModelVersion(name: "V1", model: try Self.v1()), ModelVersion(name: "V2", model: try Self.v2())])
        // No transform: every entity takes the default copy.
        try chain.setCustomStep(to: "V2", CustomMigration(batchSize: 2))
        let coordinator = StoreCoordinator(model: try Self.v2())
        try coordinator.setMigrationChain(chain)
        let results = await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)])
        _ = try results.get()
        let context = ObjectContext(coordinator: coordinator)
        func values(_ entity: String) throws -> [String] {
            try context.fetch(FetchRequest(entityName: entity)).map { try $0.get("value", as: String.self) ?? "nil" }.sorted()
        }
        #expect(try values("B") == ["a1", "a2"])
        #expect(try values("C") == ["b1"])
        #expect(try values("X") == ["y1", "y2", "y3"])
        #expect(try values("Y") == ["x1"])
        let p = try #require(try context.fetch(FetchRequest(entityName: "P")).first)
        #expect(try p.get("second", as: String.self) == "1st")
        #expect(try p.get("third", as: String.self) == "2nd")
        #expect(try p.get("kept", as: String.self) == "k")
    }

    /// A kept identifier whose name was renamed away is a chain: V1 `Person` (was `Employee`) beside a new
    /// `Employee`, to V2 where `Employee` becomes `Person` (was `Employee`) and `Person` becomes `Human` (was
    /// `Person`). By name first, both new entities took the old `Person`'s rows and `Employee`'s were lost.
    @Test(arguments: MigrationChainTests.persistent)
    func aKeptIdentifiersNameRenamedAwayIsAChain(_ backend: Backend) async throws {
        let dir = try TempDir()
        let url = try MigrationChainTests.url(backend, in: dir)
        let v1 = try Self.model([Self.entity("Person", was: "Employee"), Self.entity("Employee")])
        let v2 = try Self.model([Self.entity("Person", was: "Employee"), Self.entity("Human", was: "Person")])
        do {
            let coordinator = StoreCoordinator(model: v1)
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            for (entity, values) in [("Person", ["p1", "p2"]), ("Employee", ["e1"])] {
                for value in values { try context.insert(entity).set("value", value) }
            }
            try context.save()
            for store in coordinator.stores { try coordinator.removeStore(store) }
        }
        var chain = try MigrationChain(versions: [ModelVersion(name: "V1", model: v1), ModelVersion(name: "V2", model: v2)])
        try chain.setCustomStep(to: "V2", CustomMigration(batchSize: 2))
        let coordinator = StoreCoordinator(model: v2)
        try coordinator.setMigrationChain(chain)
        _ = try await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)]).get()
        let context = ObjectContext(coordinator: coordinator)
        func values(_ entity: String) throws -> [String] {
            try context.fetch(FetchRequest(entityName: entity)).map { try $0.get("value", as: String.self) ?? "nil" }.sorted()
        }
        #expect(try values("Person") == ["e1"])
        #expect(try values("Human") == ["p1", "p2"])
    }

    /// A step to a version that keeps the identifiers of an earlier swap (`X` was `Y`, `Y` was `X`; `first` was
    /// `last`, `last` was `first`) and only adds an attribute: every entity and attribute is its own source. The
    /// identifiers alone swapped them back (a second reviewer's case).
    @Test(arguments: MigrationChainTests.persistent)
    func aStepKeepingARecordedSwapCopiesEveryElementToItself(_ backend: Backend) async throws {
        let dir = try TempDir()
        let url = try MigrationChainTests.url(backend, in: dir)
        func model(extra: Bool) throws -> ObjectModel {
            var person = [
                AttributeDescription(name: "first", type: .string, renamingIdentifier: "last"),
                AttributeDescription(name: "last", type: .string, renamingIdentifier: "first"),
            ]
            if extra { person.append(AttributeDescription(name: "note", type: .string)) }
            return try Self.model([Self.entity("X", was: "Y"), Self.entity("Y", was: "X"), Self.entity("P", attributes: person)])
        }
        let v2 = try model(extra: false), v3 = try model(extra: true)
        do {
            let coordinator = StoreCoordinator(model: v2)
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            try context.insert("X").set("value", "x1")
            try context.insert("Y").set("value", "y1")
            let p = try context.insert("P")
            try p.set("first", "Ada")
            try p.set("last", "Lovelace")
            try context.save()
            for store in coordinator.stores { try coordinator.removeStore(store) }
        }
        var chain = try MigrationChain(versions: [ModelVersion(name: "V2", model: v2), ModelVersion(name: "V3", model: v3)])
        try chain.setCustomStep(to: "V3", CustomMigration(batchSize: 2))
        let coordinator = StoreCoordinator(model: v3)
        try coordinator.setMigrationChain(chain)
        _ = try await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)]).get()
        let context = ObjectContext(coordinator: coordinator)
        #expect(try context.fetch(FetchRequest(entityName: "X")).map { try $0.get("value", as: String.self) } == ["x1"])
        #expect(try context.fetch(FetchRequest(entityName: "Y")).map { try $0.get("value", as: String.self) } == ["y1"])
        let p = try #require(try context.fetch(FetchRequest(entityName: "P")).first)
        #expect(try p.get("first", as: String.self) == "Ada")
        #expect(try p.get("last", as: String.self) == "Lovelace")
    }

    /// A step that renames `Employee` to `Person` (was `Employee`) and its `name` to `fullName` (was `name`), beside
    /// a new `Employee` and a new `name` taking the old names: the renamed ones continue the old ones.
    @Test(arguments: MigrationChainTests.persistent)
    func aRenameBesideANewEntityTakingTheOldNameMovesTheRows(_ backend: Backend) async throws {
        let dir = try TempDir()
        let url = try MigrationChainTests.url(backend, in: dir)
        let v1 = try Self.model([Self.entity("Employee", attributes: [AttributeDescription(name: "name", type: .string)])])
        let v2 = try Self.model([
            Self.entity("Person", was: "Employee", attributes: [
                AttributeDescription(name: "fullName", type: .string, renamingIdentifier: "name"),
                AttributeDescription(name: "name", type: .string),
            ]),
            Self.entity("Employee", attributes: [AttributeDescription(name: "title", type: .string)]),
        ])
        do {
            let coordinator = StoreCoordinator(model: v1)
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            for name in ["Ada", "Bo"] { try context.insert("Employee").set("name", name) }
            try context.save()
            for store in coordinator.stores { try coordinator.removeStore(store) }
        }
        var chain = try MigrationChain(versions: [ModelVersion(name: "V1", model: v1), ModelVersion(name: "V2", model: v2)])
        try chain.setCustomStep(to: "V2", CustomMigration(batchSize: 2))
        let coordinator = StoreCoordinator(model: v2)
        try coordinator.setMigrationChain(chain)
        _ = try await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)]).get()
        let context = ObjectContext(coordinator: coordinator)
        let people = try context.fetch(FetchRequest(entityName: "Person"))
        #expect(try people.map { try $0.get("fullName", as: String.self) ?? "nil" }.sorted() == ["Ada", "Bo"])
        #expect(try people.allSatisfy { try $0.get("name", as: String.self) == nil })
        #expect(try context.count(FetchRequest(entityName: "Employee")) == 0)
    }
}

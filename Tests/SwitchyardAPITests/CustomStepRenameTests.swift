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

    /// Saves `objects` (an entity and its attribute values each) into a new store through `old`, then reaches `new`
    /// through a custom step with no transform (every entity takes the default copy): a context on the result.
    private static func migrate(
        _ backend: Backend, in dir: TempDir, from old: ObjectModel, to new: ObjectModel, objects: [(String, [String: String])]
    ) async throws -> ObjectContext {
        let url = try MigrationChainTests.url(backend, in: dir)
        do {
            let coordinator = StoreCoordinator(model: old)
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            for (entity, values) in objects {
                let object = try context.insert(entity)
                for (key, value) in values { try object.set(key, value) }
            }
            try context.save()
            for store in coordinator.stores { try coordinator.removeStore(store) }
        }
        var chain = try MigrationChain(versions: [ModelVersion(name: "Old", model: old), ModelVersion(name: "New", model: new)])
        try chain.setCustomStep(to: "New", CustomMigration(batchSize: 2))
        let coordinator = StoreCoordinator(model: new)
        try coordinator.setMigrationChain(chain)
        _ = try await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)]).get()
        return ObjectContext(coordinator: coordinator)
    }

    /// The sorted values of `attribute` over `entity`'s objects ("nil" for none).
    private static func values(_ entity: String, _ attribute: String = "value", in context: ObjectContext) throws -> [String] {
        try context.fetch(FetchRequest(entityName: entity)).map { try $0.get(attribute, as: String.self) ?? "nil" }.sorted()
    }

    @Test(arguments: MigrationChainTests.persistent)
    func aCustomStepsDefaultCopyFollowsChainedAndSwappedRenames(_ backend: Backend) async throws {
        let dir = try TempDir()
        let objects = [("A", "a1"), ("A", "a2"), ("B", "b1"), ("X", "x1"), ("Y", "y1"), ("Y", "y2"), ("Y", "y3")].map { ($0.0, ["value": $0.1]) }
            + [("P", ["first": "1st", "second": "2nd", "kept": "k"])]
        let context = try await Self.migrate(backend, in: dir, from: try Self.v1(), to: try Self.v2(), objects: objects)
        #expect(try Self.values("B", in: context) == ["a1", "a2"])
        #expect(try Self.values("C", in: context) == ["b1"])
        #expect(try Self.values("X", in: context) == ["y1", "y2", "y3"])
        #expect(try Self.values("Y", in: context) == ["x1"])
        #expect(try Self.values("P", "second", in: context) == ["1st"])
        #expect(try Self.values("P", "third", in: context) == ["2nd"])
        #expect(try Self.values("P", "kept", in: context) == ["k"])
    }

    /// A kept identifier whose name was renamed away is a chain: V1 `Person` (was `Employee`) beside a new
    /// `Employee`, to V2 where `Employee` becomes `Person` (was `Employee`) and `Person` becomes `Human` (was
    /// `Person`). By name first, both new entities took the old `Person`'s rows and `Employee`'s were lost.
    @Test(arguments: MigrationChainTests.persistent)
    func aKeptIdentifiersNameRenamedAwayIsAChain(_ backend: Backend) async throws {
        let dir = try TempDir()
        let v1 = try Self.model([Self.entity("Person", was: "Employee"), Self.entity("Employee")])
        let v2 = try Self.model([Self.entity("Person", was: "Employee"), Self.entity("Human", was: "Person")])
        let objects = [("Person", "p1"), ("Person", "p2"), ("Employee", "e1")].map { ($0.0, ["value": $0.1]) }
        let context = try await Self.migrate(backend, in: dir, from: v1, to: v2, objects: objects)
        #expect(try Self.values("Person", in: context) == ["e1"])
        #expect(try Self.values("Human", in: context) == ["p1", "p2"])
    }

    /// A step to a version that keeps the identifiers of an earlier swap (`X` was `Y`, `Y` was `X`; `first` was
    /// `last`, `last` was `first`) and only adds an attribute: every entity and attribute is its own source. The
    /// identifiers alone swapped them back (a second reviewer's case).
    @Test(arguments: MigrationChainTests.persistent)
    func aStepKeepingARecordedSwapCopiesEveryElementToItself(_ backend: Backend) async throws {
        let dir = try TempDir()
        func model(extra: Bool) throws -> ObjectModel {
            var person = [
                AttributeDescription(name: "first", type: .string, renamingIdentifier: "last"),
                AttributeDescription(name: "last", type: .string, renamingIdentifier: "first"),
            ]
            if extra { person.append(AttributeDescription(name: "note", type: .string)) }
            return try Self.model([Self.entity("X", was: "Y"), Self.entity("Y", was: "X"), Self.entity("P", attributes: person)])
        }
        let objects = [("X", ["value": "x1"]), ("Y", ["value": "y1"]), ("P", ["first": "Ada", "last": "Lovelace"])]
        let context = try await Self.migrate(backend, in: dir, from: try model(extra: false), to: try model(extra: true), objects: objects)
        #expect(try Self.values("X", in: context) == ["x1"])
        #expect(try Self.values("Y", in: context) == ["y1"])
        #expect(try Self.values("P", "first", in: context) == ["Ada"])
        #expect(try Self.values("P", "last", in: context) == ["Lovelace"])
    }

    /// A step that renames `Employee` to `Person` (was `Employee`) and its `name` to `fullName` (was `name`), beside
    /// a new `Employee` and a new `name` taking the old names: the renamed ones continue the old ones.
    @Test(arguments: MigrationChainTests.persistent)
    func aRenameBesideANewEntityTakingTheOldNameMovesTheRows(_ backend: Backend) async throws {
        let dir = try TempDir()
        let v1 = try Self.model([Self.entity("Employee", attributes: [AttributeDescription(name: "name", type: .string)])])
        let v2 = try Self.model([
            Self.entity("Person", was: "Employee", attributes: [
                AttributeDescription(name: "fullName", type: .string, renamingIdentifier: "name"),
                AttributeDescription(name: "name", type: .string),
            ]),
            Self.entity("Employee", attributes: [AttributeDescription(name: "title", type: .string)]),
        ])
        let context = try await Self.migrate(backend, in: dir, from: v1, to: v2, objects: [("Employee", ["name": "Ada"]), ("Employee", ["name": "Bo"])])
        #expect(try Self.values("Person", "fullName", in: context) == ["Ada", "Bo"])
        #expect(try Self.values("Person", "name", in: context) == ["nil", "nil"])
        #expect(try context.count(FetchRequest(entityName: "Employee")) == 0)
    }
}

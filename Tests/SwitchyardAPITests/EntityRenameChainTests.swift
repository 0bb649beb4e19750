import Foundation
import Switchyard
import Testing

/// Entities renamed in a chain (the new `E2` was `E1`, the new `E3` was `E2`, ...) or swapped (`A` and `B`
/// trade names) in one model change. Core Data matches entities by renaming identifier; matched by name, each
/// row stayed with the entity of its old name, the attributes that moved read nil, and on LMDB the renames were
/// applied in the order a dictionary gave (rows of one entity could go to another). Such a store is refused with
/// a clear error when added, and left as it was.
@Suite struct EntityRenameChainTests {
    /// One string attribute per entity, named after the entity's first name, so rows show where they came from.
    private static func entity(_ name: String, attribute: String, was old: String? = nil) -> EntityDescription {
        EntityDescription(
            name: name, attributes: [AttributeDescription(name: attribute, type: .string)], renamingIdentifier: old)
    }

    private static func model(_ entities: [EntityDescription]) throws -> ObjectModel {
        try ObjectModel(entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    /// For each entity of `model`, the sorted values of its one attribute in the store in `dir`.
    private static func contents(_ backend: Backend, in dir: TempDir, model entities: [EntityDescription]) throws -> [String: [String]] {
        let coordinator = try backend.coordinator(model(entities), in: dir)
        defer { for store in coordinator.stores { try? coordinator.removeStore(store) } }
        let context = ObjectContext(coordinator: coordinator)
        var found: [String: [String]] = [:]
        for entity in entities {
            let attribute = entity.attributes[0].name
            found[entity.name] = try context.fetch(FetchRequest(entityName: entity.name))
                .map { try $0.get(attribute, as: String.self) ?? "(nil)" }.sorted()
        }
        return found
    }

    /// Saves `rows` (by entity, values of its one attribute) into the store in `dir` through `entities`' model,
    /// then closes it.
    private static func save(_ backend: Backend, in dir: TempDir, model entities: [EntityDescription], rows: [String: [String]]) throws {
        let coordinator = try backend.coordinator(model(entities), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for entity in entities {
            for value in rows[entity.name] ?? [] { try context.insert(entity.name).set(entity.attributes[0].name, value) }
        }
        try context.save()
        for store in coordinator.stores { try coordinator.removeStore(store) }
    }

    /// Saves `rows` (by entity, values of its one attribute) with `old`, then adds the store with `renamed`:
    /// refused as an incompatible model naming the renaming identifier, and `old` still reads every row.
    private static func expectRefused(
        _ backend: Backend, old: [EntityDescription], rows: [String: [String]], renamed: [EntityDescription]
    ) throws {
        let dir = try TempDir()
        try save(backend, in: dir, model: old, rows: rows)
        let coordinator = StoreCoordinator(model: try model(renamed))
        let error = #expect(throws: StoreError.self) { try backend.add(to: coordinator, configuration: "Main", in: dir.url) }
        guard case .incompatibleModel? = error else {
            Issue.record("\(backend): expected incompatibleModel, got \(String(describing: error))")
            return
        }
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("renaming identifier") && message.contains("chain or swapped"), "\(backend): \(message)")
        // Nor is it read through the new model read-only (which would show each row under its old entity's name).
        #expect(throws: StoreError.self, "\(backend): opened read-only") {
            try backend.add(to: StoreCoordinator(model: try model(renamed)), configuration: "Main", in: dir.url, options: .readOnly)
        }
        #expect(try contents(backend, in: dir, model: old) == rows.mapValues { $0.sorted() }, "\(backend): the store changed")
    }

    /// E1..E5 become E2..E6 (each new E(k+1) was E(k), with its attribute and rows).
    @Test(arguments: Backend.persistent)
    func aChainOfRenamesIsRefusedAndTheStoreKept(_ backend: Backend) throws {
        let names = ["E1", "E2", "E3", "E4", "E5"]
        try Self.expectRefused(
            backend, old: names.map { Self.entity($0, attribute: "v" + $0) },
            rows: Dictionary(uniqueKeysWithValues: names.map { ($0, ["\($0)-1", "\($0)-2"]) }),
            renamed: names.enumerated().map { k, name in Self.entity("E\(k + 2)", attribute: "v" + name, was: name) })
    }

    /// A and B trade names.
    @Test(arguments: Backend.persistent)
    func twoEntitiesTradingNamesAreRefusedAndTheStoreKept(_ backend: Backend) throws {
        try Self.expectRefused(
            backend, old: [Self.entity("A", attribute: "fromA"), Self.entity("B", attribute: "fromB")],
            rows: ["A": ["a1", "a2"], "B": ["b1"]],
            renamed: [Self.entity("A", attribute: "fromB", was: "B"), Self.entity("B", attribute: "fromA", was: "A")])
    }

    /// An entity that keeps the renaming identifier of an earlier rename (`Person`, once `Employee`) beside a new
    /// entity that reuses the old name is no chain: the store opens with its own model, and a store written
    /// before the new `Employee` existed migrates to it, its persons kept.
    @Test(arguments: Backend.persistent)
    func aKeptRenamingIdentifierBesideAnEntityReusingTheNameOpens(_ backend: Backend) throws {
        let dir = try TempDir()
        let v2 = [Self.entity("Person", attribute: "name", was: "Employee")]
        let v4 = v2 + [Self.entity("Employee", attribute: "badge")]
        try Self.save(backend, in: dir, model: v2, rows: ["Person": ["ann"]])
        try Self.save(backend, in: dir, model: v4, rows: ["Employee": ["b7"]])
        // Written by v4 and opened by v4 (writable, then read-only): the same model, nothing to migrate; and by
        // v4 with another version hash modifier (hashes differ, as a Core Data store's always do from ours, so
        // the models are compared entity by entity).
        #expect(try Self.contents(backend, in: dir, model: v4) == ["Person": ["ann"], "Employee": ["b7"]])
        var rehashed = v4
        rehashed[0].versionHashModifier = "2"
        #expect(try Self.contents(backend, in: dir, model: rehashed) == ["Person": ["ann"], "Employee": ["b7"]])
        let readOnly = StoreCoordinator(model: try Self.model(rehashed))
        try backend.add(to: readOnly, configuration: "Main", in: dir.url, options: .readOnly)
        #expect(try ObjectContext(coordinator: readOnly).count(FetchRequest(entityName: "Person")) == 1)
    }

    /// The last link of a chain alone (E5 renamed to E6, no entity E6 in the store) still migrates: its rows
    /// move, and the others stay.
    @Test(arguments: Backend.persistent)
    func aRenameToAFreeNameStillMigrates(_ backend: Backend) throws {
        let dir = try TempDir()
        let old = [Self.entity("E4", attribute: "vE4"), Self.entity("E5", attribute: "vE5")]
        try Self.save(backend, in: dir, model: old, rows: ["E4": ["e4"], "E5": ["e5"]])
        let renamed = [Self.entity("E4", attribute: "vE4"), Self.entity("E6", attribute: "vE5", was: "E5")]
        #expect(try Self.contents(backend, in: dir, model: renamed) == ["E4": ["e4"], "E6": ["e5"]])
    }
}

import Foundation
import Switchyard
import Testing

/// A split whose target model gives two entities that were inheritance roots a common parent: their objects
/// then share the parent's one primary-key sequence (one table), and a split keeps every object's key. Where the
/// two roots' keys overlap, planning refuses it (so `--dry-run` does too) instead of the copy stopping at the
/// first clash; where they do not, the split goes through. Through `StoreSplitter`'s public API.
@Suite struct SplitMergedHierarchyTests {
    static let pairs: [(source: StoreType, destination: StoreType)] = [(.sqlite, .sqlite), (.sqlite, .lmdb), (.lmdb, .sqlite)]

    /// The legacy model: `Cat` and `Dog`, each its own root.
    static func legacyModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Cat", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "Dog", attributes: [AttributeDescription(name: "name", type: .string)]),
        ])
    }

    /// The target: both under `Animal`; in one configuration, or each in its own.
    static func targetModel(separateConfigurations: Bool) throws -> ObjectModel {
        try ObjectModel(
            entities: [
                EntityDescription(name: "Animal", attributes: [AttributeDescription(name: "name", type: .string)]),
                EntityDescription(name: "Cat", parent: "Animal"),
                EntityDescription(name: "Dog", parent: "Animal"),
            ],
            configurations: separateConfigurations
                ? [ConfigurationDescription(name: "Cats", entityNames: ["Animal", "Cat"]), ConfigurationDescription(name: "Dogs", entityNames: ["Dog"])]
                : [ConfigurationDescription(name: "Pets", entityNames: ["Animal", "Cat", "Dog"])])
    }

    /// A legacy store of `kind` with two cats and the given dogs; `retiredDogs` dogs are saved and deleted first,
    /// so the kept dogs' keys start after theirs.
    static func legacyStore(_ kind: StoreType, in dir: TempDir, dogs: [String], retiredDogs: Int = 0) throws -> URL {
        let url = dir.url.appendingPathComponent(kind == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        let coordinator = StoreCoordinator(model: try legacyModel())
        let store = try coordinator.addStore(kind, configuration: ConfigurationDescription.defaultName, at: url)
        defer { try? coordinator.removeStore(store) }
        let context = ObjectContext(coordinator: coordinator)
        let retired = try (0..<retiredDogs).map { i -> ManagedObject in
            let dog = try context.insert("Dog")
            try dog.set("name", "retired \(i)")
            return dog
        }
        try context.save()
        for dog in retired { try context.delete(dog) }
        for name in ["Tom", "Felix"] { try context.insert("Cat").set("name", name) }
        for name in dogs { try context.insert("Dog").set("name", name) }
        try context.save()
        return url
    }

    static func output(_ configuration: String, _ kind: StoreType, in dir: TempDir) -> SplitDestination {
        SplitDestination(
            configuration: configuration, url: dir.url.appendingPathComponent("\(configuration).\(kind == .lmdb ? "lmdb" : "sqlite")"), type: kind)
    }

    /// Names of every `entity` object (subentities included) in `destinations`, read through a coordinator.
    static func names(_ entity: String, in destinations: [SplitDestination], model: ObjectModel) throws -> [String] {
        let coordinator = StoreCoordinator(model: model)
        for destination in destinations {
            try coordinator.addStore(destination.type, configuration: destination.configuration, at: destination.url)
        }
        defer { for store in coordinator.stores { try? coordinator.removeStore(store) } }
        return try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: entity))
            .map { try $0.get("name", as: String.self) ?? "" }.sorted()
    }

    @Test(arguments: pairs)
    func overlappingKeysUnderOneNewParentAreRefusedWhenPlanning(_ pair: (source: StoreType, destination: StoreType)) throws {
        let dir = try TempDir()
        let source = try Self.legacyStore(pair.source, in: dir, dogs: ["Rex", "Fido", "Lassie"])
        let pets = Self.output("Pets", pair.destination, in: dir)
        let splitter = try StoreSplitter(source: source, targetModel: try Self.targetModel(separateConfigurations: false), destinations: [pets])
        var reported: [String] = []
        do {
            _ = try splitter.plan()
        } catch SplitError.planning(let problems) {
            reported = problems
        }
        #expect(reported.count == 1, "\(reported)")
        let message = reported.first ?? ""
        #expect(message.contains("Cat (source hierarchy Cat, primary keys 1–2)"), "\(message)")
        #expect(message.contains("Dog (source hierarchy Dog, primary keys 1–3)"), "\(message)")
        #expect(message.contains("hierarchy Animal of the Pets store"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: pets.url.path))
    }

    @Test(arguments: pairs)
    func disjointKeysUnderOneNewParentSplitWithTheirKeys(_ pair: (source: StoreType, destination: StoreType)) throws {
        let dir = try TempDir()
        // Dogs 1-3 were saved and deleted: the kept dogs have keys 4 and 5, the cats 1 and 2 of their own sequence.
        let source = try Self.legacyStore(pair.source, in: dir, dogs: ["Rex", "Fido"], retiredDogs: 3)
        let model = try Self.targetModel(separateConfigurations: false)
        let pets = Self.output("Pets", pair.destination, in: dir)
        let splitter = try StoreSplitter(source: source, targetModel: model, destinations: [pets])
        let plan = try splitter.plan()
        _ = try splitter.run(plan, options: SplitOptions(batchSize: 2, verifyContent: true))
        #expect(try Self.names("Animal", in: [pets], model: model) == ["Felix", "Fido", "Rex", "Tom"])
        #expect(try Self.names("Dog", in: [pets], model: model) == ["Fido", "Rex"])
    }

    @Test(arguments: pairs)
    func overlappingKeysInSeparateOutputsSplit(_ pair: (source: StoreType, destination: StoreType)) throws {
        let dir = try TempDir()
        let source = try Self.legacyStore(pair.source, in: dir, dogs: ["Rex", "Fido", "Lassie"])
        let model = try Self.targetModel(separateConfigurations: true)
        let outputs = [Self.output("Cats", pair.destination, in: dir), Self.output("Dogs", pair.destination, in: dir)]
        let splitter = try StoreSplitter(source: source, targetModel: model, destinations: outputs)
        let plan = try splitter.plan()
        _ = try splitter.run(plan, options: SplitOptions(batchSize: 2, verifyContent: true))
        #expect(try Self.names("Cat", in: outputs, model: model) == ["Felix", "Tom"])
        #expect(try Self.names("Dog", in: outputs, model: model) == ["Fido", "Lassie", "Rex"])
        // The Dogs output holds `Dog` without its root `Animal`, whose key counter new dogs take keys from: it
        // came across (verified above), so a new dog takes a key no copied dog has.
        do {
            let coordinator = StoreCoordinator(model: model)
            for output in outputs { try coordinator.addStore(output.type, configuration: output.configuration, at: output.url) }
            defer { for store in coordinator.stores { try? coordinator.removeStore(store) } }
            let context = ObjectContext(coordinator: coordinator)
            try context.insert("Dog").set("name", "Snoopy")
            try context.save()
        }
        #expect(try Self.names("Dog", in: outputs, model: model) == ["Fido", "Lassie", "Rex", "Snoopy"])
    }
}

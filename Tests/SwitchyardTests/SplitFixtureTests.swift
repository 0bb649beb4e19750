import Foundation
import Testing
@testable import Switchyard

/// A real Core Data store (CoreDataPlus `SampleModel2_V1.sqlite`, rows partly in its `-wal`, persistent history,
/// derived-attribute triggers) split into two configurations the test adds to the model from its `Z_MODELCACHE`.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage))
struct SplitFixtureTests {
    static let store = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"

    @Test func coreDataStoreSplitsIntoTwoConfigurations() async throws {
        let temp = TemporaryDirectory()
        let url = temp.file("SampleModel2_V1.sqlite")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: Fixtures.url(Self.store).path + suffix) {
            try FileManager.default.copyItem(atPath: Fixtures.url(Self.store).path + suffix, toPath: url.path + suffix)
        }
        let before = try LegacyMessenger.fingerprint(url)
        let stored = try #require(try StoreInspection.storedModel(url))
        let library = ["Book", "GraphicNovel", "Page", "Writer", "Author"]
        let target = try ObjectModel(
            entities: stored.entities,
            configurations: [
                ConfigurationDescription(name: "Library", entityNames: library),
                ConfigurationDescription(name: "Reviews", entityNames: ["Feedback"]),
            ])
        let destinations = [
            SplitDestination(configuration: "Library", url: temp.file("Library.sqlite"), type: .sqlite),
            SplitDestination(configuration: "Reviews", url: temp.file("Reviews.lmdb"), type: .lmdb),
        ]
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        let plan = try splitter.plan()
        // Persistent history and Core Data's triggers are listed as skipped, not copied.
        #expect(plan.skipped.contains { $0.kind == "entity" && $0.name.contains("Z_ENT 16001") })
        #expect(plan.skipped.contains { $0.kind == "table" && $0.name == "ACHANGE" && $0.rows == 5468 })
        #expect(plan.skipped.contains { $0.kind == "trigger" })
        let counts = Dictionary(uniqueKeysWithValues: plan.entities.map { ($0.sourceEntity, $0.rowCount) })
        #expect(counts["Page"] == 4970)
        #expect(counts["Feedback"] == 444)
        let report = try splitter.run(plan, options: SplitOptions(batchSize: 1_000, verifyContent: true))
        #expect(report.rowsCopied == plan.rowCount)
        #expect(try LegacyMessenger.fingerprint(url) == before)

        let coordinator = StoreCoordinator(model: target)
        for d in destinations { try coordinator.addStore(d.type, configuration: d.configuration, at: d.url) }
        let context = ObjectContext(coordinator: coordinator)
        for (entity, rows) in counts where !(target.entity(named: entity)?.isAbstract ?? true) {
            let request = FetchRequest(entityName: entity, includesSubentities: false)
            #expect(try context.count(request) == rows, "\(entity)")
        }
        // Core Data's own metadata keys describe the source file and are not copied.
        for d in destinations {
            let store = try #require(coordinator.stores(serving: d.configuration == "Library" ? "Page" : "Feedback").first)
            #expect(try store.metadata().additional.keys.allSatisfy { !$0.hasPrefix("NS") && !$0.hasPrefix("_NS") })
        }
        // Z_MAX copied from the source's Z_PRIMARYKEY (Page: 4970).
        let pages = try #require(coordinator.stores(serving: "Page").first)
        #expect(try pages.allocatePrimaryKeys(for: "Page", count: 1).lowerBound == 4971)
    }

    /// objc.io's Moody store: Mood.country now crosses into another store and lands in an Integer 64 attribute
    /// with elementID "country"; the app's own metadata key (a CloudKit user ID) travels to both outputs.
    @Test func moodyCrossingRelationshipBecomesThePrimaryKeyAttribute() throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Moody.moody")
        let fixture = Fixtures.url("objcio__core-data/Migrations/MigrationsTests/Moody.moody").path
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: fixture + suffix) {
            try FileManager.default.copyItem(atPath: fixture + suffix, toPath: url.path + suffix)
        }
        let stored = try #require(try StoreInspection.storedModel(url))
        let entities = stored.entities.map { entity -> EntityDescription in
            var e = entity
            e.relationships.removeAll { ($0.name == "country" && e.name == "Mood") || ($0.name == "moods" && e.name == "Country") }
            if e.name == "Mood" {
                e.attributes.append(AttributeDescription(name: "countryKey", type: .integer64, renamingIdentifier: "country"))
            }
            return e
        }
        let target = try ObjectModel(entities: entities, configurations: [
            ConfigurationDescription(name: "Geo", entityNames: ["GeographicRegion", "Continent", "Country"]),
            ConfigurationDescription(name: "Moods", entityNames: ["Mood"]),
        ])
        let destinations = [
            SplitDestination(configuration: "Geo", url: temp.file("Geo.sqlite"), type: .sqlite),
            SplitDestination(configuration: "Moods", url: temp.file("Moods.lmdb"), type: .lmdb),
        ]
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        let plan = try splitter.plan()
        #expect(plan.conversions.map(\.attribute) == ["countryKey"])
        _ = try splitter.run(plan, options: SplitOptions(verifyContent: true))
        let source = try SQLiteStore(url: url, model: stored, configuration: "Default", options: .readOnly)
        let expected = Dictionary(uniqueKeysWithValues: try source.fetch(StoreFetchRequest(entityName: "Mood")).map {
            ($0.primaryKey, $0.toOne["country"].map { AttributeValue.integer($0.primaryKey) } ?? .null)
        })
        let moods = try LMDBStore(url: destinations[1].url, model: target, configuration: "Moods", options: .readOnly)
        let rows = try moods.fetch(StoreFetchRequest(entityName: "Mood"))
        #expect(rows.count == expected.count)
        for row in rows { #expect(row["countryKey"] == expected[row.primaryKey]) }
        let appKey = "io.objc.Moody.CloudKitUserID"
        #expect(try moods.metadata().additional[appKey] == source.metadata().additional[appKey])
        #expect(try moods.metadata().additional[appKey] != nil)
    }

    /// Real Core Data models with the relationships the fixture stores lack, as split sources. Apple's Tags
    /// (Photo.tags <<->> Tag.photos): the source was numbered by a model with one more entity, as a store written
    /// by an older model version is, and is read with the Tags model, so its join table `Z_2TAGS(Z_2PHOTOS,
    /// Z_4TAGS)` becomes the output's `Z_1TAGS(Z_1PHOTOS, Z_3TAGS)`. CoreStore (TestEntity2's ordered
    /// self-referential to-many) split along its own configurations Config1 and Config2.
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func coreDataModelsKeepManyToManyLinksAndOrderAcrossASplit(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let ext = outputType == .lmdb ? "lmdb" : "sqlite"
        let tags = try FixtureModelRelationshipTests.tagsModel()
        let older = try ObjectModel(entities: [EntityDescription(name: "Album", attributes: [AttributeDescription(name: "title", type: .string)])] + tags.entities)
        let url = temp.file("Tags.sqlite")
        do {
            let coordinator = StoreCoordinator(model: older)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url)
            let context = ObjectContext(coordinator: coordinator)
            let labels = try (0..<6).map { i -> ManagedObject in
                let tag = try context.insert("Tag")
                try tag.set("name", "t\(i)")
                return tag
            }
            for i in 0..<40 {
                let photo = try context.insert("Photo")
                try photo.set("uniqueName", "p\(i)")
                try photo.setRelatedObjects(labels.enumerated().filter { ($0.offset + i) % 3 == 0 }.map(\.element), forKey: "tags")
            }
            try context.save()
        }
        let before = try LegacyMessenger.fingerprint(url)
        let target = try ObjectModel(entities: tags.entities, configurations: [
            ConfigurationDescription(name: "Library", entityNames: ["Photo", "Tag", "PhotoData", "Thumbnail"]),
        ])
        let library = SplitDestination(configuration: "Library", url: temp.file("Library.\(ext)"), type: outputType)
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: [library], sourceModel: tags)
        let plan = try splitter.plan()
        #expect(plan.links.map { "\($0.entity).\($0.relationship)" } == ["Photo.tags"])
        let report = try splitter.run(plan, options: SplitOptions(batchSize: 9, verifyContent: true))
        #expect(report.outputs[0].links.first?.links == 80)
        #expect(try LegacyMessenger.fingerprint(url) == before)
        if SQLite3.available {
            #expect(try SQLite3.query(url.path, "SELECT COUNT(*) FROM Z_2TAGS") == "80")
            if outputType == .sqlite { #expect(try SQLite3.query(library.url.path, "SELECT COUNT(*) FROM Z_1TAGS j JOIN ZTAG t ON t.Z_PK = j.Z_3TAGS") == "80") }
        }
        let split = StoreCoordinator(model: target)
        try split.addStore(outputType, configuration: "Library", at: library.url)
        let context = ObjectContext(coordinator: split)
        for photo in try context.fetch(FetchRequest(entityName: "Photo")) {
            let i = Int(try #require(try photo.get("uniqueName", as: String.self)).dropFirst())!
            let names = try photo.relatedObjects(forKey: "tags").map { try $0.get("name", as: String.self)! }.sorted()
            #expect(names == (0..<6).filter { ($0 + i) % 3 == 0 }.map { "t\($0)" }, "p\(i)")
        }

        let coreStore = try FixtureModelRelationshipTests.coreStoreModel()
        let legacy = temp.file("CoreStore.sqlite")
        var expected: [String: [String]] = [:]
        do {
            let coordinator = StoreCoordinator(model: coreStore)
            try coordinator.addStore(.sqlite, configuration: "Default", at: legacy)
            let context = ObjectContext(coordinator: coordinator)
            let objects = try (0..<24).map { i -> ManagedObject in
                let object = try context.insert("TestEntity2")
                try object.set("testString", "e\(i)")
                return object
            }
            for parent in 0..<4 {
                // Children in descending key order: their order is not the primary-key order.
                let children = stride(from: 23 - parent, through: 4, by: -4).map { objects[$0] }
                try objects[parent].setRelatedObjects(children, forKey: "testToManyOrdered")
                expected["e\(parent)"] = try children.map { try $0.get("testString", as: String.self)! }
            }
            _ = try context.insert("TestEntity1AAA")
            try context.save()
        }
        let destinations = [
            SplitDestination(configuration: "Config1", url: temp.file("Config1.\(ext)"), type: outputType),
            SplitDestination(configuration: "Config2", url: temp.file("Config2.\(ext)"), type: outputType),
        ]
        let second = try StoreSplitter(source: legacy, targetModel: coreStore, destinations: destinations)
        let secondPlan = try second.plan()
        #expect(secondPlan.links.map { "\($0.entity).\($0.relationship) \($0.kind.rawValue)" } == ["TestEntity2.testToManyOrdered order"])
        _ = try second.run(secondPlan, options: SplitOptions(batchSize: 5, verifyContent: true))
        let coordinator = StoreCoordinator(model: coreStore)
        for d in destinations { try coordinator.addStore(outputType, configuration: d.configuration, at: d.url) }
        let check = ObjectContext(coordinator: coordinator)
        for (parent, children) in expected {
            let object = try #require(try check.fetch(FetchRequest(entityName: "TestEntity2", predicate: try FetchPredicate(format: "testString == %@", parent))).first)
            #expect(try object.relatedObjects(forKey: "testToManyOrdered").map { try $0.get("testString", as: String.self)! } == children)
        }
    }
}

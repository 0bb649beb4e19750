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
}

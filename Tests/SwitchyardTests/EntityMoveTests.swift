import Foundation
import Testing
@testable import Switchyard

/// An entity moved to another configuration: with `movingEntities`, its rows follow it to its new store.
@Suite struct EntityMoveTests {
    let dir = TemporaryDirectory()

    /// Version 2: Tag leaves Cache for Cloud; Cache gets a new Badge entity.
    static func moved() throws -> ObjectModel {
        let v1 = try MigrationFixtures.model(configured: true)
        return try ObjectModel(
            entities: v1.entities + [EntityDescription(name: "Badge", attributes: [AttributeDescription(name: "code", type: .string)])],
            configurations: [
                ConfigurationDescription(name: "Cloud", entityNames: ["Owner", "Item", "Tag"]),
                ConfigurationDescription(name: "Cache", entityNames: ["Badge"]),
            ])
    }

    private func populate(cache backend: Backend) throws -> [StoreDescription] {
        let cloud = dir.file("Cloud.sqlite"), cache = backend.url(in: dir, name: "Cache")!
        try MigrationFixtures.populate(.sqlite, url: cloud, configuration: "Cloud")
        try MigrationFixtures.populate(backend, url: cache, configuration: "Cache")
        // The cache store is listed first: the move must still load Cloud before Cache drops the rows.
        return [StoreDescription(backend.storeType, configuration: "Cache", url: cache), StoreDescription(.sqlite, configuration: "Cloud", url: cloud)]
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func rowsFollowTheirEntityToItsNewStore(backend: Backend) async throws {
        let descriptions = try populate(cache: backend)
        let coordinator = StoreCoordinator(model: try Self.moved())
        let events = Locked<[StoreLoadEvent]>([])
        let stores = try await coordinator.loadStores(descriptions, movingEntities: true) { e in events.withLock { $0.append(e) } }.get()
        let (cache, cloud) = (stores[0], stores[1])
        #expect(cache.configurationName == "Cache" && cloud.configurationName == "Cloud")
        let tags = try MigrationFixtures.rows(cloud, "Tag")
        #expect(tags.count == MigrationFixtures.tags)
        #expect((1...MigrationFixtures.tags).allSatisfy { tags[Int64($0)]?["label"] == .string("l\($0)") })
        #expect(try MigrationFixtures.rows(cloud, "Item").count == MigrationFixtures.items)
        #expect(!cache.serves("Tag"))
        #expect(try cache.storedModel() == coordinator.model)
        #expect(try cloud.allocatePrimaryKeys(for: "Tag", count: 1).lowerBound > Int64(MigrationFixtures.tags))
        #expect(events.withLock { $0 }.contains(.migrating(path: cloud.displayPath, entity: "Tag", done: 4, total: 4)))
        // The old store no longer holds the rows: loading again moves nothing twice.
        let again = StoreCoordinator(model: try Self.moved())
        let reloaded = try await again.loadStores(descriptions, movingEntities: true).get()
        #expect(try MigrationFixtures.rows(reloaded[1], "Tag").count == MigrationFixtures.tags)
    }

    @Test func withoutTheOptionTheRowsAreDropped() async throws {
        let descriptions = try populate(cache: .sqlite)
        let stores = try await StoreCoordinator(model: try Self.moved()).loadStores(descriptions).get()
        #expect(try MigrationFixtures.rows(stores[1], "Tag").isEmpty)
        #expect(try SQLite3.query(descriptions[0].url!.path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'ZTAG'") == "0")
    }
}

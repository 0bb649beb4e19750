import Foundation
import Testing
@testable import Switchyard

/// Stores that cannot be migrated: a disposable one is recreated (or quarantined) after the hook, a
/// non-disposable one is left byte for byte and the error carries the report; other stores load normally.
/// Also the progress `loadStores` reports while migrating.
@Suite struct DisposableStoreTests {
    let dir = TemporaryDirectory()

    /// Version 2 of the configured model: Tag.label changes type, which no migration can infer.
    static func incompatible() throws -> ObjectModel {
        try MigrationFixtures.model(configured: true) { e in e["Tag"]!.attributes[0].type = .integer64 }
    }

    /// A Cloud SQLite store and a Cache store of `backend`, both written with version 1.
    private func populate(cache backend: Backend) throws -> (cloud: StoreDescription, cache: URL) {
        let cloud = dir.file("Cloud.sqlite"), cache = backend.url(in: dir, name: "Cache")!
        try MigrationFixtures.populate(.sqlite, url: cloud, configuration: "Cloud")
        try MigrationFixtures.populate(backend, url: cache, configuration: "Cache")
        return (StoreDescription(.sqlite, configuration: "Cloud", url: cloud), cache)
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func disposableStoreIsRecreatedAndTheOthersLoad(backend: Backend) async throws {
        let (cloud, cache) = try populate(cache: backend)
        let coordinator = StoreCoordinator(model: try Self.incompatible())
        let reports = Locked<[CompatibilityReport]>([])
        coordinator.disposalHandler = { description, report in
            reports.withLock { $0.append(report) }
            return description.configuration == "Cache" ? .recreate : .keep
        }
        let events = Locked<[StoreLoadEvent]>([])
        let stores = try await coordinator.loadStores([
            cloud, StoreDescription(backend.storeType, configuration: "Cache", url: cache, options: StoreOptions(disposable: true)),
        ]) { event in events.withLock { $0.append(event) } }.get()
        #expect(stores.count == 2)
        #expect(try MigrationFixtures.rows(stores[0], "Item").count == 30)
        #expect(try MigrationFixtures.rows(stores[1], "Tag").isEmpty)
        #expect(reports.withLock { $0 }.map(\.verdict) == [.incompatible])
        #expect(events.withLock { $0 }.contains { event in
            if case .recreated(cache.path, "Cache", let reason) = event { return reason.contains("Tag.label") }
            return false
        })
        // The recreated store is a store of the new model.
        let key = try stores[1].allocatePrimaryKeys(for: "Tag", count: 1).lowerBound
        try stores[1].save(StoreChangeSet(inserts: [StoreRow(entityName: "Tag", primaryKey: key, values: ["label": 5])]))
        #expect(try MigrationFixtures.rows(stores[1], "Tag")[key]?["label"] == .integer(5))
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func nonDisposableStoreIsUntouchedAndTheErrorCarriesTheReport(backend: Backend) throws {
        let (_, cache) = try populate(cache: backend)
        let before = MigrationFixtures.snapshot(cache)
        let coordinator = StoreCoordinator(model: try Self.incompatible())
        #expect {
            try coordinator.addStore(backend.storeType, configuration: "Cache", at: cache)
        } throws: { error in
            guard case StoreError.incompatibleModel(cache.path, "Cache", let report)? = error as? StoreError else { return false }
            return report.entities.first { $0.name == "Tag" }?.properties.map(\.kind) == [.typeChanged]
        }
        #expect(MigrationFixtures.snapshot(cache) == before)
        #expect(coordinator.stores.isEmpty)
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func theHookMayVetoOrQuarantine(backend: Backend) throws {
        let (_, cache) = try populate(cache: backend)
        let before = MigrationFixtures.snapshot(cache)
        let coordinator = StoreCoordinator(model: try Self.incompatible())
        let disposable = StoreDescription(backend.storeType, configuration: "Cache", url: cache, options: StoreOptions(disposable: true))
        coordinator.disposalHandler = { _, _ in .keep }
        #expect(throws: StoreError.self) { try coordinator.addStore(disposable) }
        #expect(MigrationFixtures.snapshot(cache) == before)

        coordinator.disposalHandler = { _, _ in .quarantine }
        let store = try coordinator.addStore(disposable)
        #expect(try MigrationFixtures.rows(store, "Tag").isEmpty)
        let moved = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("Cache.quarantined-") }
        let quarantined = try #require(moved.first { $0.hasSuffix(backend == .sqlite ? ".sqlite" : ".lmdb") })
        // The old store, moved aside whole, still opens with the old model and keeps its rows.
        let old = try MigrationFixtures.model(configured: true)
        let reopened: any PersistentStore = backend == .sqlite
            ? try SQLiteStore(url: dir.file(quarantined), model: old, configuration: "Cache", options: .readOnly)
            : try LMDBStore(url: dir.file(quarantined), model: old, configuration: "Cache", options: .readOnly)
        #expect(try MigrationFixtures.rows(reopened, "Tag").count == MigrationFixtures.tags)
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func loadStoresReportsMigrationProgressWhileOtherTasksRun(backend: Backend) async throws {
        let url = backend.url(in: dir, name: "big")!
        let rows = 3 * StoreMigration.batchSize - 10
        try MigrationFixtures.populate(backend, url: url, items: rows)
        // Optional -> required with a default rewrites the rows missing a value, a batch at a time.
        let v2 = try MigrationFixtures.model { e in
            e["Item"]!.attributes[2] = AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: "-")
        }
        let ticks = Locked(0)
        // High priority: in the parallel suite, default-priority work queues up ahead of a new task.
        let ticker = Task(priority: .high) {
            while !Task.isCancelled {
                ticks.withLock { $0 += 1 }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        let seen = Locked<[(event: StoreLoadEvent, ticks: Int)]>([])
        let coordinator = StoreCoordinator(model: v2)
        _ = try await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Default", url: url)]) { event in
            let now = ticks.withLock { $0 }
            seen.withLock { $0.append((event, now)) }
            // A slow consumer holds the migration between batches until the ticker has moved on (or 5 s pass,
            // when the parallel suite leaves the ticker no thread): the migration must not need its threads.
            if case .migrating = event {
                let deadline = Date().addingTimeInterval(5)
                while ticks.withLock({ $0 }) == now, Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
            }
        }.get()
        ticker.cancel()
        let all = seen.withLock { $0 }
        let migrating = all.compactMap { entry -> (done: Int, total: Int, ticks: Int)? in
            if case .migrating(_, "Item", let done, let total) = entry.event { return (done, total, entry.ticks) }
            return nil
        }
        #expect(migrating.count == 3)
        #expect(migrating.map(\.done) == migrating.map(\.done).sorted())
        #expect(migrating.last.map { $0.done == rows && $0.total == rows } == true)
        #expect(migrating.last!.ticks > migrating.first!.ticks, "the other task made no progress during the migration")
        guard case .opening = all.first?.event, case .done(1) = all.last?.event else {
            Issue.record("events out of order: \(all.map(\.event))")
            return
        }
        #expect(try MigrationFixtures.count(coordinator.stores[0], "Item", "note == '-'") == rows - rows / 2)
    }
}

extension DisposableStoreTests {
    /// A store without a model cache is judged by its tables: one missing a column the model needs is
    /// incompatible (nothing says what the column should hold), so a disposable one is recreated.
    @Test(.enabled(if: SQLite3.available, "needs the sqlite3 CLI")) func storeWithoutModelCacheIsJudgedByItsTables() throws {
        let url = dir.file("Old.sqlite")
        try MigrationFixtures.populate(.sqlite, url: url)
        try SQLite3.execute(url.path, "DELETE FROM Z_MODELCACHE")
        let v2 = try MigrationFixtures.model { e in e["Tag"]!.attributes.append(AttributeDescription(name: "color", type: .string)) }
        let check = try StoreCompatibility.check(.sqlite, at: url, model: v2, configuration: "Default")
        #expect(check.basis == .tableLayout && check.report.verdict == .incompatible)
        #expect(check.report.blockingReasons.contains { $0.contains("ZCOLOR") })
        // The unchanged model still opens it, by layout.
        #expect(try StoreCompatibility.check(.sqlite, at: url, model: try MigrationFixtures.model(), configuration: "Default").report.verdict == .identical)

        let coordinator = StoreCoordinator(model: v2)
        #expect(throws: StoreError.self) { try coordinator.addStore(.sqlite, configuration: "Default", at: url) }
        let store = try coordinator.addStore(StoreDescription(.sqlite, configuration: "Default", url: url, options: StoreOptions(disposable: true)))
        #expect(try MigrationFixtures.rows(store, "Tag").isEmpty)
        #expect(try store.storedModel() == v2)
    }
}

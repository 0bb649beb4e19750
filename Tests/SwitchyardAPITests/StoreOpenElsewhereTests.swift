import Foundation
import Switchyard
import Testing

/// A store open in one coordinator while another coordinator of the same process opens the same path with
/// another model, or destroys, replaces or moves it. Found by trying it (2026-11-29): a disposable store
/// recreated for a new model deleted the files under the first coordinator — on SQLite it went on saving into the
/// deleted file, each save reporting success and lost; on LMDB its committed data was gone and its next save
/// failed. `destroyStore` through the second coordinator did the same. Files another coordinator uses are now
/// left alone, with an error saying why, and are not migrated under it.
@Suite struct StoreOpenElsewhereTests {
    static let fileBackends: [Backend] = [.sqlite, .lmdb]

    /// A coordinator with a store holding order "a".
    static func seeded(_ backend: Backend, in dir: TempDir) throws -> (StoreCoordinator, ObjectContext) {
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "a", qty: 1)
        try context.save()
        return (coordinator, context)
    }

    static func codes(_ coordinator: StoreCoordinator) throws -> [String] {
        try Shop.codes(ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")])))
    }

    /// Saves order "b" through `context`, then checks a coordinator opened afresh sees both orders.
    static func expectStillSaving(_ context: ObjectContext, _ backend: Backend, in dir: TempDir) throws {
        try Shop.order(context, "b", qty: 2)
        try context.save()
        #expect(try codes(try Shop.coordinator(backend, in: dir)) == ["a", "b"])
    }

    static func incompatible() throws -> ObjectModel {
        try StoreOpeningBehaviourTests.shop { order in
            order.attributes = order.attributes.map { a in a.name == "qty" ? AttributeDescription(name: "qty", type: .string, isOptional: false) : a }
        }
    }

    @Test(arguments: fileBackends)
    func aDisposableStoreOpenInAnotherCoordinatorIsNotRecreated(_ backend: Backend) throws {
        let dir = try TempDir()
        let (first, context) = try Self.seeded(backend, in: dir)
        let second = StoreCoordinator(model: try Self.incompatible())
        #expect {
            try backend.add(to: second, configuration: "Main", in: dir.url, options: StoreOptions(disposable: true))
        } throws: { error in
            guard case StoreError.openFailed(let path, let configuration, let reason) = error else { return false }
            return path.hasSuffix("Main.\(backend.rawValue)") && configuration == "Main"
                && reason.contains("Order.qty") && reason.contains("not recreated") && reason.contains("open in another coordinator")
        }
        #expect(second.stores.isEmpty)
        try Self.expectStillSaving(context, backend, in: dir)

        // Once the first coordinator lets go, the store is recreated for the new model as before.
        try first.removeStore(first.stores[0])
        try backend.add(to: second, configuration: "Main", in: dir.url, options: StoreOptions(disposable: true))
        #expect(try ObjectContext(coordinator: second).count(FetchRequest(entityName: "Order")) == 0)
    }

    @Test(arguments: fileBackends)
    func aStoreOpenInAnotherCoordinatorIsNotDestroyedReplacedOrMoved(_ backend: Backend) throws {
        let dir = try TempDir()
        let (first, context) = try Self.seeded(backend, in: dir)
        let second = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: second, configuration: "Main", in: dir.url)
        let backup = dir.url.appendingPathComponent("backup.\(backend.rawValue)")
        try second.copyStore(store, to: backup)
        func refused(_ operation: String) -> (any Error) -> Bool {
            { error in
                guard case StoreFileOperationError.failed(let op, let path, _, let reason) = error else { return false }
                return op == operation && path.hasSuffix("Main.\(backend.rawValue)") && reason.contains("open in another coordinator of this process")
            }
        }
        #expect(performing: { try second.destroyStore(store) }, throws: refused("destroy store"))
        #expect(performing: { try second.replaceStore(store, withContentsOf: backup) }, throws: refused("replace store"))
        #expect(performing: { try second.moveStore(store, to: dir.url.appendingPathComponent("moved.\(backend.rawValue)")) }, throws: refused("move store"))
        #expect(second.stores.count == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("moved.\(backend.rawValue)").path))
        try Self.expectStillSaving(context, backend, in: dir)
        #expect(try Self.codes(second) == ["a", "b"])

        // With the first coordinator's store removed, the second may destroy it.
        try first.removeStore(first.stores[0])
        try second.destroyStore(store)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("Main.\(backend.rawValue)").path))
    }

    /// A coordinator with a newer model while an older one has the store open: the migration in place is refused
    /// (the older coordinator would go on with the old schema: a user trial saw its SQLite saves fail with "table
    /// ZPERSON has no column named ZAGE" after a rename), the older one keeps working, and once it lets go the
    /// store migrates.
    @Test(arguments: fileBackends)
    func anInferredMigrationWaitsForOtherCoordinators(_ backend: Backend) throws {
        let dir = try TempDir()
        let (first, context) = try Self.seeded(backend, in: dir)
        let newer = StoreCoordinator(model: try StoreOpeningBehaviourTests.shop {
            $0.attributes = $0.attributes.filter { $0.name != "width" } + [AttributeDescription(name: "priority", type: .integer16, defaultValue: .integer(3))]
        })
        #expect {
            try backend.add(to: newer, configuration: "Main", in: dir.url)
        } throws: { error in
            guard case StoreError.openFailed(_, let configuration, let reason) = error else { return false }
            return configuration == "Main" && reason.contains("needs a migration") && reason.contains("priority")
                && reason.contains("open in another coordinator")
        }
        try Self.expectStillSaving(context, backend, in: dir)

        try first.removeStore(first.stores[0])
        try backend.add(to: newer, configuration: "Main", in: dir.url)
        let orders = try ObjectContext(coordinator: newer).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try Shop.codes(orders) == ["a", "b"])
        #expect(try orders.map { try $0.get("priority", as: Int.self) } == [3, 3])
    }

    /// A migration chain (its custom step writes a new store and renames it over the old one): refused before any
    /// step runs while another coordinator has the store open, and run once it is closed there.
    @Test(arguments: fileBackends)
    func aCustomMigrationStepWaitsForOtherCoordinators(_ backend: Backend) throws {
        let dir = try TempDir()
        _ = try MigrationChainTests.writeV1(backend, in: dir)
        let url = try MigrationChainTests.url(backend, in: dir)
        var old: StoreCoordinator? = StoreCoordinator(model: try MigrationChainTests.v1())
        try old!.addStore(backend.storeType, configuration: "Main", at: url)
        let newer = StoreCoordinator(model: try MigrationChainTests.v3())
        try newer.setMigrationChain(try MigrationChainTests.chain())
        #expect {
            try newer.addStore(backend.storeType, configuration: "Main", at: url)
        } throws: { error in
            guard case StoreError.openFailed(_, _, let reason) = error else { return false }
            return reason.contains("needs a migration") && reason.contains("open in another coordinator")
        }
        // Untouched: still V1, readable by the first coordinator.
        #expect(try ObjectContext(coordinator: old!).count(FetchRequest(entityName: "Person")) == 30)
        old = nil
        try newer.addStore(backend.storeType, configuration: "Main", at: url)
        #expect(try ObjectContext(coordinator: newer).count(FetchRequest(entityName: "Person")) == 24)
    }

    /// `replaceStore` with contents of an older version of the model (allowed: they migrate as the store reopens)
    /// is this coordinator's own store, not another's: the migration on reopen is not refused.
    @Test(arguments: fileBackends)
    func replacingWithAnOlderVersionMigratesOnReopen(_ backend: Backend) throws {
        let dir = try TempDir(), olderDir = try TempDir()
        do {
            let old = try Shop.coordinator(backend, in: olderDir)
            let context = ObjectContext(coordinator: old)
            try Shop.order(context, "old", qty: 1)
            try context.save()
        }
        let newer = StoreCoordinator(model: try StoreOpeningBehaviourTests.shop {
            $0.attributes += [AttributeDescription(name: "priority", type: .integer16, defaultValue: .integer(3))]
        })
        let store = try backend.add(to: newer, configuration: "Main", in: dir.url)
        let replaced = try newer.replaceStore(store, withContentsOf: olderDir.url.appendingPathComponent("Main.\(backend.rawValue)"))
        let orders = try ObjectContext(coordinator: newer).fetch(FetchRequest(entityName: "Order"))
        #expect(try Shop.codes(orders) == ["old"])
        #expect(try orders.map { try $0.get("priority", as: Int.self) } == [3])
        #expect(newer.stores.first === replaced)
    }

    /// One store object added to two coordinators (`addStore(_:)`): removing it from one leaves it recorded for the
    /// other, so a third still may not destroy its files (a review found the first removal erased both records).
    @Test(arguments: fileBackends)
    func aStoreSharedByTwoCoordinatorsStaysProtectedWhenOneRemovesIt(_ backend: Backend) throws {
        let dir = try TempDir()
        let (first, _) = try Self.seeded(backend, in: dir)
        let shared = first.stores[0]
        let second = StoreCoordinator(model: try Shop.model())
        try second.addStore(shared)
        try first.removeStore(shared)
        let third = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: third, configuration: "Main", in: dir.url)
        #expect(throws: StoreFileOperationError.self) { try third.destroyStore(store) }
        #expect(try Self.codes(second) == ["a"])
    }
}

import Foundation
import Switchyard
import Testing

/// `forEach(_:batchSize:)` walks what `fetch` returns, in the same order, holding one batch at a time (Core
/// Data's `fetchBatchSize`: only a batch of objects is materialized at once).
@Suite struct BatchWalkTests {
    static func seeded(_ backend: Backend, _ dir: TempDir, count: Int) throws -> StoreCoordinator {
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for i in 0..<count { try Shop.order(context, String(format: "o%03d", (i * 37) % count), qty: Int64(i % 5)) }
        try context.save()
        return coordinator
    }

    @Test(arguments: Backend.everyStore)
    func walkMatchesFetchAndHoldsOneBatch(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 50)
        for request in [
            FetchRequest(entityName: "Order"),
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty >= 2")),
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty < 3"), sortKeys: [SortKey("code", ascending: false)]),
        ] {
            let expected = try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request))
            let context = ObjectContext(coordinator: coordinator)
            var walked: [String] = []
            var mostRegistered = 0
            try context.forEach(request, batchSize: 7) { order in
                walked.append(try order.get("code", as: String.self)!)
                mostRegistered = max(mostRegistered, context.registeredObjects.count)
            }
            #expect(walked == expected, "\(request)")
            #expect(mostRegistered <= 7)
            #expect(context.registeredObjects.isEmpty)
        }
    }

    @Test(arguments: Backend.everyStore)
    func changedObjectsStayAndUnsavedChangesAreSeen(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 20)
        let context = ObjectContext(coordinator: coordinator)
        var changed: [ManagedObject] = []
        try context.forEach(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 0")), batchSize: 3) { order in
            try order.set("qty", Int64(9))
            changed.append(order)
        }
        #expect(changed.count == 4)
        #expect(context.registeredObjects.count == 4)
        // With unsaved changes the walk sees them, as fetch does.
        try Shop.order(context, "new", qty: 9)
        var nines = 0
        try context.forEach(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 9")), batchSize: 2) { _ in nines += 1 }
        #expect(nines == 5)
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 9"))) == 5)
    }
}

import Foundation
import Switchyard
import Testing

/// `fetch` and `count` see the context's unsaved state, as Core Data's `NSFetchRequest.includesPendingChanges`
/// (true by default) documents: "matches against currently unsaved changes in the managed object context".
@Suite struct PendingChangesFetchTests {
    @Test(arguments: Backend.everyStore)
    func anUnsavedChangeMakesASavedObjectMatch(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let a = try Shop.order(context, "a", qty: 1)
        try Shop.order(context, "b", qty: 5)
        try context.save()
        try a.set("qty", Int64(10))
        let request = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty > 3"), sortKeys: [SortKey("qty")])
        #expect(try Shop.codes(context.fetch(request)) == ["b", "a"])
        #expect(try context.count(request) == 2)
    }

    @Test(arguments: Backend.everyStore)
    func anUnsavedChangeMakesASavedObjectStopMatching(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        try Shop.order(context, "a", qty: 4)
        let b = try Shop.order(context, "b", qty: 5)
        try context.save()
        try b.set("qty", Int64(0))
        let request = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty > 3"))
        #expect(try Shop.codes(context.fetch(request)) == ["a"])
        #expect(try context.count(request) == 1)
    }

    @Test(arguments: Backend.everyStore)
    func deletedObjectsAreNotReturnedBeforeTheSave(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        try Shop.order(context, "a", qty: 1)
        let b = try Shop.order(context, "b", qty: 2)
        try context.save()
        try context.delete(b)
        let request = FetchRequest(entityName: "Order")
        #expect(try Shop.codes(context.fetch(request)) == ["a"])
        #expect(try context.count(request) == 1)
    }

    @Test(arguments: Backend.everyStore)
    func sortOffsetAndLimitApplyAfterTheMerge(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        for (code, qty) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] { try Shop.order(context, code, qty: Int64(qty)) }
        try context.save()
        let a = try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code == 'a'")))[0]
        try a.set("qty", Int64(9))                       // a moves from first to last
        try Shop.order(context, "e", qty: 0)             // an unsaved insert sorts first
        let request = FetchRequest(entityName: "Order", sortKeys: [SortKey("qty")], fetchLimit: 3, fetchOffset: 1)
        #expect(try Shop.codes(context.fetch(request)) == ["b", "c", "d"])
        #expect(try context.count(request) == 3)
        var descending = request
        descending.sortKeys = [SortKey("qty", ascending: false)]
        descending.fetchOffset = 0
        descending.fetchLimit = 2
        #expect(try Shop.codes(context.fetch(descending)) == ["a", "d"])
    }

    @Test(arguments: Backend.everyStore)
    func anUnsavedChangeToARelatedObjectChangesAKeyPathMatch(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let ann = try Shop.customer(context, "Ann")
        try Shop.order(context, "a", qty: 1, customer: ann)
        try context.save()
        try ann.set("name", "Anna")
        let byNewName = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "customer.name == 'Anna'"))
        let byOldName = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "customer.name == 'Ann'"))
        #expect(try Shop.codes(context.fetch(byNewName)) == ["a"])
        #expect(try context.fetch(byOldName).isEmpty)
        #expect(try context.count(byNewName) == 1)
    }

    @Test(arguments: Backend.everyStore)
    func unsavedMembershipCountsInToManyPredicates(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let ann = try Shop.customer(context, "Ann")
        try Shop.customer(context, "Bob")
        let a = try Shop.order(context, "a", qty: 7)
        try context.save()
        try a.setRelatedObject(ann, forKey: "customer")
        let request = FetchRequest(entityName: "Customer", predicate: try FetchPredicate(format: "ANY orders.qty > 5"))
        #expect(try context.fetch(request).map { try $0.get("name", as: String.self) } == ["Ann"])
        let counted = FetchRequest(entityName: "Customer", predicate: try FetchPredicate(format: "orders.@count == 0"))
        #expect(try context.fetch(counted).map { try $0.get("name", as: String.self) } == ["Bob"])
    }
}

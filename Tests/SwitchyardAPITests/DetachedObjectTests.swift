import Foundation
import Switchyard
import Testing

/// Writes to an object that can never be saved throw instead of vanishing. Core Data raises for a deleted
/// object's changes after the deletion is processed and for objects whose context is gone; Switchyard throws
/// `ContextError.detachedObject` / `.deletedObject`.
@Suite struct DetachedObjectTests {
    @Test(arguments: Backend.everyStore)
    func writesToADeletedUnsavedInsertThrow(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let ann = try Shop.customer(context, "Ann")
        let order = try Shop.order(context, "a", qty: 1)
        let tag = try context.insert("Tag")
        try tag.set("label", "red")
        try context.delete(order)
        expectContextError("set", isDetached) { try order.set("qty", Int64(2)) }
        expectContextError("setRelatedObject", isDetached) { try order.setRelatedObject(ann, forKey: "customer") }
        expectContextError("addRelatedObject", isDetached) { try order.addRelatedObject(tag, forKey: "tags") }
        expectContextError("relatedObject", isDetached) { _ = try order.relatedObject(forKey: "customer") }
        expectContextError("relatedObjects", isDetached) { _ = try order.relatedObjects(forKey: "tags") }
        // Pointing a live object at it is refused too.
        expectContextError("add the deleted object", isDetached) { try ann.addRelatedObject(order, forKey: "orders") }
        try context.save()
        #expect(try context.count(FetchRequest(entityName: "Order")) == 0)
    }

    @Test(arguments: Backend.everyStore)
    func writesToADeletedSavedObjectThrowUntilRollback(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let order = try Shop.order(context, "a", qty: 1)
        try context.save()
        try context.delete(order)
        expectContextError("set", isDeleted) { try order.set("qty", Int64(2)) }
        context.rollback()
        try order.set("qty", Int64(3))
        try context.save()
        try context.delete(order)
        try context.save()
        expectContextError("set after the deletion was saved", isDetached) { try order.set("qty", Int64(4)) }
    }

    @Test(arguments: Backend.everyStore)
    func anObjectWhoseContextIsGoneThrowsForWritesAndRelationshipReads(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        var order: ManagedObject?
        var customer: ManagedObject?
        do {
            let context = ObjectContext(coordinator: coordinator)
            customer = try Shop.customer(context, "Ann")
            order = try Shop.order(context, "a", qty: 1, customer: customer)
            try context.save()
        }
        let detached = try #require(order)
        #expect(detached.context == nil)
        expectContextError("set", isDetached) { try detached.set("qty", Int64(2)) }
        expectContextError("to-one read", isDetached) { _ = try detached.relatedObject(forKey: "customer") }
        expectContextError("to-many read", isDetached) { _ = try customer!.relatedObjects(forKey: "orders") }
        expectContextError("setRelatedObject", isDetached) { try detached.setRelatedObject(nil, forKey: "customer") }
        // Nothing was written behind the caller's back.
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try fresh.fetch(FetchRequest(entityName: "Order"))[0].get("qty", as: Int64.self) == 1)
    }

    /// An unsaved insert kept after its context is released: no context, and a write is refused (it could
    /// never be saved), on every backend, whether or not the context had assigned it to a store.
    @Test(arguments: Backend.everyStore)
    func anUnsavedInsertWhoseContextIsGoneThrowsForWrites(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        var pending: [ManagedObject] = []
        do {
            let context = ObjectContext(coordinator: coordinator)
            pending.append(try Shop.customer(context, "Bea"))
            let assigned = try Shop.customer(context, "Cy")
            try context.assign(assigned, to: try #require(coordinator.stores(serving: "Customer").first))
            pending.append(assigned)
        }
        for object in pending {
            #expect(object.context == nil)
            #expect(object.isInserted)
            expectContextError("set on \(object.objectID)", isDetached) { try object.set("name", "Dee") }
        }
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Customer")) == 0)
    }
}

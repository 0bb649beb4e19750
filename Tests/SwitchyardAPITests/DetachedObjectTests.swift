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

    /// Objects leave a context while it lives (a deleted object once the deletion is saved, a rolled-back
    /// insert) and outlive it; each time the last object of a store leaves, the next one there comes back
    /// into the context working. After the context is gone, every object kept — live or taken out — refuses
    /// writes and is released without it, and what was saved is what a new context reads.
    @Test(arguments: Backend.everyStore)
    func objectsLeavingAndOutlivingTheirContextStayConsistent(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        var taken: [ManagedObject] = []
        var kept: ManagedObject?
        do {
            let context = ObjectContext(coordinator: coordinator)
            for round in 0..<3 {
                let order = try Shop.order(context, "r\(round)", qty: Int64(round))
                try context.save()
                #expect(order.context === context)
                try order.set("qty", Int64(round + 10))
                try context.save()
                try context.delete(order)
                try context.save()
                #expect(order.context == nil)
                let unsaved = try Shop.order(context, "u\(round)", qty: 1)
                context.rollback()
                #expect(unsaved.context == nil)
                expectContextError("set on the rolled-back insert", isDetached) { try unsaved.set("qty", Int64(2)) }
                // Round 1's objects are kept past the context; the others are released now, while it lives.
                if round == 1 { taken += [order, unsaved] }
            }
            let order = try Shop.order(context, "kept", qty: 7)
            try context.save()
            try order.set("qty", Int64(8))
            try context.save()
            #expect(order.context === context)
            kept = order
        }
        let last = try #require(kept)
        #expect(last.context == nil)
        expectContextError("set on an object whose context is gone", isDetached) { try last.set("qty", Int64(9)) }
        for object in taken {
            #expect(object.context == nil)
            expectContextError("set on \(object.objectID)", isDetached) { try object.set("qty", Int64(9)) }
        }
        taken.removeAll()
        kept = nil
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try fresh.fetch(FetchRequest(entityName: "Order")).map { try $0.get("qty", as: Int64.self) } == [8])
    }
}

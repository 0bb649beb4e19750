import Foundation
import Switchyard
import Synchronization
import Testing

/// Did-save notifications and merging, as Core Data's `NSManagedObjectContextDidSave` and
/// `mergeChanges(fromContextDidSave:)` give them: what a save changed, per store, to streams and callbacks;
/// another context brought up to date under Core Data's merge policies.
@Suite struct SaveNotificationTests {
    /// A coordinator with three orders saved: A1 (qty 1), A2 (qty 2), A3 (qty 3).
    static func seeded(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for i in 1...3 { try Shop.order(context, "A\(i)", qty: Int64(i)) }
        try context.save()
        return coordinator
    }

    static func order(_ context: ObjectContext, _ code: String) throws -> ManagedObject {
        try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code == %@", code))).first)
    }

    /// The notification names each inserted object by its permanent ID, each updated object with the keys it
    /// changed, and each deleted object, for the store that holds them; a stream and a callback get the same.
    @Test(arguments: Backend.everyStore)
    func aSaveIsPublishedToStreamsAndCallbacks(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, in: dir)
        let received = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in received.withLock { $0.append(note) } }
        let stream = coordinator.saveNotifications()

        let writer = ObjectContext(coordinator: coordinator)
        let a1 = try Self.order(writer, "A1"), a2 = try Self.order(writer, "A2")
        try a1.set("qty", Int64(10))
        try a1.set("width", 2.5)
        try writer.delete(a2)
        let new = try Shop.order(writer, "B1", qty: 7)
        try writer.save()

        var iterator = stream.makeAsyncIterator()
        let streamed = try #require(await iterator.next())
        let called = try #require(received.withLock { $0.first })
        #expect(received.withLock { $0.count } == 1)
        for note in [streamed, called] {
            #expect(note.stores.count == 1)
            let store = try #require(note.stores.first)
            #expect(store.configuration == "Main")
            #expect(store.storeIdentifier == coordinator.stores[0].identifier)
            #expect(store.inserted == [new.objectID])
            #expect(!new.objectID.isTemporary)
            #expect(store.updated == [a1.objectID: ["qty", "width"]])
            #expect(store.deleted == [a2.objectID])
            #expect(note.insertedObjectIDs == [new.objectID])
            #expect(note.updatedObjectIDs == [a1.objectID])
            #expect(note.deletedObjectIDs == [a2.objectID])
        }
        // A save with nothing to write publishes nothing; a cancelled observation hears no more.
        try writer.save()
        observation.cancel()
        try Self.order(writer, "A3").set("qty", Int64(30))
        try writer.save()
        #expect(received.withLock { $0.count } == 1)
        let next = try #require(await iterator.next())
        #expect(next.updatedObjectIDs.count == 1)
    }

    /// As in Core Data, both sides of a changed relationship are reported updated: the order whose to-one
    /// changed, and the customers whose to-many gained or lost it (and, for a many-to-many, both sides' lists).
    @Test(arguments: Backend.everyStore)
    func bothSidesOfARelationshipAreReported(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann"), bob = try Shop.customer(context, "Bob")
        let order = try Shop.order(context, "A1", qty: 1, customer: ann)
        let tag = try context.insert("Tag")
        try tag.set("label", "t")
        try context.save()
        let received = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in received.withLock { $0.append(note) } }
        defer { observation.cancel() }
        try order.setRelatedObject(bob, forKey: "customer")
        try order.addRelatedObject(tag, forKey: "tags")
        try context.save()
        let updated = try #require(received.withLock { $0.first }?.stores.first?.updated)
        #expect(updated[order.objectID] == ["customer", "tags"])
        #expect(updated[ann.objectID] == ["orders"])
        #expect(updated[bob.objectID] == ["orders"])
        #expect(updated[tag.objectID] == ["orders"])
    }

    /// Core Data's merge of a did-save notification: objects another context updated show the saved values,
    /// deleted ones leave the context (writing to them throws detachedObject, fetches skip them), inserted ones
    /// are found by fetches; all without the merging context re-fetching anything itself.
    @Test(arguments: Backend.everyStore)
    func mergeBringsAnotherContextUpToDate(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, in: dir)
        let reader = ObjectContext(coordinator: coordinator)
        let a1 = try Self.order(reader, "A1"), a2 = try Self.order(reader, "A2")
        let pending = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in pending.withLock { $0.append(note) } }
        defer { observation.cancel() }

        let writer = ObjectContext(coordinator: coordinator)
        try Self.order(writer, "A1").set("qty", Int64(11))
        try writer.delete(Self.order(writer, "A2"))
        try Shop.order(writer, "C1", qty: 5)
        try writer.save()

        #expect(try a1.get("qty", as: Int64.self) == 1)   // stale until merged
        for note in pending.withLock({ $0 }) { try reader.mergeChanges(from: note) }
        #expect(try a1.get("qty", as: Int64.self) == 11)
        expectContextError("write to an object deleted by another save", isDetached) { try a2.set("qty", Int64(9)) }
        let codes = try Shop.codes(reader.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")])))
        #expect(codes == ["A1", "A3", "C1"])
        // The merged object saves again without a conflict: its version is the saved one.
        try a1.set("qty", Int64(12))
        try reader.save()
        #expect(try Self.order(ObjectContext(coordinator: coordinator), "A1").get("qty", as: Int64.self) == 12)
    }

    /// The merge policies on one object changed on both sides: the reader changed qty; the writer changed qty
    /// and width and saved. `.error` refuses and changes nothing; `.storeWins` takes both saved values;
    /// `.contextWins` keeps the reader's qty and takes the saved width, and the reader's save then succeeds
    /// (Core Data's by-property object trump); `.rollback` drops the reader's change.
    @Test(arguments: Backend.everyStore, [MergePolicy.error, .storeWins, .contextWins, .rollback])
    func mergePoliciesResolveBothSidesChangingAnObject(_ backend: Backend, _ policy: MergePolicy) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, in: dir)
        let reader = ObjectContext(coordinator: coordinator)
        let mine = try Self.order(reader, "A1")
        let other = try Self.order(reader, "A3")
        try mine.set("qty", Int64(100))
        try mine.set("code", "A1-mine")
        let pending = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in pending.withLock { $0.append(note) } }
        defer { observation.cancel() }
        let writer = ObjectContext(coordinator: coordinator)
        let theirs = try Self.order(writer, "A1")
        try theirs.set("qty", Int64(200))
        try theirs.set("width", 9.5)
        try Self.order(writer, "A3").set("qty", Int64(33))
        try writer.save()
        let note = try #require(pending.withLock { $0.first })

        if policy == .error {
            do {
                try reader.mergeChanges(from: note, policy: .error)
                Issue.record("a merge over unsaved changes succeeded under .error")
            } catch let error as ContextError {
                guard case let .mergeConflict(objects) = error else { Issue.record("\(error)"); return }
                #expect(objects == [mine.objectID.description])
                #expect(error.localizedDescription.contains("nothing was merged"))
            }
            // Nothing merged: not even the object without local changes.
            #expect(try other.get("qty", as: Int64.self) == 3)
            #expect(try mine.get("qty", as: Int64.self) == 100)
            return
        }
        try reader.mergeChanges(from: note, policy: policy)
        #expect(try other.get("qty", as: Int64.self) == 33)
        #expect(try mine.get("width", as: Double.self) == 9.5)
        switch policy {
        case .storeWins:
            #expect(try mine.get("qty", as: Int64.self) == 200)
            #expect(try mine.get("code", as: String.self) == "A1-mine")   // only the writer's keys are taken
        case .contextWins:
            #expect(try mine.get("qty", as: Int64.self) == 100)
            #expect(try mine.get("code", as: String.self) == "A1-mine")
        case .rollback:
            #expect(try mine.get("qty", as: Int64.self) == 200)
            #expect(try mine.get("code", as: String.self) == "A1")
            #expect(!mine.hasChanges)
        case .error:
            break
        }
        // Whatever stayed saves without a conflict, on top of the writer's save.
        try reader.save()
        let saved = try Self.order(ObjectContext(coordinator: coordinator), policy == .rollback ? "A1" : "A1-mine")
        #expect(try saved.get("width", as: Double.self) == 9.5)
        #expect(try saved.get("qty", as: Int64.self) == (policy == .contextWins ? 100 : 200))
    }

    /// A notification from a coordinator with another model is refused, naming both models' entities.
    @Test func mergingFromAnotherModelIsRefused() throws {
        let dir = try TempDir()
        let shop = try Shop.coordinator(.memory, in: dir)
        let coupon = EntityDescription(name: "Coupon", attributes: [AttributeDescription(name: "code", type: .string)])
        let other = StoreCoordinator(model: try ObjectModel(
            entities: [coupon], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Coupon"])]))
        try other.addStore(.memory, configuration: "Main")
        let pending = Mutex<[SaveNotification]>([])
        let observation = other.addSaveObserver { note in pending.withLock { $0.append(note) } }
        defer { observation.cancel() }
        let context = ObjectContext(coordinator: other)
        try context.insert("Coupon").set("code", "X")
        try context.save()
        let note = try #require(pending.withLock { $0.first })
        expectContextError("merge from another model", {
            guard case let .foreignSaveNotification(entities, expected) = $0 else { return false }
            return entities == ["Coupon"] && expected == ["Customer", "Order", "Tag"]
        }) { try ObjectContext(coordinator: shop).mergeChanges(from: note) }
    }
}

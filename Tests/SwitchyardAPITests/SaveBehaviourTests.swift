import Foundation
import Switchyard
import Testing

/// What `save()` promises beyond a single object: uniqueness constraints, all-or-nothing conflict checks
/// across stores, and contexts on several tasks sharing one coordinator. Each test names the Core Data
/// behaviour it matches.
@Suite struct SaveBehaviourTests {
    /// One entity `Coupon` (code unique, amount), one configuration `Main`.
    static func couponCoordinator(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        let coupon = EntityDescription(
            name: "Coupon",
            attributes: [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "amount", type: .integer64)],
            uniquenessConstraints: [["code"]])
        return try backend.coordinator(ObjectModel(entities: [coupon], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Coupon"])]), in: dir)
    }

    @discardableResult
    static func coupon(_ context: ObjectContext, _ code: String?, amount: Int64 = 0) throws -> ManagedObject {
        let coupon = try context.insert("Coupon")
        try coupon.set("code", code)
        try coupon.set("amount", amount)
        return coupon
    }

    static func savedCodes(_ coordinator: StoreCoordinator) throws -> [String] {
        try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Coupon")).map { try $0.get("code", as: String.self) ?? "nil" }.sorted()
    }

    /// Core Data's transient attributes: the object keeps their values in memory, through saves, and the store
    /// never holds them, whether the object is new or saved and on every backend; predicates on the stored
    /// attributes are unaffected; a fresh context reads nil (Core Data applies a default on insert, not on fetch).
    @Test(arguments: Backend.everyStore)
    func transientAttributesStayInMemoryAndAreNeverStored(_ backend: Backend) throws {
        let note = EntityDescription(name: "Note", attributes: [
            AttributeDescription(name: "title", type: .string, isOptional: false),
            AttributeDescription(name: "draft", type: .string, isTransient: true),
            AttributeDescription(name: "views", type: .integer64, isTransient: true, defaultValue: .integer(0)),
        ])
        let dir = try TempDir()
        let coordinator = try backend.coordinator(
            ObjectModel(entities: [note], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Note"])]), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let new = try context.insert("Note")
        try new.set("title", "a")
        try new.set("draft", "unsent")
        try new.set("views", Int64(3))
        try context.save()                                                  // a new object with transient values
        #expect(try new.get("draft", as: String.self) == "unsent")
        #expect(try new.get("views", as: Int64.self) == 3)
        try new.set("draft", "edited")                                      // a saved object: only a transient changes
        try context.save()
        try new.set("title", "b")
        try new.set("views", Int64(4))                                      // and one beside a stored attribute
        try context.save()
        #expect(try new.get("draft", as: String.self) == "edited")
        #expect(try new.get("views", as: Int64.self) == 4)
        let fresh = ObjectContext(coordinator: coordinator)
        let stored = try fresh.fetch(FetchRequest(entityName: "Note"))
        #expect(stored.count == 1)
        #expect(try stored.first?.get("title", as: String.self) == "b")
        #expect(try stored.first?.get("draft", as: String.self) == nil, "\(backend): a transient was stored")
        #expect(try stored.first?.get("views", as: Int64.self) == nil, "\(backend): a transient was stored")
        #expect(try fresh.count(FetchRequest(entityName: "Note", predicate: FetchPredicate(format: "title == 'b'"))) == 1)
    }

    /// Core Data's uniqueness constraints under the default `NSErrorMergePolicy`: a save that would leave two
    /// objects with the same constrained value fails (`NSConstraintConflict`) and writes nothing, whether the
    /// other object is new or saved; values freed in the same save (renamed or deleted) can be taken; nil
    /// values never collide.
    @Test(arguments: Backend.everyStore)
    func uniquenessConstraintsRefuseDuplicatesAndWriteNothing(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.couponCoordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        func expectViolation(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                try context.save()
                Issue.record("\(what): saved", sourceLocation: sourceLocation)
            } catch let error as StoreError {
                guard case let .uniquenessViolation(_, _, entity, properties, _) = error else { Issue.record("\(error)", sourceLocation: sourceLocation); return }
                #expect(entity == "Coupon" && properties == ["code"], sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
            }
        }
        let first = try Self.coupon(context, "A")
        let twin = try Self.coupon(context, "A")
        try Self.coupon(context, "B")
        expectViolation("two new objects")
        #expect(try Self.savedCodes(coordinator) == [])
        try context.delete(twin)
        try context.save()
        #expect(try Self.savedCodes(coordinator) == ["A", "B"])

        let late = try Self.coupon(context, "A")
        expectViolation("a new object against a saved one")
        #expect(try Self.savedCodes(coordinator) == ["A", "B"])
        try context.delete(late)

        try first.set("code", "X")                   // frees A ...
        try Self.coupon(context, "A", amount: 2)    // ... for a new object in the same save
        try context.save()
        #expect(try Self.savedCodes(coordinator) == ["A", "B", "X"])

        let other = ObjectContext(coordinator: coordinator)
        try other.delete(try Relations.object(other, "Coupon", "X", key: "code"))
        try Self.coupon(other, "X", amount: 3)       // deleted and re-inserted in one save
        try Self.coupon(other, nil)
        try Self.coupon(other, nil)                  // nil never collides
        try other.save()
        #expect(try Self.savedCodes(coordinator) == ["A", "B", "X", "nil", "nil"])
        #expect(try Relations.object(ObjectContext(coordinator: coordinator), "Coupon", "X", key: "code").get("amount", as: Int64.self) == 3)
    }

    /// Values of a uniqueness constraint passed around between saved objects in one save — swapped between two,
    /// rotated among three, handed along a chain in either order — save on every backend, since no two objects
    /// hold one value once the save is done (SQLite's unique index checks each row as it is written: the
    /// SQLite store refused these until 2026-12-03). A value two objects end up sharing is still refused, and
    /// nothing of that save is written.
    @Test(arguments: Backend.everyStore)
    func constrainedValuesSwappedInOneSaveAreNoConflict(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.couponCoordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let coupons = try (1...5).map { try Self.coupon(context, "C\($0)", amount: Int64($0)) }
        try context.save()
        /// code -> amount, as stored.
        func stored() throws -> [String: Int64] {
            var result: [String: Int64] = [:]
            for coupon in try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Coupon")) {
                result[try #require(try coupon.get("code", as: String.self))] = try coupon.get("amount", as: Int64.self)
            }
            return result
        }

        try coupons[0].set("code", "C2")    // a swap
        try coupons[1].set("code", "C1")
        try context.save()
        #expect(try stored() == ["C1": 2, "C2": 1, "C3": 3, "C4": 4, "C5": 5])

        try coupons[2].set("code", "C4")    // a rotation of three
        try coupons[3].set("code", "C5")
        try coupons[4].set("code", "C3")
        try context.save()
        #expect(try stored() == ["C1": 2, "C2": 1, "C3": 5, "C4": 3, "C5": 4])

        try coupons[0].set("code", "C1")    // a chain, the taker first: C2 -> C1 while C1 still holds it
        try coupons[1].set("code", "C0")
        try context.save()
        #expect(try stored() == ["C0": 2, "C1": 1, "C3": 5, "C4": 3, "C5": 4])

        try coupons[2].set("code", "C5")    // a real duplicate among swapped values: refused, nothing written
        try coupons[3].set("code", "C5")
        try coupons[4].set("code", "C4")
        #expect {
            try context.save()
        } throws: { error in
            guard case StoreError.uniquenessViolation(_, _, "Coupon", ["code"], _)? = error as? StoreError else { return false }
            return true
        }
        #expect(try stored() == ["C0": 2, "C1": 1, "C3": 5, "C4": 3, "C5": 4])
    }

    /// Core Data checks optimistic locking for every store before writing any (one `NSMergeConflict` list
    /// for the whole save): a conflict in the second store leaves the first store unwritten too.
    @Test(arguments: Backend.everyStore, Backend.everyStore)
    func aConflictInOneStoreWritesNoStore(_ catalogBackend: Backend, _ reviewBackend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try TwoStores.model())
        try catalogBackend.add(to: coordinator, configuration: "Catalog", in: dir.url)
        try reviewBackend.add(to: coordinator, configuration: "Reviews", in: dir.url)
        try FetchBehaviourTests.seedReviews(coordinator)
        let mine = ObjectContext(coordinator: coordinator)
        let theirs = ObjectContext(coordinator: coordinator)
        let product = try Relations.object(mine, "Product", "A", key: "sku")
        let review = try mine.fetch(FetchRequest(entityName: "Review", predicate: try FetchPredicate(format: "stars == 5")))[0]
        try theirs.existingObject(with: review.objectID).set("stars", Int16(4))
        try theirs.save()
        try product.set("name", "renamed")
        try review.set("stars", Int16(1))
        do {
            try mine.save()
            Issue.record("the conflicting save succeeded")
        } catch let error as StoreError {
            guard case .conflict = error else { Issue.record("\(error)"); return }
        }
        let check = ObjectContext(coordinator: coordinator)
        #expect(try Relations.object(check, "Product", "A", key: "sku").get("name", as: String.self) == "Product A")
        #expect(try check.existingObject(with: review.objectID).get("stars", as: Int.self) == 4)
    }

    /// Core Data's one coordinator shared by several private-queue contexts: contexts on concurrent tasks
    /// insert and save at once; every object is saved exactly once with a primary key of its own.
    @Test(arguments: Backend.everyStore)
    func contextsOnSeveralTasksShareOneCoordinator(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for batch in 0..<5 {
                        let context = ObjectContext(coordinator: coordinator)
                        for i in 0..<20 { try Shop.order(context, "t\(task)-\(batch)-\(i)", qty: Int64(i)) }
                        try context.save()
                        #expect(try context.count(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code BEGINSWITH %@", "t\(task)-"))) == (batch + 1) * 20)
                    }
                }
            }
            try await group.waitForAll()
        }
        let all = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order"))
        #expect(all.count == 400)
        #expect(Set(all.map(\.objectID)).count == 400)
        #expect(Set(try Shop.codes(all)).count == 400)
    }

    /// Core Data never reuses a primary key (`Z_PRIMARYKEY.Z_MAX` only grows), so an object URI kept by the
    /// app can never name a different object later — not after the newest object is deleted, nor after the
    /// store is reopened.
    @Test(arguments: Backend.everyStore)
    func primaryKeysAreNeverReused(_ backend: Backend) throws {
        let dir = try TempDir()
        var keys: [Int64] = []
        var deleted: ObjectID?
        do {
            let coordinator = try Shop.coordinator(backend, in: dir)
            let context = ObjectContext(coordinator: coordinator)
            let a = try Shop.order(context, "a", qty: 1)
            let b = try Shop.order(context, "b", qty: 1)
            try context.save()
            deleted = b.objectID
            try context.delete(b)
            try context.save()
            let c = try Shop.order(context, "c", qty: 1)
            try context.save()
            keys = [a, c].compactMap(\.objectID.primaryKey)
            let deletedKey = try #require(deleted?.primaryKey)
            #expect(keys.count == 2 && !keys.contains(deletedKey))
            try context.delete(c)
            try context.save()
            if backend == .memory {
                let d = try Shop.order(context, "d", qty: 1)
                try context.save()
                #expect(d.objectID.primaryKey.map { $0 > keys.max()! } == true)
            }
        }
        guard backend != .memory else { return }
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let d = try Shop.order(context, "d", qty: 1)
        try context.save()
        #expect(d.objectID.primaryKey.map { $0 > keys.max()! } == true)
        expectContextError("the deleted object's URI", { if case .objectNotFound = $0 { return true } else { return false } }) {
            _ = try context.existingObject(with: try ObjectID(uri: deleted!.uriRepresentation))
        }
    }
}

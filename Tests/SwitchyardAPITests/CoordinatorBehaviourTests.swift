import Foundation
import Switchyard
import Testing

/// What `StoreCoordinator` promises a user: adding stores, routing objects to them, narrowing fetches to some
/// of them, and object IDs that survive as URIs. Each test names the `NSPersistentStoreCoordinator` behaviour
/// it matches.
@Suite struct CoordinatorBehaviourTests {
    static let fileBackends: [Backend] = [.sqlite, .lmdb]

    /// Core Data: `addPersistentStore(ofType:configurationName:at:options:)` fails for a configuration the model
    /// does not have, and creates no file.
    @Test(arguments: Backend.everyStore)
    func addStoreRefusesAnUnknownConfiguration(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        expectCoordinatorError("unknown configuration", {
            guard case let .unknownConfiguration(name, available) = $0 else { return false }
            return name == "Nope" && available.contains("Main")
        }) { try backend.add(to: coordinator, configuration: "Nope", in: dir.url) }
        #expect(coordinator.stores.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    /// Core Data: adding the same store file twice fails ("Can't add the same store twice"); the first store
    /// stays and keeps working.
    @Test(arguments: fileBackends)
    func addStoreRefusesTheSameFileTwice(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let first = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "shop")
        expectCoordinatorError("same file twice", {
            guard case let .storeAlreadyAdded(path, _) = $0 else { return false }
            return path.contains("shop")
        }) { try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "shop") }
        #expect(coordinator.stores.count == 1)
        #expect(coordinator.stores.first === first)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "a", qty: 1)
        try context.save()
        #expect(try first.count(StoreFetchRequest(entityName: "Order")) == 1)
    }

    /// Core Data: adding a file that is not a store of the given type fails (`NSPersistentStoreInvalidTypeError`
    /// and friends) and leaves the file as it was.
    @Test(arguments: fileBackends)
    func addStoreRefusesAFileThatIsNotAStore(_ backend: Backend) throws {
        let dir = try TempDir()
        let junk = Data("this is not a database, just some text long enough to look like a header".utf8)
        let url: URL
        let junkFile: URL
        switch backend {
        case .sqlite:
            url = dir.url.appendingPathComponent("junk.sqlite")
            junkFile = url
        default:
            url = dir.url.appendingPathComponent("junk.lmdb")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            junkFile = url.appendingPathComponent("data.mdb")
        }
        try junk.write(to: junkFile)
        let coordinator = StoreCoordinator(model: try Shop.model())
        do {
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url)
            Issue.record("a junk file was accepted as a \(backend) store")
        } catch let error as StoreError {
            guard case .notAStore = error else { Issue.record("\(error)"); return }
        }
        #expect(coordinator.stores.isEmpty)
        #expect(try Data(contentsOf: junkFile) == junk)
    }

    /// Core Data: with one store for an entity's configuration, a new object is saved to that store without
    /// `assign(_:to:)`, and its permanent ID names that store.
    @Test(arguments: Backend.everyStore)
    func oneStoreTakesEveryNewObjectOfItsConfiguration(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        #expect(coordinator.store(withIdentifier: store.identifier) === store)
        #expect(coordinator.stores(serving: "Order").map(\.identifier) == [store.identifier])
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann")
        let order = try Shop.order(context, "a", qty: 1, customer: ann)
        try context.save()
        for object in [ann, order] {
            #expect(object.persistentStore === store)
            #expect(object.objectID.storeIdentifier == store.identifier)
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Customer")) == 1)
        #expect(try store.count(StoreFetchRequest(entityName: "Order")) == 1)
    }

    /// Core Data: saving an object whose entity no store serves fails ("This NSPersistentStoreCoordinator has no
    /// persistent stores ... cannot perform a save operation" for the entity's configuration), and nothing of
    /// that save is written; fetching such an entity fails the same way.
    @Test(arguments: Backend.everyStore)
    func anEntityWithoutAStoreIsAnErrorAtSaveAndFetch(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try TwoStores.model())
        let catalog = try backend.add(to: coordinator, configuration: "Catalog", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let product = try context.insert("Product")
        try product.set("sku", "A")
        let review = try context.insert("Review")
        try review.set("sku", "A")
        expectCoordinatorError("save", {
            guard case let .noStoreForEntity(entity, configurations) = $0 else { return false }
            return entity == "Review" && configurations == ["Reviews"]
        }) { try context.save() }
        #expect(try catalog.count(StoreFetchRequest(entityName: "Product")) == 0)
        #expect(context.hasChanges)
        expectCoordinatorError("fetch", {
            if case .noStoreForEntity(entity: "Review", _) = $0 { return true } else { return false }
        }) { _ = try context.fetch(FetchRequest(entityName: "Review")) }
        expectCoordinatorError("fetch of an unknown entity", { $0 == .unknownEntity("Nope") }) {
            _ = try coordinator.fetchRows(FetchRequest(entityName: "Nope"))
        }
        // Dropping the object the store is missing for lets the rest be saved.
        try context.delete(review)
        try context.save()
        #expect(try catalog.count(StoreFetchRequest(entityName: "Product")) == 1)
    }

    /// Core Data: the coordinator's `persistentStores` decide where an entity's objects live, at every moment:
    /// which stores serve an entity (alone, or with its subentities) follows each store added or removed, asked
    /// again and again (the coordinator remembers its answers between changes), and an unknown name has none.
    @Test(arguments: Backend.everyStore)
    func storesServingAnEntityFollowStoresAddedAndRemoved(_ backend: Backend) throws {
        let dir = try TempDir()
        let model = try ObjectModel(
            entities: [
                EntityDescription(name: "Vehicle", attributes: [AttributeDescription(name: "plate", type: .string)]),
                EntityDescription(name: "Car", parent: "Vehicle", attributes: [AttributeDescription(name: "seats", type: .integer64)]),
                EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)]),
            ],
            configurations: [
                ConfigurationDescription(name: "Base", entityNames: ["Vehicle"]),
                ConfigurationDescription(name: "Cars", entityNames: ["Car"]),
                ConfigurationDescription(name: "Tags", entityNames: ["Tag"]),
            ])
        let coordinator = StoreCoordinator(model: model)
        func serving(_ entity: String, subentities: Bool = false) -> [UUID] {
            let first = coordinator.stores(serving: entity, includingSubentities: subentities).map(\.identifier)
            let again = coordinator.stores(serving: entity, includingSubentities: subentities).map(\.identifier)
            #expect(first == again, "\(entity): asked twice")
            return first
        }
        #expect(serving("Vehicle").isEmpty && serving("Car", subentities: true).isEmpty)
        let base = try backend.add(to: coordinator, configuration: "Base", in: dir.url)
        #expect(serving("Vehicle") == [base.identifier])
        #expect(serving("Vehicle", subentities: true) == [base.identifier])
        #expect(serving("Car").isEmpty)
        let cars = try backend.add(to: coordinator, configuration: "Cars", in: dir.url)
        #expect(serving("Vehicle") == [base.identifier])
        #expect(serving("Vehicle", subentities: true) == [base.identifier, cars.identifier])
        #expect(serving("Car") == [cars.identifier])
        #expect(serving("Tag").isEmpty)
        try coordinator.removeStore(base)
        #expect(serving("Vehicle").isEmpty)
        #expect(serving("Vehicle", subentities: true) == [cars.identifier])
        #expect(serving("Car") == [cars.identifier])
        let tags = try backend.add(to: coordinator, configuration: "Tags", in: dir.url)
        #expect(serving("Tag") == [tags.identifier])
        #expect(serving("Car", subentities: true) == [cars.identifier])
        #expect(serving("Nope").isEmpty && serving("Nope", subentities: true).isEmpty)
    }

    /// Core Data with two stores for one configuration (e.g. a private and a shared store, as in fatbobman's
    /// multi-store setups): a new object must be placed with `assign(_:to:)`, else the save fails; each object
    /// is saved in its store, and fetches return both stores' objects merged under the sort.
    @Test(arguments: Backend.everyStore)
    func twoStoresForOneConfigurationNeedAssign(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let privateStore = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "private")
        let sharedStore = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "shared")
        #expect(coordinator.stores(serving: "Order").count == 2)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Shop.order(context, "a", qty: 3)
        let b = try Shop.order(context, "b", qty: 1)
        let c = try Shop.order(context, "c", qty: 2)
        try context.assign(a, to: privateStore)
        try context.assign(b, to: sharedStore)
        expectCoordinatorError("unassigned object", {
            guard case let .ambiguousStore(entity, _, stores) = $0 else { return false }
            return entity == "Order" && stores.count == 2
        }) { try context.save() }
        #expect(try privateStore.count(StoreFetchRequest(entityName: "Order")) == 0)
        #expect(try sharedStore.count(StoreFetchRequest(entityName: "Order")) == 0)
        try context.assign(c, to: privateStore)
        try context.save()
        #expect(a.objectID.storeIdentifier == privateStore.identifier)
        #expect(b.objectID.storeIdentifier == sharedStore.identifier)
        #expect(c.persistentStore === privateStore)
        #expect(try privateStore.count(StoreFetchRequest(entityName: "Order")) == 2)
        #expect(try sharedStore.count(StoreFetchRequest(entityName: "Order")) == 1)
        let fresh = ObjectContext(coordinator: coordinator)
        let all = FetchRequest(entityName: "Order", sortKeys: [SortKey("qty")])
        #expect(try Shop.codes(fresh.fetch(all)) == ["b", "c", "a"])
        var limited = all
        limited.fetchOffset = 1
        limited.fetchLimit = 1
        #expect(try Shop.codes(fresh.fetch(limited)) == ["c"])
        #expect(try fresh.count(all) == 3)
        // A related object must live in the same store: a to-one into the other store is refused at save.
        let ann = try Shop.customer(fresh, "Ann")
        try fresh.assign(ann, to: sharedStore)
        let freshA = try fresh.existingObject(with: a.objectID)
        try freshA.setRelatedObject(ann, forKey: "customer")
        expectContextError("to-one across stores", {
            if case .crossStoreRelationship = $0 { return true } else { return false }
        }) { try fresh.save() }
    }

    /// Core Data merges the results of several stores under the request's sort descriptors, key paths
    /// through to-one relationships included, so the order (and which objects a limit keeps) does not depend
    /// on which store holds what — nor on whether the context has unsaved changes.
    @Test(arguments: Backend.everyStore)
    func aKeyPathSortOrdersResultsMergedFromSeveralStores(_ backend: Backend) throws {
        let dir = try TempDir()
        let (coordinator, one, two) = try Shop.twoStores(backend, in: dir, "one", "two")
        let context = ObjectContext(coordinator: coordinator)
        for (store, name, code) in [(one, "D", "o1"), (one, "A", "o2"), (two, "C", "o3"), (two, "B", "o4")] {
            let customer = try Shop.customer(context, name)
            try context.assign(customer, to: store)
            try context.assign(try Shop.order(context, code, qty: 1, customer: customer), to: store)
        }
        try context.save()
        let byCustomer = FetchRequest(entityName: "Order", sortKeys: [SortKey("customer.name")])
        var firstTwo = byCustomer
        firstTwo.fetchLimit = 2
        // With an unsaved change in the context the merge is done in memory, and is right.
        let pending = ObjectContext(coordinator: coordinator)
        try pending.fetch(FetchRequest(entityName: "Order"))[0].set("qty", Int64(5))
        #expect(try Shop.codes(pending.fetch(byCustomer)) == ["o2", "o4", "o3", "o1"])
        // Without one, the stores' rows are merged by the coordinator.
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Shop.codes(fresh.fetch(byCustomer)) == ["o2", "o4", "o3", "o1"])
        #expect(try Shop.codes(fresh.fetch(firstTwo)) == ["o2", "o4"])
    }

    /// Core Data: `assign(_:to:)` raises when the store does not hold the object's entity (its configuration
    /// lacks it) or is not one of the coordinator's stores; the object stays unassigned.
    @Test(arguments: Backend.everyStore)
    func assignRefusesAStoreThatCannotTakeTheObject(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try TwoStores.model())
        let catalog = try backend.add(to: coordinator, configuration: "Catalog", in: dir.url)
        let reviews = try backend.add(to: coordinator, configuration: "Reviews", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let review = try context.insert("Review")
        try review.set("sku", "A")
        expectCoordinatorError("store without the entity", {
            guard case let .entityNotInStore(entity, _, configuration) = $0 else { return false }
            return entity == "Review" && configuration == "Catalog"
        }) { try context.assign(review, to: catalog) }
        // A store of another coordinator is refused too.
        let other = StoreCoordinator(model: try TwoStores.model())
        let foreign = try backend.add(to: other, configuration: "Reviews", in: dir.url, name: "other")
        expectCoordinatorError("store of another coordinator", {
            if case .storeNotInCoordinator = $0 { return true } else { return false }
        }) { try context.assign(review, to: foreign) }
        try context.save()
        #expect(review.persistentStore === reviews)
    }

    /// Core Data's `NSFetchRequest.affectedStores`: a fetch (and count) searches only the named stores; a store
    /// that does not hold the entity contributes nothing; a store not in the coordinator is an error.
    @Test(arguments: Backend.everyStore)
    func affectedStoresNarrowFetchesAndCounts(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let first = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "first")
        let second = try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "second")
        let context = ObjectContext(coordinator: coordinator)
        for (code, store) in [("a", first), ("b", second), ("c", second)] {
            try context.assign(try Shop.order(context, code, qty: 1), to: store)
        }
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Order", sortKeys: [SortKey("code")])
        request.setAffectedStores([second])
        #expect(request.affectedStoreIdentifiers == [second.identifier])
        #expect(try Shop.codes(fresh.fetch(request)) == ["b", "c"])
        #expect(try fresh.count(request) == 2)
        #expect(try coordinator.fetchRows(request).allSatisfy { $0.store === second })
        #expect(try coordinator.count(request) == 2)
        request.affectedStoreIdentifiers = [first.identifier]
        #expect(try Shop.codes(fresh.fetch(request)) == ["a"])
        request.affectedStoreIdentifiers = nil
        #expect(try Shop.codes(fresh.fetch(request)) == ["a", "b", "c"])
        // Unsaved objects count where they are assigned (or live), as Core Data's in-memory matching does.
        let d = try Shop.order(fresh, "d", qty: 1)
        try fresh.assign(d, to: first)
        try fresh.existingObject(with: try #require(fresh.fetch(request).first).objectID).set("qty", Int64(2))
        request.affectedStoreIdentifiers = [first.identifier]
        #expect(try Shop.codes(fresh.fetch(request)) == ["a", "d"])
        #expect(try fresh.count(request) == 2)
        request.setAffectedStores([second])
        #expect(try Shop.codes(fresh.fetch(request)) == ["b", "c"])
        request.affectedStoreIdentifiers = [UUID()]
        expectCoordinatorError("unknown store", {
            if case .storeNotInCoordinator = $0 { return true } else { return false }
        }) { _ = try fresh.fetch(request) }
        // A store serving other entities only: nothing matches there.
        let tagStore = StoreCoordinator(model: try TwoStores.model())
        let catalog = try backend.add(to: tagStore, configuration: "Catalog", in: dir.url, name: "catalog")
        try backend.add(to: tagStore, configuration: "Reviews", in: dir.url, name: "reviews")
        let writer = ObjectContext(coordinator: tagStore)
        try writer.insert("Review").set("sku", "A")
        try writer.save()
        var reviews = FetchRequest(entityName: "Review")
        reviews.setAffectedStores([catalog])
        #expect(try writer.fetch(reviews).isEmpty)
        #expect(try writer.count(reviews) == 0)
    }

    /// Core Data: `objectID.uriRepresentation()` of a saved object is `x-coredata://<store UUID>/<Entity>/p<N>`;
    /// `managedObjectID(forURIRepresentation:)` turns it back into the same ID, and
    /// `existingObject(with:)` returns the object — the registered instance in its own context, a fresh
    /// one elsewhere — or throws when the object no longer exists.
    @Test(arguments: Backend.everyStore)
    func objectIDsRoundTripThroughTheirURI(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let order = try Shop.order(context, "a", qty: 7)
        let temporary = order.objectID
        #expect(temporary.isTemporary)
        #expect(temporary.uriRepresentation.hasPrefix("x-coredata:///Order/t"))
        #expect(try ObjectID(uri: temporary.uriRepresentation) == temporary)
        // Before the save the temporary ID finds the object in its own context only.
        #expect(try context.existingObject(with: temporary) === order)
        expectContextError("temporary ID elsewhere", { if case .objectNotFound = $0 { return true } else { return false } }) {
            _ = try ObjectContext(coordinator: coordinator).existingObject(with: temporary)
        }
        try context.save()

        let id = order.objectID
        let uri = id.uriRepresentation
        #expect(uri == "x-coredata://\(store.identifier.uuidString)/Order/p\(try #require(id.primaryKey))")
        #expect(id.description == uri)
        let parsed = try ObjectID(uri: uri)
        #expect(parsed == id)
        #expect(parsed.entityName == "Order" && parsed.storeIdentifier == store.identifier && parsed.primaryKey == id.primaryKey)
        #expect(try context.existingObject(with: parsed) === order)
        let fresh = ObjectContext(coordinator: coordinator)
        let again = try fresh.existingObject(with: parsed)
        #expect(again !== order)
        #expect(try again.get("code", as: String.self) == "a")
        #expect(try again.get("qty", as: Int64.self) == 7)
        #expect(try fresh.existingObject(with: parsed) === again)

        for bad in ["https://example.com/Order/p1", "x-coredata://not-a-uuid/Order/p1", "x-coredata://\(store.identifier.uuidString)/Order/1",
                    "x-coredata://\(store.identifier.uuidString)/Order/p0", "x-coredata://\(store.identifier.uuidString)/Order"] {
            expectCoordinatorError(bad, { if case .invalidObjectURI = $0 { return true } else { return false } }) { _ = try ObjectID(uri: bad) }
        }
        // Gone from the store, or from a store the coordinator does not have: existingObject throws.
        try context.delete(order)
        try context.save()
        let later = ObjectContext(coordinator: coordinator)
        expectContextError("deleted object", { if case .objectNotFound = $0 { return true } else { return false } }) {
            _ = try later.existingObject(with: parsed)
        }
        let elsewhere = ObjectID(store: UUID(), entityName: "Order", primaryKey: 1)
        expectContextError("unknown store", { if case .objectNotFound = $0 { return true } else { return false } }) {
            _ = try later.existingObject(with: elsewhere)
        }
        // An ID naming an entity the model lacks finds nothing either, with the same error on every backend.
        let unknownEntity = ObjectID(store: store.identifier, entityName: "Nope", primaryKey: 1)
        expectContextError("entity the model lacks", { if case .objectNotFound = $0 { return true } else { return false } }) {
            _ = try later.existingObject(with: unknownEntity)
        }
    }

    /// Core Data: saving a change to an object whose store was removed from the coordinator fails because the
    /// store is not reachable ("persistent store is not reachable from this NSManagedObjectContext's
    /// coordinator"), and the store is not written; the error says the store is gone, not the row.
    @Test(arguments: Backend.everyStore)
    func savingIntoARemovedStoreSaysTheStoreIsGone(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let order = try Shop.order(context, "a", qty: 1)
        try context.save()
        try coordinator.removeStore(store)
        try order.set("qty", Int64(2))
        var thrown: (any Error)?
        do { try context.save() } catch { thrown = error }
        #expect(thrown != nil)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Order")).count == 1)
        #expect(context.hasChanges)
        guard case .storeNotInCoordinator? = thrown as? CoordinatorError else {
            Issue.record("\(thrown.map { "\($0)" } ?? "no error")")
            return
        }
        expectCoordinatorError("assign to the removed store", {
            if case .storeNotInCoordinator = $0 { return true } else { return false }
        }) { try context.assign(try Shop.order(context, "b", qty: 1), to: store) }
    }

    /// Core Data: a store file keeps its `NSStoreUUID`, so object URIs saved by one launch resolve in the next;
    /// `remove(_:)` takes a store out of the coordinator and leaves its file, which can be added again.
    @Test(arguments: Backend.persistent)
    func storesKeepTheirIdentityAcrossLaunchesAndRemoval(_ backend: Backend) throws {
        let dir = try TempDir()
        var uri = ""
        var identifier = UUID()
        do {
            let coordinator = StoreCoordinator(model: try Shop.model())
            let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
            identifier = store.identifier
            let context = ObjectContext(coordinator: coordinator)
            let order = try Shop.order(context, "kept", qty: 2)
            try context.save()
            uri = order.objectID.uriRepresentation
            try coordinator.removeStore(store)
            #expect(coordinator.stores.isEmpty)
            expectCoordinatorError("fetch after removal", {
                if case .noStoreForEntity = $0 { return true } else { return false }
            }) { _ = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order")) }
            expectCoordinatorError("removing twice", {
                if case .storeNotInCoordinator = $0 { return true } else { return false }
            }) { try coordinator.removeStore(store) }
        }
        let coordinator = StoreCoordinator(model: try Shop.model())
        let reopened = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        #expect(reopened.identifier == identifier)
        let object = try ObjectContext(coordinator: coordinator).existingObject(with: try ObjectID(uri: uri))
        #expect(try object.get("code", as: String.self) == "kept")
    }
}

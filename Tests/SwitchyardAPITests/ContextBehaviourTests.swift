import Foundation
import Switchyard
import Testing

/// What `ObjectContext` and `ManagedObject` promise a user about an object's life: insert, change tracking,
/// save, rollback, refresh, validation, uniquing and conflicts. Each test names the `NSManagedObjectContext`
/// / `NSManagedObject` behaviour it matches.
@Suite struct ContextBehaviourTests {
    /// Core Data: `NSEntityDescription.insertNewObject(forEntityName:into:)` gives the new object the model's
    /// default values; attributes without a default are nil; the defaults are saved.
    @Test(arguments: Backend.everyStore)
    func insertFillsTheModelsDefaults(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Catalogue.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let book = try context.insert("EBook")
        #expect(try book.get("stock", as: Int.self) == 5)        // inherited from abstract Item
        #expect(try book.get("label", as: String.self) == "new")
        #expect(try book.get("price", as: Double.self) == nil)
        #expect(try book.get("sizeMB", as: Double.self) == nil)
        #expect(try book.value(forKey: "pages") == .null)
        #expect(book.entity.name == "EBook" && book.objectID.entityName == "EBook")
        try book.set("name", "Dune")
        try context.save()
        let saved = try ObjectContext(coordinator: coordinator).existingObject(with: book.objectID)
        #expect(try saved.get("stock", as: Int.self) == 5)
        #expect(try saved.get("label", as: String.self) == "new")
        #expect(try saved.get("price", as: Double.self) == nil)
    }

    /// Core Data: inserting an abstract entity ("Cannot create NSManagedObject instance of abstract entity")
    /// or an entity the model lacks fails, and the context is left without changes.
    @Test(arguments: Backend.everyStore)
    func insertRefusesAbstractAndUnknownEntities(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Catalogue.coordinator(backend, in: dir))
        expectContextError("abstract", { $0 == .abstractEntity("Item") }) { _ = try context.insert("Item") }
        expectContextError("unknown", { $0 == .unknownEntity("Gadget") }) { _ = try context.insert("Gadget") }
        #expect(!context.hasChanges)
        #expect(context.registeredObjects.isEmpty)
    }

    /// Core Data: `isInserted`, `isUpdated`/`hasChanges`, `changedValues()` and `isDeleted` follow an object
    /// through insert, save, change, save and delete; the context's `hasChanges` agrees; once a deletion is
    /// saved the object leaves its context (`managedObjectContext == nil`).
    @Test(arguments: Backend.everyStore)
    func changeTrackingFollowsAnObjectAcrossSaves(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Catalogue.coordinator(backend, in: dir))
        #expect(!context.hasChanges)
        let book = try Catalogue.item(context, "Book", "Dune", price: 9)
        #expect(book.isInserted && !book.isDeleted && book.hasChanges)
        #expect(context.hasChanges)
        #expect(context.registeredObjects.contains { $0 === book })
        try context.save()
        #expect(!book.isInserted && !book.hasChanges && book.changedKeys.isEmpty)
        #expect(!context.hasChanges)

        try book.set("price", 12.5)
        try book.set("pages", 412)
        #expect(book.changedKeys == ["price", "pages"])
        #expect(book.hasChanges && !book.isInserted)
        #expect(context.hasChanges)
        try context.save()
        #expect(book.changedKeys.isEmpty && !book.hasChanges && !context.hasChanges)
        #expect(try book.get("price", as: Double.self) == 12.5)

        try context.delete(book)
        #expect(book.isDeleted && book.hasChanges && context.hasChanges)
        try context.save()
        #expect(!context.hasChanges)
        #expect(book.context == nil)
        #expect(!context.registeredObjects.contains { $0 === book })
        #expect(try context.count(FetchRequest(entityName: "Book")) == 0)

        // Deleting an unsaved insert just drops it: nothing to save.
        let draft = try Catalogue.item(context, "Album", "Draft", price: 1)
        try context.delete(draft)
        #expect(!context.hasChanges)
        #expect(draft.context == nil)
    }

    /// Core Data: `save()` gives every inserted object a permanent ID (`objectID.isTemporaryID` becomes false)
    /// naming its store; the object stays the same instance, found by its new ID, and to-one references
    /// between objects inserted together are saved.
    @Test(arguments: Backend.everyStore)
    func saveGivesInsertedObjectsPermanentIDs(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann")
        let orders = try (0..<3).map { try Shop.order(context, "o\($0)", qty: Int64($0), customer: ann) }
        let objects = [ann] + orders
        #expect(objects.allSatisfy { $0.objectID.isTemporary && $0.objectID.primaryKey == nil && $0.objectID.storeIdentifier == nil })
        let temporaryIDs = objects.map(\.objectID)
        try context.save()
        #expect(objects.allSatisfy { !$0.objectID.isTemporary && $0.objectID.storeIdentifier == store.identifier })
        #expect(objects.allSatisfy { ($0.objectID.primaryKey ?? 0) > 0 })
        #expect(Set(orders.map(\.objectID)).count == 3)
        #expect(Set(objects.map(\.objectID)).isDisjoint(with: temporaryIDs))
        for object in objects { #expect(try context.existingObject(with: object.objectID) === object) }
        let fetched = try context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(zip(fetched, orders).allSatisfy { $0 === $1 })
        let fresh = ObjectContext(coordinator: coordinator)
        let order = try fresh.existingObject(with: orders[1].objectID)
        #expect(try order.relatedObject(forKey: "customer")?.objectID == ann.objectID)
    }

    /// Core Data's `rollback()`: inserted objects are discarded, deleted ones restored, and changed ones
    /// return to their last saved values (relationships included); the context has no changes afterwards.
    @Test(arguments: Backend.everyStore)
    func rollbackDiscardsEveryUnsavedChange(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let ann = try Shop.customer(context, "Ann")
        let bob = try Shop.customer(context, "Bob")
        let a = try Shop.order(context, "a", qty: 1, customer: ann)
        let b = try Shop.order(context, "b", qty: 2)
        try context.save()

        let inserted = try Shop.order(context, "new", qty: 9)
        try a.set("qty", Int64(100))
        try a.setRelatedObject(bob, forKey: "customer")
        try context.delete(b)
        #expect(context.hasChanges)
        context.rollback()

        #expect(!context.hasChanges)
        #expect(inserted.context == nil)
        #expect(!inserted.isInserted)
        #expect(!context.registeredObjects.contains { $0 === inserted })
        #expect(try a.get("qty", as: Int64.self) == 1)
        #expect(try a.relatedObject(forKey: "customer") === ann)
        #expect(!a.hasChanges)
        #expect(!b.isDeleted && !b.hasChanges)
        #expect(try Shop.codes(context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))) == ["a", "b"])
        #expect(try Shop.codes(ann.relatedObjects(forKey: "orders")) == ["a"])
        #expect(try bob.relatedObjects(forKey: "orders").isEmpty)
        try context.save()   // nothing left to write
        #expect(try ObjectContext(coordinator: context.coordinator).count(FetchRequest(entityName: "Order")) == 2)
    }

    /// Core Data's `rollback()` restores to-many relationships too: many-to-many members added or removed on
    /// either side, and the order of an ordered to-many.
    @Test(arguments: Backend.everyStore)
    func rollbackRestoresToManyMembersAndOrder(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let s1 = try Relations.insert(context, "Student", "s1")
        let math = try Relations.insert(context, "Course", "math")
        let art = try Relations.insert(context, "Course", "art")
        try s1.addRelatedObject(math, forKey: "courses")
        let list = try Relations.insert(context, "Playlist", "mix")
        for name in ["a", "b", "c"] { try list.addRelatedObject(try Relations.insert(context, "Song", name), forKey: "songs") }
        try context.save()

        try s1.addRelatedObject(art, forKey: "courses")
        try math.removeRelatedObject(s1, forKey: "students")
        try list.moveRelatedObject(from: 2, to: 0, forKey: "songs")
        try list.insertRelatedObject(try Relations.insert(context, "Song", "new"), at: 1, forKey: "songs")
        context.rollback()
        #expect(try Relations.memberNames(s1, "courses") == ["math"])
        #expect(try Relations.memberNames(math, "students") == ["s1"])
        #expect(try Relations.memberNames(art, "students") == [])
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == ["a", "b", "c"])
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.memberNames(Relations.object(fresh, "Student", "s1"), "courses") == ["math"])
        #expect(try Relations.names(Relations.object(fresh, "Playlist", "mix").relatedObjects(forKey: "songs")) == ["a", "b", "c"])
        #expect(try Relations.savedNames(coordinator, "Song") == ["a", "b", "c"])
    }

    /// Core Data's `refresh(_:mergeChanges: false)`: the object's unsaved changes (a deletion too) are dropped
    /// and it shows what its store holds now, including another context's saved changes.
    @Test(arguments: Backend.everyStore)
    func refreshWithoutMergeDropsChangesAndRereads(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let order = try Shop.order(context, "a", qty: 1, width: 10)
        try context.save()

        let other = ObjectContext(coordinator: coordinator)
        try other.existingObject(with: order.objectID).set("code", "A")
        try other.save()

        try order.set("qty", Int64(50))
        #expect(try order.get("code", as: String.self) == "a")     // not seen until refreshed
        try context.refresh(order)
        #expect(!order.hasChanges && !context.hasChanges)
        #expect(try order.get("qty", as: Int64.self) == 1)
        #expect(try order.get("code", as: String.self) == "A")

        try context.delete(order)
        try context.refresh(order)
        #expect(!order.isDeleted && !context.hasChanges)
        try order.set("width", 20.0)
        try context.save()
        let check = try ObjectContext(coordinator: coordinator).existingObject(with: order.objectID)
        #expect(try check.get("code", as: String.self) == "A" && check.get("width", as: Double.self) == 20)
    }

    /// Core Data's `refresh(_:mergeChanges: true)`: the object rereads its store and keeps this context's
    /// unsaved changes on top, so a later save writes both without a conflict.
    @Test(arguments: Backend.everyStore)
    func refreshWithMergeKeepsLocalChangesOverTheStoresValues(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let order = try Shop.order(context, "a", qty: 1, width: 10)
        try context.save()

        let other = ObjectContext(coordinator: coordinator)
        try other.existingObject(with: order.objectID).set("code", "A")
        try other.save()

        try order.set("qty", Int64(50))
        try context.refresh(order, mergeChanges: true)
        #expect(order.hasChanges && order.changedKeys == ["qty"])
        #expect(try order.get("qty", as: Int64.self) == 50)
        #expect(try order.get("code", as: String.self) == "A")
        try context.save()
        let check = try ObjectContext(coordinator: coordinator).existingObject(with: order.objectID)
        #expect(try check.get("code", as: String.self) == "A")
        #expect(try check.get("qty", as: Int64.self) == 50)
    }

    /// Core Data's `refreshAllObjects()`: registered objects show what the store holds now, and unsaved
    /// changes are kept (Switchyard documents that it rereads only objects without unsaved changes).
    @Test(arguments: Backend.everyStore)
    func refreshAllObjectsRereadsUnchangedObjectsAndKeepsChanges(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let x = try Shop.order(context, "x", qty: 1)
        let y = try Shop.order(context, "y", qty: 2)
        try context.save()

        let other = ObjectContext(coordinator: coordinator)
        try other.existingObject(with: y.objectID).set("code", "Y")
        try other.save()

        try x.set("qty", Int64(10))
        try context.refreshAllObjects()
        #expect(try y.get("code", as: String.self) == "Y")
        #expect(!y.hasChanges)
        #expect(try x.get("qty", as: Int64.self) == 10)
        #expect(x.hasChanges)
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.existingObject(with: x.objectID).get("qty", as: Int64.self) == 10)
    }

    /// Core Data's uniquing: a context holds at most one object per record, so repeated fetches,
    /// `existingObject(with:)` and relationship reads return the same instance; another context has its own.
    @Test(arguments: Backend.everyStore)
    func oneInstancePerObjectPerContext(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let writer = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(writer, "Ann")
        try Shop.order(writer, "a", qty: 1, customer: ann)
        try Shop.order(writer, "b", qty: 2, customer: ann)
        try writer.save()

        let context = ObjectContext(coordinator: coordinator)
        let orders = try context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        let again = try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty >= 1"), sortKeys: [SortKey("code")]))
        #expect(zip(orders, again).allSatisfy { $0 === $1 })
        #expect(try context.existingObject(with: orders[0].objectID) === orders[0])
        let customer = try #require(try orders[0].relatedObject(forKey: "customer"))
        #expect(try orders[1].relatedObject(forKey: "customer") === customer)
        #expect(try context.fetch(FetchRequest(entityName: "Customer"))[0] === customer)
        let members = try customer.relatedObjects(forKey: "orders").sorted { $0.objectID.primaryKey! < $1.objectID.primaryKey! }
        #expect(members.count == 2 && members.allSatisfy { m in orders.contains { $0 === m } })
        // A change made through one reference is seen through every other.
        try again[0].set("qty", Int64(42))
        #expect(try orders[0].get("qty", as: Int64.self) == 42)
        let elsewhere = ObjectContext(coordinator: coordinator)
        #expect(try elsewhere.existingObject(with: orders[0].objectID) !== orders[0])
        #expect(try elsewhere.existingObject(with: orders[0].objectID).get("qty", as: Int64.self) == 1)
    }

    /// An ID equal to an object's (`==`, which compares entity names as Swift strings do, a composed and a
    /// decomposed `é` alike) finds that object in its context, unsaved or saved, as `NSManagedObjectID`s that
    /// are equal find one object.
    @Test(arguments: Backend.everyStore)
    func anEqualIDSpelledOtherwiseFindsTheSameObject(_ backend: Backend) throws {
        let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
        let model = try ObjectModel(
            entities: [EntityDescription(name: composed, attributes: [AttributeDescription(name: "name", type: .string)])],
            configurations: [ConfigurationDescription(name: "Main", entityNames: [composed])])
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let cafe = try context.insert(composed)
        try cafe.set("name", "Le Select")
        func respelled(_ id: ObjectID) throws -> ObjectID {
            let other = try ObjectID(uri: id.description.replacingOccurrences(of: composed, with: decomposed))
            #expect(other == id && other.entityName.utf8.count != id.entityName.utf8.count)
            return other
        }
        #expect(try context.existingObject(with: respelled(cafe.objectID)) === cafe)
        try context.save()
        #expect(try context.existingObject(with: respelled(cafe.objectID)) === cafe)
    }

    /// Core Data's validation at save (`NSValidationMissingMandatoryPropertyError`): a required attribute
    /// without a value fails the save, nothing of it is written, and the context keeps its changes so the
    /// caller can fix them and save again.
    @Test(arguments: Backend.everyStore)
    func aMissingRequiredAttributeFailsTheSaveAndWritesNothing(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Catalogue.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Catalogue.item(context, "Book", "Valid", price: 1)
        let nameless = try context.insert("Album")
        expectContextError("insert without name", {
            guard case let .missingRequiredValue(entity, key, _) = $0 else { return false }
            return entity == "Album" && key == "name"
        }) { try context.save() }
        #expect(try Relations.savedNames(coordinator, "Item") == [])
        #expect(context.hasChanges && nameless.isInserted)
        try nameless.set("name", "Named")
        try context.save()
        #expect(try Relations.savedNames(coordinator, "Item") == ["Named", "Valid"])

        // Clearing a required value of a saved object fails the same way and leaves the store as it was.
        try nameless.set("name", String?.none)
        expectContextError("cleared name", {
            if case .missingRequiredValue(_, "name", _) = $0 { return true } else { return false }
        }) { try context.save() }
        #expect(try Relations.savedNames(coordinator, "Item") == ["Named", "Valid"])
    }

    /// Core Data raises for a key the entity lacks and for a value of the wrong type
    /// (`NSValidationErrorKey` / "Unacceptable type of value for attribute"); nothing is changed.
    @Test(arguments: Backend.everyStore)
    func unknownKeysAndWrongTypesAreRefused(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Catalogue.coordinator(backend, in: dir))
        let book = try Catalogue.item(context, "Book", "Dune", price: 9)
        try context.save()
        expectContextError("unknown key", { $0 == .unknownKey(entity: "Book", key: "sizeMB") }) { try book.set("sizeMB", 2.0) }
        expectContextError("wrong type", { if case .typeMismatch(_, "pages", _, _) = $0 { return true } else { return false } }) {
            try book.set("pages", "many")
        }
        expectContextError("read as the wrong type", { if case .typeMismatch(_, "name", _, _) = $0 { return true } else { return false } }) {
            _ = try book.get("name", as: Int.self)
        }
        expectContextError("unknown relationship", { if case .unknownKey = $0 { return true } else { return false } }) {
            _ = try book.relatedObject(forKey: "author")
        }
        #expect(!book.hasChanges)
    }

    /// Core Data attribute types round-trip through every store: Integer 16/32/64, Decimal, Double, Float,
    /// String, Boolean, Date, Binary Data, UUID and URI read back as they were set.
    @Test(arguments: Backend.everyStore)
    func everyAttributeTypeRoundTrips(_ backend: Backend) throws {
        let types: [(String, AttributeType)] = [
            ("i16", .integer16), ("i32", .integer32), ("i64", .integer64), ("dec", .decimal), ("dbl", .double), ("flt", .float),
            ("str", .string), ("flag", .boolean), ("when", .date), ("blob", .binary), ("uuid", .uuid), ("link", .uri),
        ]
        let entity = EntityDescription(name: "Sample", attributes: types.map { AttributeDescription(name: $0.0, type: $0.1) })
        let coordinator = StoreCoordinator(model: try ObjectModel(entities: [entity], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Sample"])]))
        let dir = try TempDir()
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let sample = try context.insert("Sample")
        let when = Date(timeIntervalSinceReferenceDate: 123_456.25)
        let uuid = UUID()
        let blob = Data([0, 1, 2, 255, 254])
        let link = try #require(URL(string: "https://swift.org/a?b=c"))
        try sample.set("i16", Int16(-12))
        try sample.set("i32", Int32(70_000))
        try sample.set("i64", Int64(1) << 40)
        try sample.set("dec", Decimal(string: "12.75"))
        try sample.set("dbl", 3.5)
        try sample.set("flt", Float(1.25))
        try sample.set("str", "héllo ✓")
        try sample.set("flag", true)
        try sample.set("when", when)
        try sample.set("blob", blob)
        try sample.set("uuid", uuid)
        try sample.set("link", link)
        try context.save()
        let read = try ObjectContext(coordinator: coordinator).existingObject(with: sample.objectID)
        #expect(try read.get("i16", as: Int16.self) == -12)
        #expect(try read.get("i32", as: Int32.self) == 70_000)
        #expect(try read.get("i64", as: Int64.self) == 1 << 40)
        #expect(try read.get("dec", as: Decimal.self) == Decimal(string: "12.75"))
        #expect(try read.get("dbl", as: Double.self) == 3.5)
        #expect(try read.get("flt", as: Float.self) == 1.25)
        #expect(try read.get("str", as: String.self) == "héllo ✓")
        #expect(try read.get("flag", as: Bool.self) == true)
        #expect(try read.get("when", as: Date.self) == when)
        #expect(try read.get("blob", as: Data.self) == blob)
        #expect(try read.get("uuid", as: UUID.self) == uuid)
        #expect(try read.get("link", as: URL.self) == link)
        // Nothing is truncated: a value outside the attribute's range is refused when set, and a stored value
        // outside the requested Swift type's range is refused when read (Core Data's validation refuses the
        // first at save).
        func isTypeMismatch(_ e: ContextError) -> Bool { if case .typeMismatch = e { return true } else { return false } }
        expectContextError("70000 into Integer 16", isTypeMismatch) { try read.set("i16", 70_000) }
        expectContextError("Int64.max into Integer 32", isTypeMismatch) { try read.set("i32", Int64.max) }
        expectContextError("3.7 into Integer 64", isTypeMismatch) { try read.set("i64", 3.7) }
        expectContextError("2 into Boolean", isTypeMismatch) { try read.setValue(.integer(2), forKey: "flag") }
        expectContextError("70000 read as Int16", isTypeMismatch) { _ = try read.get("i32", as: Int16.self) }
        // The refusal quotes the value as it is: NaN as NaN (not ISO 8601's -4712-01-01), a U+0000 or a newline
        // escaped (not raw bytes that cut a line or a terminal short).
        let nanDate = #expect(throws: ContextError.self) { try read.set("when", Date(timeIntervalSinceReferenceDate: .nan)) }
        #expect(nanDate?.localizedDescription == "Sample.when is Date (NaN cannot be stored: SQLite stores it as NULL); "
            + "got Date(timeIntervalSinceReferenceDate: nan) (date)")
        let nul = #expect(throws: ContextError.self) { try read.set("str", "a\u{0}b\nc") }
        #expect(nul?.localizedDescription == "Sample.str is String (a String cannot contain U+0000: SQLite's C interface ends text there); "
            + "got \"a\\u{0}b\\u{A}c\" (string)")
        #expect(!read.hasChanges)
    }

    /// Core Data's optimistic locking with the default `NSErrorMergePolicy`: when another context saved a
    /// change to the same object first, this save fails with a merge conflict and writes nothing; after a
    /// refresh the caller can save again.
    @Test(arguments: Backend.everyStore)
    func aConflictingSaveFailsAndWritesNothing(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let setup = ObjectContext(coordinator: coordinator)
        let order = try Shop.order(setup, "a", qty: 1)
        try Shop.order(setup, "b", qty: 1)
        try setup.save()

        let first = ObjectContext(coordinator: coordinator)
        let second = ObjectContext(coordinator: coordinator)
        let mine = try second.existingObject(with: order.objectID)
        try first.existingObject(with: order.objectID).set("qty", Int64(2))
        try mine.set("qty", Int64(3))
        let otherOrder = try Relations.object(second, "Order", "b", key: "code")
        try otherOrder.set("qty", Int64(99))
        try Shop.order(second, "c", qty: 1)
        try first.save()
        do {
            try second.save()
            Issue.record("the conflicting save succeeded")
        } catch let error as StoreError {
            guard case .conflict = error else { Issue.record("\(error)"); return }
        }
        let check = ObjectContext(coordinator: coordinator)
        let saved = try check.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try Shop.codes(saved) == ["a", "b"])
        #expect(try saved.map { try $0.get("qty", as: Int64.self) } == [2, 1])
        #expect(second.hasChanges)
        try second.refresh(mine, mergeChanges: true)
        try second.save()
        let after = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try after.map { try $0.get("qty", as: Int64.self) } == [3, 99, 1])
    }

    /// Core Data's `refreshAllObjects()` refreshes every registered object with `mergeChanges: true`: an object
    /// with unsaved changes keeps them, shows the store's current values for the rest, and can then be saved
    /// without a conflict. Switchyard documents that it skips objects with unsaved changes; this records the
    /// difference.
    @Test(arguments: Backend.everyStore)
    func refreshAllObjectsMergesChangedObjectsAsCoreDataDoes(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let x = try Shop.order(context, "x", qty: 1)
        try context.save()
        let other = ObjectContext(coordinator: coordinator)
        try other.existingObject(with: x.objectID).set("code", "X")
        try other.save()
        try x.set("qty", Int64(10))
        try context.refreshAllObjects()
        #expect(try x.get("code", as: String.self) == "X")
        try context.save()
        #expect(try x.get("qty", as: Int64.self) == 10)
    }

    /// Core Data marks both ends of a relationship change as updated (`isUpdated`, `changedValues()` naming the
    /// relationship): the object whose to-one changed, and the owners whose to-many inverse gained or lost it
    /// — also when the change is made through the to-many side.
    @Test(arguments: Backend.everyStore)
    func aRelationshipChangeMarksBothEndsChanged(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let ann = try Shop.customer(context, "Ann")
        let bob = try Shop.customer(context, "Bob")
        let order = try Shop.order(context, "a", qty: 1, customer: ann)
        let tag = try context.insert("Tag")
        try tag.set("label", "t")
        try context.save()

        try order.addRelatedObject(tag, forKey: "tags")
        #expect(order.changedKeys == ["tags"] && tag.changedKeys == ["orders"] && tag.hasChanges)
        context.rollback()

        try order.setRelatedObject(bob, forKey: "customer")
        #expect(order.changedKeys == ["customer"])
        #expect(ann.changedKeys == ["orders"] && ann.hasChanges)
        #expect(bob.changedKeys == ["orders"] && bob.hasChanges)
        context.rollback()
        #expect(!ann.hasChanges && !bob.hasChanges)

        try ann.removeRelatedObject(order, forKey: "orders")
        #expect(order.changedKeys == ["customer"])
        #expect(ann.changedKeys == ["orders"] && ann.hasChanges)
        // Saved, both ends are updated rows (Z_OPT bumped), as Core Data saves them; then nothing is pending.
        let annVersion = try #require(try context.fetch(FetchRequest(entityName: "Customer", predicate: try FetchPredicate(format: "name == 'Ann'"))).first)
        #expect(annVersion === ann)
        try context.save()
        #expect(!ann.hasChanges && !order.hasChanges && !context.hasChanges)
        let fresh = ObjectContext(coordinator: context.coordinator)
        let reread = try #require(try fresh.fetch(FetchRequest(entityName: "Customer", predicate: try FetchPredicate(format: "name == 'Ann'"))).first)
        #expect(try reread.relatedObjects(forKey: "orders").isEmpty)
    }
}

import Foundation
import Switchyard
import Testing

/// Entity inheritance as Core Data users rely on it, on every embedded backend: fetching abstract and concrete
/// parents, predicates and sorts over inherited attributes, sibling properties of one name, relationships to a
/// parent, pending changes, delete rules and batch operations across a tree. Written from the user's side by an
/// exploration on 2026-12-02 (models in InheritanceModels.swift); its two failures are UnsavedDeleteRuleTests.
@Suite struct InheritanceBehaviourTests {
    /// Core Data: fetching an (abstract) parent returns objects of every concrete subentity, each with its own
    /// `entity`; `includesSubentities = false` on an abstract entity returns nothing.
    @Test(arguments: Backend.everyStore)
    func fetchingTheParentReturnsSubentityObjects(_ backend: Backend) throws {
        let dir = try TempDir()
        var coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        coordinator = try Zoo.reopen(backend, coordinator, in: dir)
        for c in [context, ObjectContext(coordinator: coordinator)] where backend == .memory || c !== context {
            #expect(try Zoo.fetch(c, "Animal", sort: [SortKey("name")]) == ["Cat:Kit", "Bird:Polly", "Dog:Rex", "Cat:Tom", "Bird:Tweety"])
            #expect(try Zoo.fetch(c, "Mammal", sort: [SortKey("name")]) == ["Cat:Kit", "Dog:Rex", "Cat:Tom"])
            #expect(try Zoo.count(c, "Animal") == 5)
            #expect(try Zoo.count(c, "Mammal") == 3)
            #expect(try Zoo.count(c, "Animal", subentities: false) == 0)
            #expect(try Zoo.fetch(c, "Animal", subentities: false) == [])
            #expect(try Zoo.count(c, "Cat", subentities: false) == 2)
            #expect(try Zoo.fetch(c, "Bird", sort: [SortKey("name", ascending: false)]) == ["Bird:Tweety", "Bird:Polly"])
            for object in try c.fetch(Zoo.request("Animal")) {
                #expect(object.objectID.entityName == object.entity.name)
                #expect(["Cat", "Dog", "Bird"].contains(object.entity.name))
            }
        }
    }

    /// Core Data: predicates and sort keys over inherited attributes, with limit and offset, on the parent and
    /// on a middle (abstract) entity; ties broken consistently.
    @Test(arguments: Backend.everyStore)
    func predicatesAndSortsOverInheritedAttributes(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        let c = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(c, "Animal", "legs == 4", sort: [SortKey("name")]) == ["Dog:Rex", "Cat:Tom"])
        #expect(try Zoo.fetch(c, "Animal", "legs >= 3", sort: [SortKey("legs", ascending: false), SortKey("name")]) == ["Dog:Rex", "Cat:Tom", "Cat:Kit"])
        #expect(try Zoo.fetch(c, "Mammal", "fur BEGINSWITH %@", ["b"], sort: [SortKey("fur")]) == ["Cat:Kit", "Dog:Rex"])
        #expect(try Zoo.fetch(c, "Animal", sort: [SortKey("legs"), SortKey("name")], limit: 2, offset: 1) == ["Bird:Tweety", "Cat:Kit"])
        #expect(try Zoo.fetch(c, "Cat", "keeper.name == %@", ["Ann"]) == ["Cat:Tom"])
        #expect(try Zoo.fetch(c, "Animal", "keeper.name == %@", ["Bob"], sort: [SortKey("name")]) == ["Cat:Kit", "Bird:Tweety"])
        #expect(try Zoo.fetch(c, "Animal", sort: [SortKey("keeper.name", ascending: false), SortKey("name")]) == ["Cat:Kit", "Bird:Tweety", "Bird:Polly", "Dog:Rex", "Cat:Tom"])
        #expect(try Zoo.count(c, "Mammal", "legs == 4") == 2)
        #expect(try Zoo.fetch(c, "Animal", "name IN %@", [PredicateArgument.list([.string("Tom"), .string("Polly")])], sort: [SortKey("name")]) == ["Bird:Polly", "Cat:Tom"])
    }

    /// Sibling subentities each declaring `tag` (Cat's indexed, Dog's not): a fetch of one sibling by `tag`
    /// must never return or count the other's objects, on each backend (LMDB reads indexes).
    @Test(arguments: Backend.everyStore)
    func siblingTagsStayApart(_ backend: Backend) throws {
        let dir = try TempDir()
        var coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        coordinator = try Zoo.reopen(backend, coordinator, in: dir)
        let c = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(c, "Cat", "tag == %@", ["t1"]) == ["Cat:Tom"])
        #expect(try Zoo.fetch(c, "Dog", "tag == %@", ["t1"]) == ["Dog:Rex"])
        #expect(try Zoo.count(c, "Cat", "tag == %@", ["t1"]) == 1)
        #expect(try Zoo.count(c, "Dog", "tag == %@", ["t2"]) == 0)
        #expect(try Zoo.fetch(c, "Cat", "tag IN %@", [PredicateArgument.list([.string("t1"), .string("t2")])], sort: [SortKey("tag")]) == ["Cat:Tom", "Cat:Kit"])
        #expect(try Zoo.fetch(c, "Dog", "tag IN %@", [PredicateArgument.list([.string("t1"), .string("t2")])]) == ["Dog:Rex"])
        // Changing the dog's tag to t2 (unsaved, then saved) does not move the cats.
        let rex = try Zoo.animal(c, "Rex")
        try rex.set("tag", "t2")
        #expect(try Zoo.fetch(c, "Cat", "tag == %@", ["t2"]) == ["Cat:Kit"])
        #expect(try Zoo.fetch(c, "Dog", "tag == %@", ["t2"]) == ["Dog:Rex"])
        try c.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(fresh, "Cat", "tag == %@", ["t2"]) == ["Cat:Kit"])
        #expect(try Zoo.fetch(fresh, "Dog", "tag == %@", ["t2"]) == ["Dog:Rex"])
        #expect(try Zoo.fetch(fresh, "Dog", "tag == %@", ["t1"]) == [])
        #expect(try Zoo.fetch(fresh, "Cat", "tag == %@", ["t1"]) == ["Cat:Tom"])
        #expect(try Zoo.animal(fresh, "Tom").get("tag", as: String.self) == "t1")
        #expect(try Zoo.animal(fresh, "Rex").get("tag", as: String.self) == "t2")
    }

    /// Siblings declaring `tag` with different types (Cat string, Bird integer): Core Data keeps separate
    /// columns (`ZTAG`, `ZTAG1`) and each reads back its own values.
    @Test(arguments: Backend.everyStore)
    func siblingTagsOfDifferentTypes(_ backend: Backend) throws {
        let dir = try TempDir()
        let model = try Zoo.model(birdTagType: .integer64)
        var coordinator = try backend.coordinator(model, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Zoo.populate(context)
        try Zoo.animal(context, "Polly").set("tag", Int64(7))
        try Zoo.animal(context, "Tweety").set("tag", Int64(9))
        #expect(try Zoo.fetch(context, "Bird", "tag > 8") == ["Bird:Tweety"])
        try context.save()
        coordinator = try Zoo.reopen(backend, coordinator, in: dir, model: model)
        let c = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(c, "Bird", "tag > 8") == ["Bird:Tweety"])
        #expect(try Zoo.fetch(c, "Bird", "tag == 7") == ["Bird:Polly"])
        #expect(try Zoo.fetch(c, "Cat", "tag == %@", ["t2"]) == ["Cat:Kit"])
        #expect(try Zoo.animal(c, "Tweety").get("tag", as: Int64.self) == 9)
        #expect(try Zoo.animal(c, "Kit").get("tag", as: String.self) == "t2")
        #expect(try Zoo.fetch(c, "Bird", sort: [SortKey("tag", ascending: false)]) == ["Bird:Tweety", "Bird:Polly"])
    }

    /// Core Data: a to-one whose destination has subentities points at the concrete object; re-read in a fresh
    /// context (and after reopening) it is of the right entity, and predicates compare it by object.
    @Test(arguments: Backend.everyStore)
    func toOneToTheParentKeepsTheSubentity(_ backend: Backend) throws {
        let dir = try TempDir()
        var coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        // Cat, Dog and Bird with possibly equal primary keys: each keeper's favorite is a different subentity.
        try Zoo.keeper(context, "Ann").setRelatedObject(try Zoo.animal(context, "Polly"), forKey: "favorite")
        try Zoo.keeper(context, "Bob").setRelatedObject(try Zoo.animal(context, "Tom"), forKey: "favorite")
        try context.save()
        coordinator = try Zoo.reopen(backend, coordinator, in: dir)
        let c = ObjectContext(coordinator: coordinator)
        let annFav = try #require(try Zoo.keeper(c, "Ann").relatedObject(forKey: "favorite"))
        #expect(try Zoo.labels([annFav]) == ["Bird:Polly"])
        let bobFav = try #require(try Zoo.keeper(c, "Bob").relatedObject(forKey: "favorite"))
        #expect(try Zoo.labels([bobFav]) == ["Cat:Tom"])
        #expect(try Zoo.labels(Zoo.animal(c, "Tom").relatedObjects(forKey: "fans")) == ["Keeper:Bob"])
        #expect(try Zoo.fetch(c, "Keeper", "favorite == %@", [try Zoo.animal(c, "Tom")]) == ["Keeper:Bob"])
        #expect(try Zoo.fetch(c, "Keeper", "favorite == %@", [try Zoo.animal(c, "Rex")]) == [])
        #expect(try Zoo.fetch(c, "Keeper", "favorite == %@", [try Zoo.animal(c, "Kit")]) == [])
        #expect(try Zoo.fetch(c, "Keeper", "favorite == %@", [try Zoo.animal(c, "Polly")]) == ["Keeper:Ann"])
        #expect(try Zoo.fetch(c, "Keeper", "favorite.name == %@", ["Tom"]) == ["Keeper:Bob"])
        #expect(try Zoo.fetch(c, "Keeper", "favorite.legs == 2") == ["Keeper:Ann"])
        #expect(try Zoo.fetch(c, "Animal", "ANY fans.name == %@", ["Ann"]) == ["Bird:Polly"])
        #expect(try Zoo.fetch(c, "Animal", "SELF == %@", [try Zoo.animal(c, "Rex")]) == ["Dog:Rex"])
        // Object IDs of different subentities are all distinct, also by URI.
        let ids = try c.fetch(Zoo.request("Animal")).map(\.objectID.uriRepresentation)
        #expect(Set(ids).count == 5)
    }

    /// Primary keys: every object of one tree has its own key in Core Data (one Z_PK sequence per root), so a
    /// to-one to the parent holding a Cat never reads a Dog.
    @Test(arguments: Backend.everyStore)
    func primaryKeysAreUniqueAcrossTheTree(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let cat = try Zoo.add(context, "Cat", "C")
        let dog = try Zoo.add(context, "Dog", "D")
        let bird = try Zoo.add(context, "Bird", "B")
        try context.save()
        let keys = [cat, dog, bird].compactMap(\.objectID.primaryKey)
        #expect(Set(keys).count == 3, "\(keys)")
        let k = try context.insert("Keeper")
        try k.set("name", "K")
        try k.setRelatedObject(dog, forKey: "favorite")
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.keeper(fresh, "K").relatedObject(forKey: "favorite").map { try Zoo.labels([$0]) } == ["Dog:D"])
        #expect(try Zoo.fetch(fresh, "Keeper", "favorite == %@", [try Zoo.animal(fresh, "C")]) == [])
        #expect(try Zoo.fetch(fresh, "Keeper", "favorite == %@", [try Zoo.animal(fresh, "D")]) == ["Keeper:K"])
        #expect(try fresh.existingObject(with: dog.objectID).entity.name == "Dog")
        let parsed = try ObjectID(uri: cat.objectID.uriRepresentation)
        #expect(try fresh.existingObject(with: parsed).get("name", as: String.self) == "C")
    }

    /// Core Data: a to-many to the abstract parent holds members of several subentities, read back with their
    /// own entities; `@count` and ANY work across them.
    @Test(arguments: Backend.everyStore)
    func toManyToTheParentHoldsSeveralSubentities(_ backend: Backend) throws {
        let dir = try TempDir()
        var coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Zoo.populate(context)
        let ann = try Zoo.keeper(context, "Ann")
        #expect(try Zoo.labels(ann.relatedObjects(forKey: "animals")).sorted() == ["Bird:Polly", "Cat:Tom", "Dog:Rex"])
        #expect(try Zoo.fetch(context, "Keeper", "animals.@count == 3") == ["Keeper:Ann"])
        try context.save()
        coordinator = try Zoo.reopen(backend, coordinator, in: dir)
        let c = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.labels(Zoo.keeper(c, "Ann").relatedObjects(forKey: "animals")).sorted() == ["Bird:Polly", "Cat:Tom", "Dog:Rex"])
        #expect(try Zoo.labels(Zoo.keeper(c, "Bob").relatedObjects(forKey: "animals")).sorted() == ["Bird:Tweety", "Cat:Kit"])
        #expect(try Zoo.fetch(c, "Keeper", "animals.@count == 3") == ["Keeper:Ann"])
        #expect(try Zoo.fetch(c, "Keeper", "ANY animals.name == %@", ["Kit"]) == ["Keeper:Bob"])
        #expect(try Zoo.fetch(c, "Keeper", "ANY animals.legs == 2", sort: [SortKey("name")]) == ["Keeper:Ann", "Keeper:Bob"])
        // Cats-only to-many beside it: empty until set, and holds cats only.
        #expect(try Zoo.keeper(c, "Ann").relatedObjects(forKey: "cats").isEmpty)
        try Zoo.keeper(c, "Ann").addRelatedObject(try Zoo.animal(c, "Kit"), forKey: "cats")
        #expect(try Zoo.animal(c, "Kit").relatedObject(forKey: "owner").map { try Zoo.labels([$0]) } == ["Keeper:Ann"])
        try c.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.labels(Zoo.keeper(fresh, "Ann").relatedObjects(forKey: "cats")) == ["Cat:Kit"])
        #expect(try Zoo.labels(Zoo.keeper(fresh, "Bob").relatedObjects(forKey: "animals")).sorted() == ["Bird:Tweety", "Cat:Kit"])
    }

    /// Core Data refuses a Dog in a relationship whose destination is Cat (validation at save at the latest).
    @Test(arguments: Backend.everyStore)
    func aSiblingIsRefusedWhereASubentityIsExpected(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Zoo.populate(context)
        let dog = try Zoo.animal(context, "Rex")
        var refused = false
        do {
            try Zoo.keeper(context, "Ann").addRelatedObject(dog, forKey: "cats")
            try context.save()
        } catch {
            refused = true
        }
        #expect(refused)
        let toy = try context.insert("Toy")
        var refusedKeeper = false
        do {
            try toy.setRelatedObject(try Zoo.keeper(context, "Ann"), forKey: "animal")
        } catch {
            refusedKeeper = true
        }
        #expect(refusedKeeper)
        expectContextError("insert abstract", { if case .abstractEntity = $0 { return true } else { return false } }) {
            _ = try context.insert("Mammal")
        }
    }

    /// Core Data's fetch includes pending changes: unsaved inserts of subentities show in the parent's fetch
    /// and count, changed inherited attributes match by current values, pending deletes are left out.
    @Test(arguments: Backend.everyStore)
    func pendingChangesShowInParentFetches(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let seed = try Zoo.populated(coordinator)
        let c = ObjectContext(coordinator: coordinator)
        try Zoo.add(c, "Dog", "Ace", legs: 4)
        try Zoo.animal(c, "Polly").set("legs", Int64(4))
        try c.delete(try Zoo.animal(c, "Tom"))
        #expect(try Zoo.fetch(c, "Animal", "legs == 4", sort: [SortKey("name")]) == ["Dog:Ace", "Bird:Polly", "Dog:Rex"])
        #expect(try Zoo.count(c, "Animal", "legs == 4") == 3)
        #expect(try Zoo.count(c, "Mammal") == 3)
        #expect(try Zoo.count(c, "Animal") == 5)
        #expect(try Zoo.count(c, "Animal", subentities: false) == 0)
        #expect(try Zoo.count(c, "Dog", subentities: false) == 2)
        #expect(try Zoo.fetch(c, "Mammal", sort: [SortKey("name")], limit: 2) == ["Dog:Ace", "Cat:Kit"])
        #expect(try Zoo.fetch(c, "Animal", "keeper.name == %@", ["Ann"], sort: [SortKey("name")]) == ["Bird:Polly", "Dog:Rex"])
        // A pending change to the keeper (reached by the key path) counts too.
        try Zoo.keeper(c, "Bob").set("name", "Ann")
        #expect(try Zoo.count(c, "Animal", "keeper.name == %@", ["Ann"]) == 4)
        try Zoo.keeper(c, "Ann").set("name", "Zed")
        try c.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(fresh, "Animal", "legs == 4", sort: [SortKey("name")]) == ["Dog:Ace", "Bird:Polly", "Dog:Rex"])
        #expect(try Zoo.count(fresh, "Cat") == 1)
    }

    /// Core Data's Cascade across the tree: deleting a keeper deletes its animals of every subentity, and their
    /// toys; Nullify clears the favorite that pointed at a deleted animal.
    @Test(arguments: Backend.everyStore)
    func cascadeAndNullifyAcrossTheTree(_ backend: Backend) throws {
        let dir = try TempDir()
        var coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Zoo.populate(context)
        for name in ["Tom", "Rex", "Polly", "Kit"] {
            let toy = try context.insert("Toy")
            try toy.set("name", "ball-\(name)")
            try toy.setRelatedObject(try Zoo.animal(context, name), forKey: "animal")
        }
        try Zoo.keeper(context, "Bob").setRelatedObject(try Zoo.animal(context, "Rex"), forKey: "favorite")
        try Zoo.keeper(context, "Bob").addRelatedObject(try Zoo.animal(context, "Tom"), forKey: "cats")
        try context.save()
        try context.delete(try Zoo.keeper(context, "Ann"))
        try context.save()
        #expect(try Zoo.fetch(context, "Animal", sort: [SortKey("name")]) == ["Cat:Kit", "Bird:Tweety"])
        #expect(try Zoo.count(context, "Toy") == 1)
        #expect(try Zoo.keeper(context, "Bob").relatedObject(forKey: "favorite") == nil)
        #expect(try Zoo.keeper(context, "Bob").relatedObjects(forKey: "cats").isEmpty)
        coordinator = try Zoo.reopen(backend, coordinator, in: dir)
        let c = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(c, "Animal", sort: [SortKey("name")]) == ["Cat:Kit", "Bird:Tweety"])
        #expect(try Zoo.fetch(c, "Toy") == ["Toy:ball-Kit"])
        #expect(try Zoo.keeper(c, "Bob").relatedObject(forKey: "favorite") == nil)
        #expect(try Zoo.keeper(c, "Bob").relatedObjects(forKey: "cats").isEmpty)
        #expect(try Zoo.fetch(c, "Keeper", "favorite == nil") == ["Keeper:Bob"])
    }

    /// Batch update and delete on the parent reach every subentity; on a subentity only that one.
    @Test(arguments: Backend.everyStore)
    func batchOperationsOnTheParent(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        #expect(try coordinator.batchUpdate("Mammal", where: try FetchPredicate(format: "legs == 4"), set: ["fur": .string("white")]) == 2)
        #expect(try coordinator.batchUpdate("Animal", set: ["legs": .integer(1)]) == 5)
        let c = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(c, "Mammal", "fur == %@", ["white"], sort: [SortKey("name")]) == ["Dog:Rex", "Cat:Tom"])
        #expect(try Zoo.count(c, "Animal", "legs == 1") == 5)
        #expect(try coordinator.batchDelete("Cat") == 2)
        let d = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(d, "Animal", sort: [SortKey("name")]) == ["Bird:Polly", "Dog:Rex", "Bird:Tweety"])
        #expect(try coordinator.batchDelete("Animal", where: try FetchPredicate(format: "name BEGINSWITH 'P'")) == 1)
        let e = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.fetch(e, "Animal", sort: [SortKey("name")]) == ["Dog:Rex", "Bird:Tweety"])
        #expect(try Zoo.labels(Zoo.keeper(e, "Ann").relatedObjects(forKey: "animals")) == ["Dog:Rex"])
    }

    /// Fetching a parent with a predicate on an attribute only one subentity has is an error in Core Data
    /// ("keypath tag not found in entity Animal"), never a silent result.
    @Test(arguments: Backend.everyStore)
    func subentityOnlyKeyOnTheParentIsAnError(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        #expect(throws: (any Error).self) { try Zoo.fetch(context, "Animal", "tag == %@", ["t1"]) }
        #expect(throws: (any Error).self) { try Zoo.count(context, "Mammal", "wingspan > 1") }
        #expect(throws: (any Error).self) { try Zoo.fetch(context, "Animal", sort: [SortKey("fur")]) }
        #expect(throws: (any Error).self) { try Zoo.fetch(context, "Keeper", "favorite.tag == %@", ["t1"]) }
        #expect(throws: (any Error).self) { try Zoo.animal(context, "Polly").set("fur", "x") }
        #expect(throws: (any Error).self) { try Zoo.animal(context, "Polly").get("tag", as: String.self) }
    }

    /// Moving an animal between keepers through either end, across subentities, and undoing with rollback.
    @Test(arguments: Backend.everyStore)
    func movingSubentityMembersAndRollback(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Zoo.model(), in: dir)
        let context = try Zoo.populated(coordinator)
        let ann = try Zoo.keeper(context, "Ann")
        let bob = try Zoo.keeper(context, "Bob")
        try bob.addRelatedObject(try Zoo.animal(context, "Rex"), forKey: "animals")
        try Zoo.animal(context, "Kit").setRelatedObject(ann, forKey: "keeper")
        #expect(try Zoo.labels(ann.relatedObjects(forKey: "animals")).sorted() == ["Bird:Polly", "Cat:Kit", "Cat:Tom"])
        #expect(try Zoo.fetch(context, "Mammal", "keeper == %@", [bob]) == ["Dog:Rex"])
        #expect(try Zoo.count(context, "Animal", "keeper == %@", [ann]) == 3)
        context.rollback()
        #expect(try Zoo.labels(ann.relatedObjects(forKey: "animals")).sorted() == ["Bird:Polly", "Cat:Tom", "Dog:Rex"])
        #expect(try Zoo.count(context, "Mammal", "keeper == %@", [bob]) == 1)
        try bob.setRelatedObjects([try Zoo.animal(context, "Polly"), try Zoo.animal(context, "Rex")], forKey: "animals")
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Zoo.labels(Zoo.keeper(fresh, "Bob").relatedObjects(forKey: "animals")).sorted() == ["Bird:Polly", "Dog:Rex"])
        #expect(try Zoo.labels(Zoo.keeper(fresh, "Ann").relatedObjects(forKey: "animals")) == ["Cat:Tom"])
        #expect(try Zoo.fetch(fresh, "Animal", "keeper == nil", sort: [SortKey("name")]) == ["Cat:Kit", "Bird:Tweety"])
    }
}

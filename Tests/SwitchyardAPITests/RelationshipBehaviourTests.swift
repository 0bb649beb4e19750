import Foundation
import Switchyard
import Testing

/// What relationships promise a user: both ends kept in step before and after a save, ordered members kept
/// in order, and delete rules applied. Each test names the Core Data behaviour it matches.
@Suite struct RelationshipBehaviourTests {
    /// Core Data keeps a one-to-one's inverse in step: setting `passport` sets the passport's `holder`,
    /// moving the passport to another person clears the first person's `passport`, and clearing one end
    /// clears the other — in the context and in the store.
    @Test(arguments: Backend.everyStore)
    func oneToOneKeepsBothEndsInStep(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Relations.insert(context, "Person", "Ann")
        let bob = try Relations.insert(context, "Person", "Bob")
        let passport = try Relations.insert(context, "Passport", "P1")
        try ann.setRelatedObject(passport, forKey: "passport")
        #expect(try passport.relatedObject(forKey: "holder") === ann)
        try context.save()
        #expect(try passport.relatedObject(forKey: "holder") === ann)

        try bob.setRelatedObject(passport, forKey: "passport")
        #expect(try passport.relatedObject(forKey: "holder") === bob)
        #expect(try ann.relatedObject(forKey: "passport") == nil)
        try context.save()
        do {
            let fresh = ObjectContext(coordinator: coordinator)
            #expect(try Relations.object(fresh, "Person", "Ann").relatedObject(forKey: "passport") == nil)
            let holder = try Relations.object(fresh, "Passport", "P1").relatedObject(forKey: "holder")
            #expect(try holder.map { try $0.get("name", as: String.self) } == "Bob")
            #expect(try Relations.object(fresh, "Person", "Bob").relatedObject(forKey: "passport")?.get("name", as: String.self) == "P1")
        }

        try passport.setRelatedObject(nil, forKey: "holder")
        #expect(try bob.relatedObject(forKey: "passport") == nil)
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.object(fresh, "Person", "Bob").relatedObject(forKey: "passport") == nil)
        #expect(try Relations.object(fresh, "Passport", "P1").relatedObject(forKey: "holder") == nil)
    }

    /// Core Data: a to-many whose inverse is a to-one reads its members through that inverse; setting the
    /// member's to-one, or adding/removing on the to-many side, changes both ends, before and after a save.
    @Test(arguments: Backend.everyStore)
    func toManyFollowsItsToOneInverse(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Relations.insert(context, "Person", "Ann")
        let bob = try Relations.insert(context, "Person", "Bob")
        let rex = try Relations.insert(context, "Pet", "Rex")
        let tom = try Relations.insert(context, "Pet", "Tom")
        try rex.setRelatedObject(ann, forKey: "owner")
        try ann.addRelatedObject(tom, forKey: "pets")
        #expect(try Relations.memberNames(ann, "pets") == ["Rex", "Tom"])
        #expect(try tom.relatedObject(forKey: "owner") === ann)
        try context.save()
        #expect(try Relations.memberNames(ann, "pets") == ["Rex", "Tom"])

        try bob.addRelatedObject(rex, forKey: "pets")           // moves Rex from Ann to Bob
        #expect(try rex.relatedObject(forKey: "owner") === bob)
        #expect(try Relations.memberNames(ann, "pets") == ["Tom"])
        #expect(try Relations.memberNames(bob, "pets") == ["Rex"])
        try ann.removeRelatedObject(tom, forKey: "pets")
        #expect(try tom.relatedObject(forKey: "owner") == nil)
        try context.save()
        do {
            let fresh = ObjectContext(coordinator: coordinator)
            #expect(try Relations.memberNames(Relations.object(fresh, "Person", "Ann"), "pets") == [])
            #expect(try Relations.memberNames(Relations.object(fresh, "Person", "Bob"), "pets") == ["Rex"])
            #expect(try Relations.object(fresh, "Pet", "Tom").relatedObject(forKey: "owner") == nil)
        }

        try ann.setRelatedObjects([rex, tom], forKey: "pets")    // replaces Ann's pets; Rex leaves Bob
        #expect(try Relations.memberNames(bob, "pets") == [])
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.memberNames(Relations.object(fresh, "Person", "Ann"), "pets") == ["Rex", "Tom"])
        #expect(try Relations.memberNames(Relations.object(fresh, "Person", "Bob"), "pets") == [])
    }

    /// Core Data keeps both sides of a many-to-many in step: adding a course to a student adds the student to
    /// the course, removing from either side removes from both, and the store holds the same links.
    @Test(arguments: Backend.everyStore)
    func manyToManyAddAndRemoveFromEitherSide(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let s1 = try Relations.insert(context, "Student", "s1")
        let s2 = try Relations.insert(context, "Student", "s2")
        let math = try Relations.insert(context, "Course", "math")
        let art = try Relations.insert(context, "Course", "art")
        try s1.addRelatedObject(math, forKey: "courses")
        try s1.addRelatedObject(art, forKey: "courses")
        try art.addRelatedObject(s2, forKey: "students")
        func check(_ context: ObjectContext, _ expected: [String: [String]], sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (name, members) in expected {
                let entity = name.hasPrefix("s") ? "Student" : "Course"
                let key = entity == "Student" ? "courses" : "students"
                #expect(try Relations.memberNames(Relations.object(context, entity, name), key) == members, "\(name)", sourceLocation: sourceLocation)
            }
        }
        let linked = ["s1": ["art", "math"], "s2": ["art"], "math": ["s1"], "art": ["s1", "s2"]]
        try check(context, linked)
        try context.save()
        try check(context, linked)
        try check(ObjectContext(coordinator: coordinator), linked)

        try art.removeRelatedObject(s1, forKey: "students")
        try s2.addRelatedObject(math, forKey: "courses")
        let changed = ["s1": ["math"], "s2": ["art", "math"], "math": ["s1", "s2"], "art": ["s2"]]
        try check(context, changed)
        try context.save()
        try check(ObjectContext(coordinator: coordinator), changed)

        // Deleting a course (Nullify) takes it out of every student's list.
        try context.delete(math)
        try context.save()
        try check(ObjectContext(coordinator: coordinator), ["s1": [], "s2": ["art"], "art": ["s2"]])
    }

    /// Core Data's ordered to-many (`NSOrderedSet`): members keep the order given by insert-at-index and
    /// moves, in the context, after the save and in a fresh context; the inverse to-one follows.
    @Test(arguments: Backend.everyStore)
    func orderedToManyKeepsItsOrderAcrossSaves(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let list = try Relations.insert(context, "Playlist", "mix")
        let songs = try ["a", "b", "c", "d"].map { try Relations.insert(context, "Song", $0) }
        for song in songs.prefix(3) { try list.addRelatedObject(song, forKey: "songs") }
        try list.insertRelatedObject(songs[3], at: 1, forKey: "songs")
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == ["a", "d", "b", "c"])
        try list.moveRelatedObject(from: 3, to: 0, forKey: "songs")
        let expected = ["c", "a", "d", "b"]
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == expected)
        #expect(try songs[2].relatedObject(forKey: "playlist") === list)
        try context.save()
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == expected)

        let fresh = ObjectContext(coordinator: coordinator)
        let freshList = try Relations.object(fresh, "Playlist", "mix")
        #expect(try Relations.names(freshList.relatedObjects(forKey: "songs")) == expected)
        // Change it there: a new song at 2, "a" removed, an existing member moved to the end.
        let e = try Relations.insert(fresh, "Song", "e")
        try freshList.insertRelatedObject(e, at: 2, forKey: "songs")              // c a e d b
        try freshList.removeRelatedObject(try Relations.object(fresh, "Song", "a"), forKey: "songs")   // c e d b
        try freshList.insertRelatedObject(try Relations.object(fresh, "Song", "c"), at: 3, forKey: "songs")  // e d b c
        #expect(try Relations.names(freshList.relatedObjects(forKey: "songs")) == ["e", "d", "b", "c"])
        try fresh.save()
        let third = ObjectContext(coordinator: coordinator)
        #expect(try Relations.names(Relations.object(third, "Playlist", "mix").relatedObjects(forKey: "songs")) == ["e", "d", "b", "c"])
        #expect(try Relations.object(third, "Song", "a").relatedObject(forKey: "playlist") == nil)
    }

    /// Core Data's Nullify delete rule: deleting the folder leaves its notes, with their `folder` cleared.
    @Test(arguments: Backend.everyStore)
    func nullifyClearsTheInverseOfWhatIsLeft(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let folder = try Relations.insert(context, "Folder", "inbox")
        let notes = try ["n1", "n2"].map { try Relations.insert(context, "Note", $0) }
        for note in notes { try note.setRelatedObject(folder, forKey: "folder") }
        try context.save()
        try context.delete(folder)
        try context.save()
        #expect(try notes.allSatisfy { try $0.relatedObject(forKey: "folder") == nil })
        #expect(try Relations.savedNames(coordinator, "Folder") == [])
        #expect(try Relations.savedNames(coordinator, "Note") == ["n1", "n2"])
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try fresh.fetch(FetchRequest(entityName: "Note")).allSatisfy { try $0.relatedObject(forKey: "folder") == nil })
        #expect(try fresh.count(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "folder == nil"))) == 2)
    }

    /// Core Data's Cascade delete rule: deleting a person deletes their pets, and only theirs.
    @Test(arguments: Backend.everyStore)
    func cascadeDeletesTheMembersToo(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Relations.insert(context, "Person", "Ann")
        let bob = try Relations.insert(context, "Person", "Bob")
        for (pet, owner) in [("Rex", ann), ("Tom", ann), ("Kit", bob)] {
            try Relations.insert(context, "Pet", pet).setRelatedObject(owner, forKey: "owner")
        }
        try context.save()
        try context.delete(ann)
        try context.save()
        #expect(try Relations.savedNames(coordinator, "Person") == ["Bob"])
        #expect(try Relations.savedNames(coordinator, "Pet") == ["Kit"])
        #expect(try Relations.names(context.fetch(FetchRequest(entityName: "Pet"))) == ["Kit"])
    }

    /// Core Data's Deny delete rule (`NSValidationRelationshipDeniedDeleteError`): deleting a team that still
    /// has members fails the save and nothing of that save is written; once the team is empty it can go.
    @Test(arguments: Backend.everyStore)
    func denyRefusesTheWholeSaveWhileMembersRemain(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let team = try Relations.insert(context, "Team", "red")
        let member = try Relations.insert(context, "Member", "m1")
        try member.setRelatedObject(team, forKey: "team")
        try context.save()

        try context.delete(team)
        try Relations.insert(context, "Person", "bystander")
        expectContextError("deny", {
            guard case let .deleteDenied(entity, key, _, count) = $0 else { return false }
            return entity == "Team" && key == "members" && count == 1
        }) { try context.save() }
        #expect(try Relations.savedNames(coordinator, "Team") == ["red"])
        #expect(try Relations.savedNames(coordinator, "Person") == [])
        #expect(try Relations.savedNames(coordinator, "Member") == ["m1"])
        #expect(context.hasChanges && team.isDeleted)
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.object(fresh, "Member", "m1").relatedObject(forKey: "team")?.get("name", as: String.self) == "red")

        context.rollback()
        try member.setRelatedObject(nil, forKey: "team")
        try context.delete(team)
        try context.save()
        #expect(try Relations.savedNames(coordinator, "Team") == [])
        #expect(try Relations.savedNames(coordinator, "Member") == ["m1"])
    }

    /// Core Data's relationship validation at save: a required to-one left empty
    /// (`NSValidationMissingMandatoryPropertyError`) and a to-many below its minimum or above its maximum
    /// count (`NSValidationRelationshipLacksMinimumCountError` / `ExceedsMaximumCountError`) fail the save,
    /// and nothing of it is written.
    @Test(arguments: Backend.everyStore)
    func requiredToOneAndToManyCountsAreCheckedAtSave(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let loose = try Relations.insert(context, "Wheel", "loose")
        expectContextError("wheel without car", {
            guard case let .missingRequiredValue(entity, key, _) = $0 else { return false }
            return entity == "Wheel" && key == "car"
        }) { try context.save() }
        try context.delete(loose)

        let car = try Relations.insert(context, "Car", "car")
        expectContextError("car without wheels", {
            guard case let .relationshipCount(entity, key, count, min, _, _) = $0 else { return false }
            return entity == "Car" && key == "wheels" && count == 0 && min == 1
        }) { try context.save() }
        let wheels = try (1...5).map { try Relations.insert(context, "Wheel", "w\($0)") }
        for wheel in wheels { try car.addRelatedObject(wheel, forKey: "wheels") }
        expectContextError("five wheels", {
            guard case let .relationshipCount(_, "wheels", count, _, max, _) = $0 else { return false }
            return count == 5 && max == 4
        }) { try context.save() }
        #expect(try Relations.savedNames(coordinator, "Car") == [])
        #expect(try Relations.savedNames(coordinator, "Wheel") == [])
        try context.delete(wheels[4])
        try context.save()
        #expect(try Relations.savedNames(coordinator, "Wheel") == ["w1", "w2", "w3", "w4"])
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.memberNames(Relations.object(fresh, "Car", "car"), "wheels") == ["w1", "w2", "w3", "w4"])
    }

    /// A to-many read leaves out members deleted in this context before the save (Core Data removes them
    /// when it processes the deletion), and a deleted member's to-one is cleared by Nullify at the save.
    @Test(arguments: Backend.everyStore)
    func deletedMembersLeaveToManyReadsBeforeTheSave(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Relations.insert(context, "Person", "Ann")
        let pets = try ["Rex", "Tom"].map { try Relations.insert(context, "Pet", $0) }
        for pet in pets { try pet.setRelatedObject(ann, forKey: "owner") }
        let s1 = try Relations.insert(context, "Student", "s1")
        let courses = try ["art", "math"].map { try Relations.insert(context, "Course", $0) }
        for course in courses { try s1.addRelatedObject(course, forKey: "courses") }
        try context.save()
        try context.delete(pets[0])
        try context.delete(courses[0])
        #expect(try Relations.memberNames(ann, "pets") == ["Tom"])
        #expect(try Relations.memberNames(s1, "courses") == ["math"])
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.memberNames(Relations.object(fresh, "Person", "Ann"), "pets") == ["Tom"])
        #expect(try Relations.memberNames(Relations.object(fresh, "Student", "s1"), "courses") == ["math"])
    }

    /// Core Data refuses a relationship value of the wrong entity ("Unacceptable type of value for to-one
    /// relationship"), an object of another context ("Illegal attempt to establish a relationship between
    /// objects in different contexts"), and to-one access to a to-many (and back); nothing changes.
    @Test(arguments: Backend.everyStore)
    func relationshipsRefuseWrongEntitiesKindsAndContexts(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Relations.insert(context, "Person", "Ann")
        let rex = try Relations.insert(context, "Pet", "Rex")
        let course = try Relations.insert(context, "Course", "art")
        try context.save()
        func isTypeMismatch(_ e: ContextError) -> Bool { if case .typeMismatch = e { return true } else { return false } }
        func isForeign(_ e: ContextError) -> Bool { if case .foreignObject = e { return true } else { return false } }
        expectContextError("to-one to the wrong entity", isTypeMismatch) { try rex.setRelatedObject(course, forKey: "owner") }
        expectContextError("to-many member of the wrong entity", isTypeMismatch) { try ann.addRelatedObject(course, forKey: "pets") }
        expectContextError("to-one access to a to-many", isTypeMismatch) { try ann.setRelatedObject(rex, forKey: "pets") }
        expectContextError("to-many access to a to-one", isTypeMismatch) { _ = try rex.relatedObjects(forKey: "owner") }
        expectContextError("unknown relationship", { $0 == .unknownKey(entity: "Pet", key: "vet") }) { _ = try rex.relatedObject(forKey: "vet") }
        let other = ObjectContext(coordinator: coordinator)
        let bob = try Relations.insert(other, "Person", "Bob")
        expectContextError("to-one into another context", isForeign) { try rex.setRelatedObject(bob, forKey: "owner") }
        expectContextError("to-many member from another context", isForeign) { try bob.addRelatedObject(rex, forKey: "pets") }
        expectContextError("delete through another context", isForeign) { try other.delete(rex) }
        #expect(!context.hasChanges)
        #expect(try rex.relatedObject(forKey: "owner") == nil)
        #expect(try ann.relatedObjects(forKey: "pets").isEmpty)
    }

    /// Core Data relationships of an entity to itself: moving a child by its to-one takes it out of the old
    /// parent's ordered children and appends it to the new one's; a many-to-many that is its own inverse
    /// links both ways; an ordered many-to-many keeps its order and moves; a to-one without inverse is kept;
    /// Cascade runs down a tree and through a cycle (A ⇄ B) without looping.
    @Test(arguments: Backend.everyStore)
    func selfReferencesOrderedManyToManyAndCascadeCycles(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Graph.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        func make(_ entity: String, _ name: String) throws -> ManagedObject { try Relations.insert(context, entity, name) }
        let root = try make("Node", "root"), x = try make("Node", "x"), y = try make("Node", "y"), z = try make("Node", "z")
        let other = try make("Node", "other")
        for child in [x, y, z] { try root.addRelatedObject(child, forKey: "children") }
        try y.setRelatedObject(other, forKey: "parent")
        #expect(try Relations.names(root.relatedObjects(forKey: "children")) == ["x", "z"])
        #expect(try Relations.names(other.relatedObjects(forKey: "children")) == ["y"])
        try x.addRelatedObject(z, forKey: "friends")
        #expect(try Relations.memberNames(z, "friends") == ["x"])
        let l1 = try make("Label", "l1"), l2 = try make("Label", "l2"), l3 = try make("Label", "l3")
        for label in [l3, l1, l2] { try x.addRelatedObject(label, forKey: "labels") }
        try l1.addRelatedObject(z, forKey: "nodes")
        try x.setRelatedObject(l2, forKey: "pinned")
        let a = try make("A", "a")
        try a.setRelatedObject(try make("B", "b"), forKey: "b")
        try context.save()

        let fresh = ObjectContext(coordinator: coordinator)
        let freshX = try Relations.object(fresh, "Node", "x")
        #expect(try Relations.names(Relations.object(fresh, "Node", "root").relatedObjects(forKey: "children")) == ["x", "z"])
        #expect(try Relations.object(fresh, "Node", "y").relatedObject(forKey: "parent")?.get("name", as: String.self) == "other")
        #expect(try Relations.memberNames(Relations.object(fresh, "Node", "z"), "friends") == ["x"])
        #expect(try Relations.memberNames(freshX, "friends") == ["z"])
        #expect(try Relations.names(freshX.relatedObjects(forKey: "labels")) == ["l3", "l1", "l2"])
        #expect(try Relations.memberNames(Relations.object(fresh, "Label", "l1"), "nodes") == ["x", "z"])
        #expect(try freshX.relatedObject(forKey: "pinned")?.get("name", as: String.self) == "l2")
        try freshX.moveRelatedObject(from: 0, to: 2, forKey: "labels")
        try fresh.save()
        let third = ObjectContext(coordinator: coordinator)
        #expect(try Relations.names(Relations.object(third, "Node", "x").relatedObjects(forKey: "labels")) == ["l1", "l2", "l3"])

        try third.delete(Relations.object(third, "Node", "root"))
        try third.delete(Relations.object(third, "A", "a"))
        try third.save()
        #expect(try Relations.savedNames(coordinator, "Node") == ["other", "y"])
        #expect(try Relations.savedNames(coordinator, "A") == [] && Relations.savedNames(coordinator, "B") == [])
        #expect(try Relations.savedNames(coordinator, "Label") == ["l1", "l2", "l3"])
        let last = ObjectContext(coordinator: coordinator)
        #expect(try Relations.memberNames(Relations.object(last, "Label", "l1"), "nodes") == [])
    }

    /// Like a fired Core Data to-many fault, members read in one context stay as read while another context
    /// saves changes; re-fetching the owner, `refresh(_:mergeChanges:)` or `refreshAllObjects()` shows the
    /// new members (for a to-many through a to-one inverse and a many-to-many alike).
    @Test(arguments: Backend.everyStore)
    func membersReadStayUntilTheOwnerIsRefetchedOrRefreshed(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let setup = ObjectContext(coordinator: coordinator)
        let ann = try Relations.insert(setup, "Person", "Ann")
        try Relations.insert(setup, "Pet", "Rex").setRelatedObject(ann, forKey: "owner")
        let student = try Relations.insert(setup, "Student", "s")
        try student.addRelatedObject(try Relations.insert(setup, "Course", "c1"), forKey: "courses")
        try Relations.insert(setup, "Course", "c2")
        try setup.save()

        let reader = ObjectContext(coordinator: coordinator)
        let readerAnn = try Relations.object(reader, "Person", "Ann")
        let readerStudent = try Relations.object(reader, "Student", "s")
        #expect(try Relations.memberNames(readerAnn, "pets") == ["Rex"])
        #expect(try Relations.memberNames(readerStudent, "courses") == ["c1"])
        func addMembers(_ round: Int) throws {
            let writer = ObjectContext(coordinator: coordinator)
            try Relations.insert(writer, "Pet", "Pet\(round)").setRelatedObject(try Relations.object(writer, "Person", "Ann"), forKey: "owner")
            try Relations.object(writer, "Student", "s").addRelatedObject(try Relations.insert(writer, "Course", "c\(round + 2)"), forKey: "courses")
            try writer.save()
        }
        try addMembers(1)
        #expect(try Relations.memberNames(readerAnn, "pets") == ["Rex"])
        #expect(try Relations.memberNames(readerStudent, "courses") == ["c1"])
        _ = try reader.fetch(FetchRequest(entityName: "Person"))
        _ = try reader.fetch(FetchRequest(entityName: "Student"))
        #expect(try Relations.memberNames(readerAnn, "pets") == ["Pet1", "Rex"])
        #expect(try Relations.memberNames(readerStudent, "courses") == ["c1", "c3"])
        try addMembers(2)
        try reader.refresh(readerAnn)
        try reader.refresh(readerStudent)
        #expect(try Relations.memberNames(readerAnn, "pets") == ["Pet1", "Pet2", "Rex"])
        #expect(try Relations.memberNames(readerStudent, "courses") == ["c1", "c3", "c4"])
        try addMembers(3)
        try reader.refreshAllObjects()
        #expect(try Relations.memberNames(readerAnn, "pets") == ["Pet1", "Pet2", "Pet3", "Rex"])
        #expect(try Relations.memberNames(readerStudent, "courses") == ["c1", "c3", "c4", "c5"])
    }

    /// Core Data's Nullify also covers references made since the last save: a new order pointing at a
    /// customer, and a saved order newly pointed at it, are both saved with no customer when the customer
    /// is deleted in the same save; a deleted tag leaves the many-to-many lists of new and saved orders.
    @Test(arguments: Backend.everyStore)
    func nullifyCoversUnsavedReferencesToTheDeletedObject(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann")
        let tag = try context.insert("Tag")
        try tag.set("label", "t")
        let old = try Shop.order(context, "old", qty: 1)
        try context.save()
        let new = try Shop.order(context, "new", qty: 1, customer: ann)
        try new.addRelatedObject(tag, forKey: "tags")
        try old.setRelatedObject(ann, forKey: "customer")
        try old.addRelatedObject(tag, forKey: "tags")
        try context.delete(ann)
        try context.delete(tag)
        try context.save()
        for order in [new, old] {
            #expect(try order.relatedObject(forKey: "customer") == nil)
            #expect(try order.relatedObjects(forKey: "tags").isEmpty)
        }
        let fresh = ObjectContext(coordinator: coordinator)
        let orders = try fresh.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try Shop.codes(orders) == ["new", "old"])
        #expect(try orders.allSatisfy { try $0.relatedObject(forKey: "customer") == nil && $0.relatedObjects(forKey: "tags").isEmpty })
        #expect(try fresh.count(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "customer == nil AND tags.@count == 0"))) == 2)
    }

    /// Core Data's to-many relationships are sets (`NSSet`, `NSOrderedSet`): a member given twice is kept
    /// once (its first place, for an ordered one), adding a member again changes nothing on either side,
    /// and an index outside an ordered list, or an index on an unordered one, is refused.
    @Test(arguments: Backend.everyStore)
    func toManyMembersAreUniqueAndIndexesChecked(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Relations.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let list = try Relations.insert(context, "Playlist", "mix")
        let a = try Relations.insert(context, "Song", "a")
        let b = try Relations.insert(context, "Song", "b")
        try list.setRelatedObjects([a, b, a], forKey: "songs")
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == ["a", "b"])
        let student = try Relations.insert(context, "Student", "s")
        let course = try Relations.insert(context, "Course", "c")
        try student.setRelatedObjects([course, course], forKey: "courses")
        try student.addRelatedObject(course, forKey: "courses")
        try course.addRelatedObject(student, forKey: "students")
        let ann = try Relations.insert(context, "Person", "Ann")
        let rex = try Relations.insert(context, "Pet", "Rex")
        try ann.setRelatedObjects([rex, rex], forKey: "pets")
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Relations.names(Relations.object(fresh, "Playlist", "mix").relatedObjects(forKey: "songs")) == ["a", "b"])
        #expect(try Relations.names(Relations.object(fresh, "Student", "s").relatedObjects(forKey: "courses")) == ["c"])
        #expect(try Relations.names(Relations.object(fresh, "Course", "c").relatedObjects(forKey: "students")) == ["s"])
        #expect(try Relations.names(Relations.object(fresh, "Person", "Ann").relatedObjects(forKey: "pets")) == ["Rex"])

        func isTypeMismatch(_ e: ContextError) -> Bool { if case .typeMismatch = e { return true } else { return false } }
        let c = try Relations.insert(context, "Song", "c")
        expectContextError("insert past the end", { $0 == .indexOutOfRange(entity: "Playlist", key: "songs", index: "3", valid: "0...2") }) {
            try list.insertRelatedObject(c, at: 3, forKey: "songs")
        }
        expectContextError("insert before the start", { $0 == .indexOutOfRange(entity: "Playlist", key: "songs", index: "-1", valid: "0...2") }) {
            try list.insertRelatedObject(c, at: -1, forKey: "songs")
        }
        expectContextError("move from past the end", { $0 == .indexOutOfRange(entity: "Playlist", key: "songs", index: "2 -> 0", valid: "0..<2") }) {
            try list.moveRelatedObject(from: 2, to: 0, forKey: "songs")
        }
        expectContextError("index on an unordered to-many", isTypeMismatch) { try ann.insertRelatedObject(rex, at: 0, forKey: "pets") }
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == ["a", "b"])
        try list.insertRelatedObject(c, at: 2, forKey: "songs")
        #expect(try Relations.names(list.relatedObjects(forKey: "songs")) == ["a", "b", "c"])
    }
}

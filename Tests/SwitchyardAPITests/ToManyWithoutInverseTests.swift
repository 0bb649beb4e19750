import Foundation
import Switchyard
import Testing

/// To-many relationships without an inverse, as SwiftData models produce them routinely and Core Data stores
/// them: the member's row holds its owner (a hidden foreign key `Z<n><NAME>`), so a member belongs to at most
/// one owner through the relationship. Read, written, queried (`ANY`, `@count`), deleted and migrated the same
/// on every backend.
@Suite struct ToManyWithoutInverseTests {
    /// Cart --items->> Item (no inverse, Cascade), Cart --steps->> Step (ordered, no inverse, Nullify);
    /// GiftItem is a subentity of Item.
    /// `version2` renames `items` to `products` (renaming identifier `items`), renames `steps` to `stages`,
    /// and adds `extras` (to Item, without inverse).
    static func model(extraAttribute: Bool = false, version2: Bool = false) throws -> ObjectModel {
        var cartAttributes = [AttributeDescription(name: "name", type: .string, isOptional: false)]
        if extraAttribute { cartAttributes.append(AttributeDescription(name: "note", type: .string)) }
        var relationships = [
            RelationshipDescription(name: "items", destination: "Item", isToMany: true, deleteRule: .cascade),
            RelationshipDescription(name: "steps", destination: "Step", isToMany: true, isOrdered: true),
        ]
        if version2 {
            relationships = [
                RelationshipDescription(name: "products", destination: "Item", isToMany: true, deleteRule: .cascade, renamingIdentifier: "items"),
                RelationshipDescription(name: "stages", destination: "Step", isToMany: true, isOrdered: true, renamingIdentifier: "steps"),
                RelationshipDescription(name: "extras", destination: "Item", isToMany: true),
            ]
        }
        let cart = EntityDescription(name: "Cart", attributes: cartAttributes, relationships: relationships)
        let item = EntityDescription(name: "Item", attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)])
        let gift = EntityDescription(name: "GiftItem", parent: "Item", attributes: [AttributeDescription(name: "wrap", type: .string)])
        let step = EntityDescription(name: "Step", attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)])
        return try ObjectModel(
            entities: [cart, item, gift, step],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Cart", "Item", "GiftItem", "Step"])])
    }

    static func insert(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        let object = try context.insert(entity)
        try object.set("name", name)
        return object
    }

    static func object(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        let found = try context.fetch(FetchRequest(entityName: entity, predicate: try FetchPredicate(format: "name == %@", name)))
        return try #require(found.first, "\(entity) \(name)")
    }

    static func names(_ object: ManagedObject, _ key: String) throws -> [String] {
        try object.relatedObjects(forKey: key).map { try $0.get("name", as: String.self) ?? "?" }
    }

    static func cartNames(_ context: ObjectContext, _ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> [String] {
        let predicate = try FetchPredicate(format: format, arguments: arguments.map(\.predicateArgument))
        let request = FetchRequest(entityName: "Cart", predicate: predicate, sortKeys: [SortKey("name")])
        return try context.fetch(request).map { try $0.get("name", as: String.self) ?? "?" }
    }

    /// Core Data: members added on the to-many side are saved (in the member's row) and read back by any
    /// context; a member added to a second owner leaves the first (one foreign key), before and after a save;
    /// `ANY` and `@count` see the members.
    @Test(arguments: Backend.everyStore)
    func membersAreSavedMovedAndQueried(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.insert(context, "Cart", "A"), b = try Self.insert(context, "Cart", "B")
        let x = try Self.insert(context, "Item", "x"), y = try Self.insert(context, "GiftItem", "y"), z = try Self.insert(context, "Item", "z")
        try a.setRelatedObjects([x, y], forKey: "items")
        try b.addRelatedObject(z, forKey: "items")
        #expect(try Self.names(a, "items") == ["x", "y"])
        try context.save()
        #expect(try Self.names(a, "items") == ["x", "y"])
        do {
            let fresh = ObjectContext(coordinator: coordinator)
            #expect(try Self.names(Self.object(fresh, "Cart", "A"), "items") == ["x", "y"])
            #expect(try Self.names(Self.object(fresh, "Cart", "B"), "items") == ["z"])
            #expect(try Self.cartNames(fresh, "ANY items.name == %@", "y") == ["A"])
            #expect(try Self.cartNames(fresh, "items.@count == 2") == ["A"])
            #expect(try Self.cartNames(fresh, "items.@count == 0") == [])
            #expect(try fresh.count(FetchRequest(entityName: "Cart", predicate: try FetchPredicate(format: "ANY items.name BEGINSWITH %@", "z"))) == 1)
        }

        // Moving y to B takes it from A's list at once (A's list is loaded here).
        try b.addRelatedObject(y, forKey: "items")
        #expect(try Self.names(a, "items") == ["x"])
        #expect(try Self.names(b, "items") == ["y", "z"])
        #expect(try Self.cartNames(context, "ANY items.name == %@", "y") == ["B"])
        try context.save()
        do {
            let fresh = ObjectContext(coordinator: coordinator)
            #expect(try Self.names(Self.object(fresh, "Cart", "A"), "items") == ["x"])
            #expect(try Self.names(Self.object(fresh, "Cart", "B"), "items") == ["y", "z"])
        }

        // In a context that has not read A's list, taking x for B still leaves A without it.
        do {
            let other = ObjectContext(coordinator: coordinator)
            let otherB = try Self.object(other, "Cart", "B")
            try otherB.addRelatedObject(Self.object(other, "Item", "x"), forKey: "items")
            #expect(try Self.names(Self.object(other, "Cart", "A"), "items") == [])
            try other.save()
        }
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(Self.object(fresh, "Cart", "A"), "items") == [])
        #expect(try Self.names(Self.object(fresh, "Cart", "B"), "items") == ["x", "y", "z"])
        #expect(try Self.cartNames(fresh, "items.@count == 3") == ["B"])

        // Removing a member keeps the member, without an owner.
        let freshB = try Self.object(fresh, "Cart", "B")
        try freshB.removeRelatedObject(Self.object(fresh, "Item", "z"), forKey: "items")
        try fresh.save()
        let last = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(Self.object(last, "Cart", "B"), "items") == ["x", "y"])
        #expect(try last.count(FetchRequest(entityName: "Item")) == 3)
    }

    /// Core Data: an ordered to-many keeps its order (`Z_FOK_` beside the hidden key on SQLite), across saves
    /// and moves.
    @Test(arguments: Backend.everyStore)
    func orderedMembersKeepTheirOrder(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.insert(context, "Cart", "A")
        let steps = try ["s1", "s2", "s3", "s4"].map { try Self.insert(context, "Step", $0) }
        try a.setRelatedObjects([steps[2], steps[0], steps[3], steps[1]], forKey: "steps")
        try context.save()
        let reader = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(Self.object(reader, "Cart", "A"), "steps") == ["s3", "s1", "s4", "s2"])
        try a.moveRelatedObject(from: 0, to: 3, forKey: "steps")
        try a.insertRelatedObject(Self.insert(context, "Step", "s5"), at: 0, forKey: "steps")
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(Self.object(fresh, "Cart", "A"), "steps") == ["s5", "s1", "s4", "s2", "s3"])
        #expect(try Self.cartNames(fresh, "steps.@count == 5") == ["A"])
    }

    /// Core Data's delete rules on the to-many side: Cascade deletes the members with the owner; Nullify
    /// leaves them, owned by nobody; deleting a member takes it out of its owner's list.
    @Test(arguments: Backend.everyStore)
    func deleteRulesApply(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.insert(context, "Cart", "A"), b = try Self.insert(context, "Cart", "B")
        try a.setRelatedObjects([Self.insert(context, "Item", "x"), Self.insert(context, "Item", "y")], forKey: "items")
        try a.setRelatedObjects([Self.insert(context, "Step", "s1"), Self.insert(context, "Step", "s2")], forKey: "steps")
        try b.setRelatedObjects([Self.insert(context, "Item", "z")], forKey: "items")
        try context.save()

        let second = ObjectContext(coordinator: coordinator)
        try second.delete(Self.object(second, "Item", "z"))
        try second.delete(Self.object(second, "Cart", "A"))
        try second.save()
        let fresh = ObjectContext(coordinator: coordinator)
        let items = try fresh.fetch(FetchRequest(entityName: "Item")).map { try $0.get("name", as: String.self) ?? "?" }
        #expect(items == [], "Cascade deletes A's items; z was deleted itself")
        #expect(try Self.names(Self.object(fresh, "Cart", "B"), "items") == [])
        #expect(try fresh.count(FetchRequest(entityName: "Step")) == 2, "Nullify keeps the steps")

        // A new owner takes the orphaned steps; the old owner's key was cleared, not left dangling.
        let c = try Self.insert(fresh, "Cart", "C")
        try c.setRelatedObjects(fresh.fetch(FetchRequest(entityName: "Step", sortKeys: [SortKey("name")])), forKey: "steps")
        try fresh.save()
        let reader = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(Self.object(reader, "Cart", "C"), "steps") == ["s1", "s2"])
    }

    /// A store at the first model: cart A with items x, y (a GiftItem) and steps s2, s1; item z owned by nobody.
    static func writeVersion1(_ backend: Backend, in dir: TempDir) throws {
        let coordinator = try backend.coordinator(Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.insert(context, "Cart", "A")
        try a.setRelatedObjects([Self.insert(context, "Item", "x"), Self.insert(context, "GiftItem", "y")], forKey: "items")
        try a.setRelatedObjects([Self.insert(context, "Step", "s2"), Self.insert(context, "Step", "s1")], forKey: "steps")
        _ = try Self.insert(context, "Item", "z")
        try context.save()
    }

    /// A lightweight migration (an added attribute) keeps every owner's members and their order.
    @Test(arguments: Backend.persistent)
    func migrationKeepsMembers(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.writeVersion1(backend, in: dir)
        let coordinator = try backend.coordinator(Self.model(extraAttribute: true), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.object(context, "Cart", "A")
        #expect(try Self.names(a, "items") == ["x", "y"])
        #expect(try Self.names(a, "steps") == ["s2", "s1"])
        #expect(try Self.cartNames(context, "ANY items.name == 'y'") == ["A"])
    }

    /// Core Data's lightweight migration: renamed relationships (renaming identifier) keep their members and
    /// order, an added one starts empty and works.
    @Test(arguments: Backend.persistent)
    func renamedAndAddedRelationshipsMigrate(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.writeVersion1(backend, in: dir)
        let coordinator = try backend.coordinator(Self.model(version2: true), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.object(context, "Cart", "A")
        #expect(try Self.names(a, "products") == ["x", "y"])
        #expect(try Self.names(a, "stages") == ["s2", "s1"])
        #expect(try Self.names(a, "extras") == [])
        try a.addRelatedObject(Self.object(context, "Item", "z"), forKey: "extras")
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(Self.object(fresh, "Cart", "A"), "extras") == ["z"])
        #expect(try Self.cartNames(fresh, "ANY products.name == 'x' AND extras.@count == 1") == ["A"])
    }

    /// Linking a member of the wrong entity is refused by the context before anything is written.
    @Test func wrongMemberEntityIsRefused() throws {
        let coordinator = StoreCoordinator(model: try Self.model())
        try coordinator.addStore(.memory, configuration: "Main")
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.insert(context, "Cart", "A")
        expectContextError("a Step among items", { if case .typeMismatch = $0 { return true } else { return false } }) {
            try a.addRelatedObject(Self.insert(context, "Step", "s"), forKey: "items")
        }
    }
}

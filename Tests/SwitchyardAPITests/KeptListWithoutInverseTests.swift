import Foundation
import Switchyard
import Testing

/// Kept unsaved lists of a to-many without inverse (`Cart.items`: Core Data keeps the owner in the member's row,
/// so a member has one owner) over another context's save. Found by a review of `KeptListMergeTests`' fix on
/// 2026-12-02: a merge listed a member under two carts, and a list replaced without being read lost its removals.
@Suite struct KeptListWithoutInverseTests {
    typealias Way = KeptListMergeTests.Way

    static func model() throws -> ObjectModel {
        let cart = EntityDescription(
            name: "Cart",
            attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)],
            relationships: [RelationshipDescription(name: "items", destination: "Item", isToMany: true)])
        let item = EntityDescription(name: "Item", attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)])
        return try ObjectModel(
            entities: [cart, item], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Cart", "Item"])])
    }

    /// Cart A holds x, cart B holds z; items v and y belong to no cart.
    static func seeded(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        let coordinator = try backend.coordinator(model(), in: dir)
        let c = ObjectContext(coordinator: coordinator)
        var made: [String: ManagedObject] = [:]
        for (entity, name) in [("Cart", "A"), ("Cart", "B"), ("Item", "x"), ("Item", "z"), ("Item", "v"), ("Item", "y")] {
            let o = try c.insert(entity)
            try o.set("name", name)
            made[name] = o
        }
        try made["A"]!.setRelatedObjects([made["x"]!], forKey: "items")
        try made["B"]!.setRelatedObjects([made["z"]!], forKey: "items")
        try c.save()
        return coordinator
    }

    static func get(_ c: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        try MultipleContextsTests.one(c, entity, "name", name)
    }

    static func items(_ cart: ManagedObject) throws -> [String] {
        try cart.relatedObjects(forKey: "items").map { try $0.get("name", as: String.self) ?? "?" }.sorted()
    }

    static func stored(_ coordinator: StoreCoordinator, _ cart: String) throws -> [String] {
        let context = ObjectContext(coordinator: coordinator)   // objects hold their context weakly
        return try items(get(context, "Cart", cart))
    }

    /// Core Data's `setValue(_:forKey:)` of a to-many replaces the members: a list replaced without being read
    /// first saves as it was set. (Until 2026-12-02 the save kept the old members: A read [x, y] after it.)
    @Test(arguments: Backend.everyStore)
    func aListReplacedWithoutReadingSavesAsSet(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let a = try Self.get(context, "Cart", "A")
        try a.setRelatedObjects([Self.get(context, "Item", "y")], forKey: "items")
        #expect(try Self.items(a) == ["y"])
        try context.save()
        #expect(try Self.items(a) == ["y"])
        #expect(try Self.stored(coordinator, "A") == ["y"])
    }

    /// Seeds the carts; `local` changes them in one context and returns the carts to refresh; another context adds
    /// v to A and saves; then the first is brought up to date `way`.
    static func afterOthersAddV(
        _ backend: Backend, _ way: Way, in dir: TempDir, local: (ObjectContext) throws -> [ManagedObject]
    ) throws -> (coordinator: StoreCoordinator, reader: ObjectContext, carts: [ManagedObject]) {
        let coordinator = try seeded(backend, in: dir)
        let collector = MultipleContextsTests.Collector(coordinator)
        let reader = ObjectContext(coordinator: coordinator)
        let carts = try local(reader)
        let writer = ObjectContext(coordinator: coordinator)
        try get(writer, "Cart", "A").addRelatedObject(get(writer, "Item", "v"), forKey: "items")
        try writer.save()
        try KeptListMergeTests.merge(way, into: reader, from: collector, refreshing: carts)
        return (coordinator, reader, carts)
    }

    /// This context adds y to A and takes v into B; another adds v to A and saves. Under the merge v stays in B,
    /// where this context put it (its change trumps), and is not listed in A as well.
    @Test(arguments: Backend.everyStore, Way.allCases)
    func aMergeDoesNotListAMemberUnderTwoOwners(_ backend: Backend, _ way: Way) throws {
        let dir = try TempDir()
        let (coordinator, reader, carts) = try Self.afterOthersAddV(backend, way, in: dir) { reader in
            let a = try Self.get(reader, "Cart", "A"), b = try Self.get(reader, "Cart", "B")
            try a.addRelatedObject(Self.get(reader, "Item", "y"), forKey: "items")
            try b.addRelatedObject(Self.get(reader, "Item", "v"), forKey: "items")
            return [a, b]
        }
        let (a, b) = (carts[0], carts[1])

        #expect(try Self.items(a) == ["x", "y"], "before the save")
        #expect(try Self.items(b) == ["v", "z"], "before the save")
        try reader.save()
        #expect(try Self.stored(coordinator, "A") == ["x", "y"])
        #expect(try Self.stored(coordinator, "B") == ["v", "z"])
    }

    /// A list set without being read, kept over another context's addition: both show before the save.
    @Test(arguments: Backend.everyStore, Way.allCases)
    func aListSetWithoutReadingShowsTheOtherContextsAddition(_ backend: Backend, _ way: Way) throws {
        let dir = try TempDir()
        let (coordinator, reader, carts) = try Self.afterOthersAddV(backend, way, in: dir) { reader in
            let a = try Self.get(reader, "Cart", "A")
            try a.setRelatedObjects([Self.get(reader, "Item", "x"), Self.get(reader, "Item", "y")], forKey: "items")
            return [a]
        }
        let a = carts[0]

        #expect(try Self.items(a) == ["v", "x", "y"], "before the save")
        try reader.save()
        #expect(try Self.stored(coordinator, "A") == ["v", "x", "y"])
    }
}

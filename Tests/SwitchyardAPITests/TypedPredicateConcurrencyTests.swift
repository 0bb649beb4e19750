import Foundation
import Switchyard
import Testing

/// Typed predicates of a type no thread has used yet, built on many threads at once: each one names the right
/// attributes and fetches what it should (a type's key-path names are read once and shared between threads).
@Suite struct TypedPredicateConcurrencyTests {
    /// A memory store of the Shop model holding customers Ann, Bob and Cid of tiers 1, 2 and 3, saved through
    /// the generated `Customer` type (so the views under test are first used by the test itself).
    private static func threeCustomers(in dir: TempDir) throws -> StoreCoordinator {
        let url = try #require(Bundle.module.url(forResource: "Shop", withExtension: "xcdatamodeld"))
        let coordinator = try Backend.memory.coordinator(ModelLoader.load(at: url), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (name, tier) in [("Ann", 1), ("Bob", 2), ("Cid", 3)] {
            let customer = try context.insert(Customer.self)
            customer.name = name
            customer.tier = Int16(tier)
        }
        try context.save()
        return coordinator
    }

    @Test func firstUseOfATypeOnManyThreadsAtOnce() async throws {
        let dir = try TempDir()
        let coordinator = try Self.threeCustomers(in: dir)
        let results = try await withThrowingTaskGroup(of: (Int, [String], Int).self) { group in
            for task in 0..<32 {
                group.addTask {
                    let context = ObjectContext(coordinator: coordinator)
                    let name = ["Ann", "Bob", "Cid"][task % 3]
                    let byName = try context.fetch(RaceCustomer.self, where: \.name == name).map(\.name)
                    let count = try context.count(RaceCustomer.self, where: \.tier >= Int16(task % 3 + 1))
                    return (task, byName, count)
                }
            }
            var all: [(Int, [String], Int)] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 32)
        for (task, byName, count) in results {
            #expect(byName == [["Ann", "Bob", "Cid"][task % 3]], "task \(task)")
            #expect(count == 3 - task % 3, "task \(task)")
        }
    }

    /// Predicates alternating between key paths of two types, one of which names its attribute differently
    /// (`LabelCustomer.label` is `name`), on one thread: the key path found last is remembered, and a different
    /// one next (of the same type or another) must not be answered with it.
    @Test func alternatingKeyPathsOfTwoTypesEachNameTheirOwnAttribute() throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Self.threeCustomers(in: dir))
        for i in 0..<30 {
            let wanted = ["Ann", "Bob", "Cid"][i % 3]
            #expect(try context.fetch(RaceCustomer.self, where: \.name == wanted).map(\.tier) == [Int16(i % 3 + 1)], "round \(i)")
            #expect(try context.count(RaceCustomer.self, where: \.tier >= Int16(i % 3 + 1)) == 3 - i % 3, "round \(i)")
            #expect(try context.fetch(LabelCustomer.self, where: \.label == wanted).map(\.label) == [wanted], "round \(i)")
            #expect(try context.count(LabelCustomer.self, where: \.rank == Int16(i % 3 + 1)) == 1, "round \(i)")
        }
    }

    /// Key paths made at run time (`appending` to a key path other than `\.self`, which returns the other side
    /// as it is) are new objects each time, equal to the literal: more of them than a type's names are
    /// remembered for by identity still name the right attributes, and a key path the type does not list is
    /// still refused, before and after.
    @Test func keyPathsBuiltAtRunTimeKeepNamingTheirAttributes() throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Self.threeCustomers(in: dir))
        #expect(throws: QueryError.self) { try context.fetch(RuntimeCustomer.self, where: \.shout == "ANN") }
        for i in 0..<600 {
            let name = (\RuntimeCustomer.me).appending(path: \RuntimeCustomer.name)
            let tier = (\RuntimeCustomer.me).appending(path: \RuntimeCustomer.tier)
            #expect(name == \RuntimeCustomer.me.name && name !== \RuntimeCustomer.me.name, "round \(i): not a new key path")
            let wanted = ["Ann", "Bob", "Cid"][i % 3]
            #expect(try context.fetch(RuntimeCustomer.self, where: name == wanted).map(\.name) == [wanted], "round \(i)")
            #expect(try context.count(RuntimeCustomer.self, where: tier >= Int16(i % 3 + 1)) == 3 - i % 3, "round \(i)")
        }
        #expect(try context.fetch(RuntimeCustomer.self, where: \.me.name == "Bob").map(\.tier) == [2])
        #expect(try context.fetch(RuntimeCustomer.self, where: \.name == "Bob").map(\.tier) == [2])
        #expect(throws: QueryError.self) { try context.fetch(RuntimeCustomer.self, where: \.shout == "ANN") }
    }
}

/// A view of `Customer` for key paths built at run time (through `me`, which `keyPathNames` lists as the
/// attributes themselves), with a computed property `keyPathNames` leaves out.
struct RuntimeCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [.attribute("name", String.self), .attribute("tier", Int16.self)]
    static var keyPathNames: [PartialKeyPath<RuntimeCustomer>: String] {
        [\.name: "name", \.tier: "tier", \.me.name: "name", \.me.tier: "tier"]
    }
    var me: RuntimeCustomer { self }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var name: String { managedObject[attribute: "name"] }
    var tier: Int16 { managedObject[attribute: "tier"] }
    var shout: String { name.uppercased() }
}

/// A view of `Customer` whose properties are named otherwise than its attributes.
struct LabelCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [.attribute("name", String.self), .attribute("tier", Int16.self)]
    static var keyPathNames: [PartialKeyPath<LabelCustomer>: String] { [\.label: "name", \.rank: "tier"] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var label: String { managedObject[attribute: "name"] }
    var rank: Int16 { managedObject[attribute: "tier"] }
}

/// A hand-written view of `Customer` used by no other test, so its first typed predicate is built here.
struct RaceCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [.attribute("name", String.self), .attribute("tier", Int16.self)]
    static var keyPathNames: [PartialKeyPath<RaceCustomer>: String] { [\.name: "name", \.tier: "tier"] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var name: String { managedObject[attribute: "name"] }
    var tier: Int16 { managedObject[attribute: "tier"] }
}

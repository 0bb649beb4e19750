import Foundation
import Switchyard
import Testing

/// Entity types generated from `Shop.xcdatamodeld` by the `SwitchyardCodegen` build plugin (this target
/// declares it), used as a Core Data user uses Xcode's generated `NSManagedObject` subclasses.
@Suite struct TypedEntityTests {
    static func coordinator(_ backend: Backend, _ dir: TempDir) throws -> StoreCoordinator {
        let url = try #require(Bundle.module.url(forResource: "Shop", withExtension: "xcdatamodeld"))
        let coordinator = StoreCoordinator(model: try ModelLoader.load(at: url))
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        return coordinator
    }

    @Test(arguments: Backend.everyStore)
    func typedPropertiesFetchesAndRelationships(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert(Customer.self)
        ann.name = "Ann"
        let vip = try context.insert(VIPCustomer.self)
        vip.name = "Vic"
        vip.perk = "lounge"
        var purchases: [Purchase] = []
        for (i, code) in ["p1", "p2", "p3"].enumerated() {
            let p = try context.insert(Purchase.self)
            p.code = code
            p.qty = Int64(i + 1)
            p.amount = i == 2 ? nil : Double(i) * 10
            p.customer = i == 1 ? vip.as(Customer.self) : ann
            purchases.append(p)
        }
        let label = try context.insert(Label.self)
        label.title = "gift"
        try purchases[0].add(label, to: \.labels)
        ann.favorites = [purchases[2], purchases[0]]
        try context.save()

        let fresh = ObjectContext(coordinator: coordinator)
        let customers = try fresh.fetch(Customer.self, sortedBy: [.ascending(\.name)])
        #expect(customers.map(\.name) == ["Ann", "Vic"])
        #expect(customers[1].as(VIPCustomer.self)?.perk == "lounge")
        #expect(customers[0].as(VIPCustomer.self) == nil)
        #expect(customers[0].tier == 0)                                      // the model's default
        #expect(customers[0].purchases.map(\.code).sorted() == ["p1", "p3"])
        #expect(customers[0].favorites.map(\.code) == ["p3", "p1"])           // ordered, as saved
        #expect(try fresh.fetch(Purchase.self, where: \.qty >= 2, sortedBy: [.descending(\.qty)]).map(\.code) == ["p3", "p2"])
        #expect(try fresh.fetch(Purchase.self, where: \.amount == nil).map(\.code) == ["p3"])
        #expect(try fresh.fetch(Purchase.self, where: \.customer == customers[0], sortedBy: [.ascending(\.code)]).map(\.code) == ["p1", "p3"])
        #expect(try fresh.fetch(Purchase.self, where: .through(\.customer, \.name == "Vic")).map(\.code) == ["p2"])
        #expect(try fresh.fetch(Purchase.self, where: .any(\.labels, \.title == "gift")).map(\.code) == ["p1"])
        #expect(try fresh.fetch(Customer.self, where: .count(\.purchases, .greater, 1)).map(\.name) == ["Ann"])
        #expect(try fresh.fetch(Purchase.self, where: .beginsWith(\.code, "P", options: .caseInsensitive) && !(\.qty == 1), sortedBy: [.ascending(\.code)], limit: 1).map(\.code) == ["p2"])
        #expect(try fresh.count(Purchase.self, where: .in(\.qty, [1, 3])) == 2)
        #expect(try fresh.fetch(Purchase.self, where: \.amount <= 10, sortedBy: [.ascending(\.code)]).map(\.code) == ["p1", "p2"])
        #expect(try fresh.fetch(Purchase.self, where: \.amount >= 10).map(\.code) == ["p2"])   // nil never matches
        #expect(try fresh.fetch(Purchase.self, where: \.amount < 10).map(\.code) == ["p1"])
        // Prefetching a fetched property for typed objects fills what each generated accessor returns.
        try fresh.prefetchFetchedProperty("namesakes", for: customers)
        // Another Ann saved elsewhere after the prefetch: the accessors return what was prefetched (no query of
        // their own, which would find two Anns), as Core Data's fetched properties keep results until refreshed.
        let elsewhere = ObjectContext(coordinator: coordinator)
        try elsewhere.insert(Customer.self).name = "Ann"
        try elsewhere.save()
        #expect(try customers.map { try $0.namesakes().map(\.name) } == [["Ann"], ["Vic"]])
        #expect(throws: ContextError.self) { try fresh.prefetchFetchedProperty("nope", for: customers) }
        #expect(try customers[0].namesakes().map(\.name) == ["Ann"])
        // The string-keyed view of the same object stays in step with the typed one.
        let p1 = try fresh.fetch(Purchase.self, where: \.code == "p1")[0]
        try p1.managedObject.set("qty", Int64(40))
        #expect(p1.qty == 40)
        p1.qty = 41
        #expect(try p1.managedObject.get("qty", as: Int64.self) == 41)
        #expect(try p1.related(\.customer)?.name == "Ann")
    }

    /// Typed predicates are the same predicates as format strings (so the same SQL and in-memory evaluation).
    @Test func typedPredicatesEqualTheirFormatStrings() throws {
        #expect((\Purchase.qty > 3).predicate == (try FetchPredicate(format: "qty > 3")))
        #expect((.beginsWith(\Purchase.code, "a", options: [.caseInsensitive, .diacriticInsensitive]) as TypedPredicate<Purchase>).predicate
            == (try FetchPredicate(format: "code BEGINSWITH[cd] 'a'")))
        #expect((.any(\Purchase.labels, \.title == "x") as TypedPredicate<Purchase>).predicate == (try FetchPredicate(format: "ANY labels.title == 'x'")))
        #expect((\Purchase.amount == nil || \Purchase.qty != 2).predicate == (try FetchPredicate(format: "amount == nil OR qty != 2")))
    }

    /// A Swift type that does not match the model is an error when it is registered, naming each problem.
    @Test func mismatchedTypesFailAtRegistration() throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(.memory, dir)
        func problems(_ type: any EntityObject.Type) -> [String] {
            do {
                try coordinator.register(type)
                return []
            } catch let error as EntityTypeError {
                #expect(error.localizedDescription.contains(error.entity))
                return error.problems
            } catch {
                Issue.record("\(error)")
                return []
            }
        }
        #expect(problems(Customer.self).isEmpty)
        #expect(problems(WrongEntity.self).first?.contains("no entity named 'Nope'") == true)
        let wrong = problems(WrongCustomer.self)
        #expect(wrong.count == 4, "\(wrong)")
        #expect(wrong.contains { $0.contains("Customer.name is String") })
        #expect(wrong.contains { $0.contains("no attribute 'nickname'") })
        #expect(wrong.contains { $0.contains("optional in the model") })
        #expect(wrong.contains { $0.contains("to-many in the model") })
        // Nothing was registered, and a typed fetch reports the same error.
        #expect(throws: EntityTypeError.self) { _ = try ObjectContext(coordinator: coordinator).fetch(WrongCustomer.self) }
    }
}

/// Hand-written types that do not match `Shop.xcdatamodeld`.
struct WrongEntity: EntityObject {
    static let entityName = "Nope"
    static let declaredProperties: [DeclaredProperty] = []
    static var keyPathNames: [PartialKeyPath<WrongEntity>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

struct WrongCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [
        .attribute("name", Int64.self),
        .attribute("nickname", String.self),
        .attribute("since", Date.self),
        .toOne("purchases", Purchase.self),
    ]
    static var keyPathNames: [PartialKeyPath<WrongCustomer>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

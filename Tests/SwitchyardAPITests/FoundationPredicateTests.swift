import Foundation
import Switchyard
import Testing

/// Foundation's `#Predicate` over the generated `Shop.xcdatamodeld` types, as a SwiftData user writes it.
@Suite struct FoundationPredicateTests {
    /// Each `#Predicate` becomes exactly the predicate its format string parses to (so the same SQL and
    /// in-memory evaluation).
    @Test func translationsEqualTheirFormatStrings() throws {
        let low: Int64 = 2
        let codes = ["p1", "p3"]
        let pairs: [(Predicate<Purchase>, String)] = [
            (#Predicate<Purchase> { $0.qty > 3 }, "qty > 3"),
            (#Predicate<Purchase> { 3 < $0.qty }, "qty > 3"),
            (#Predicate<Purchase> { $0.qty >= low && $0.code != "p2" }, "qty >= 2 AND code != 'p2'"),
            (#Predicate<Purchase> { $0.amount == nil || $0.qty <= 1 }, "amount == nil OR qty <= 1"),
            (#Predicate<Purchase> { $0.amount != nil }, "amount != nil"),
            // Where Swift may read nil, a comparison is false for nil (`!=` true), as Swift evaluates it.
            (#Predicate<Purchase> { $0.amount == 10.0 }, "amount == 10.0 AND amount != nil"),
            (#Predicate<Purchase> { $0.amount != 10.0 }, "amount != 10.0 OR amount == nil"),
            (#Predicate<Purchase> { $0.customer?.name == "Ann" }, "customer.name == 'Ann' AND customer.name != nil"),
            (#Predicate<Purchase> { $0.customer?.name.starts(with: "A") == true }, "customer.name BEGINSWITH 'A' AND customer.name != nil"),
            (#Predicate<Purchase> { !($0.qty == 1) }, "NOT qty == 1"),
            (#Predicate<Purchase> { $0.code.contains("1") }, "code CONTAINS '1'"),
            (#Predicate<Purchase> { $0.code.starts(with: "p") }, "code BEGINSWITH 'p'"),
            (#Predicate<Purchase> { codes.contains($0.code) }, "code IN {'p1', 'p3'}"),
            (#Predicate<Purchase> { _ in false }, "FALSEPREDICATE"),
        ]
        for (predicate, format) in pairs {
            #expect(try TypedPredicate(predicate).predicate == FetchPredicate(format: format), "\(format)")
        }
        // A chain on an optional attribute: the chain's variable is the attribute itself.
        let hasDefault: FetchPredicate = .comparison(Comparison(.keyPath(["default"]), .notEqual, .constant(.null)))
        let startsWithX: FetchPredicate = .comparison(Comparison(.keyPath(["default"]), .beginsWith, .constant(.string("x"))))
        #expect(try TypedPredicate(#Predicate<Purchase> { $0.default?.starts(with: "x") == true }).predicate == .and([startsWithX, hasDefault]))
        #expect(try TypedPredicate(#Predicate<Purchase> { $0.default?.starts(with: "x") ?? false }).predicate == .and([startsWithX, hasDefault]))
    }

    /// On every backend a `#Predicate` fetch returns what Swift itself says the predicate matches, evaluated
    /// on the same values — saved and unsaved objects alike.
    @Test(arguments: Backend.everyStore)
    func fetchesMatchSwiftsOwnEvaluation(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try TypedEntityTests.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        var g = CountPredicateParityTests.Generator(state: 0x5EED_0011)
        struct Plain { var code: String; var qty: Int64; var amount: Double?; var customer: String? }
        var plain: [Plain] = []
        let customers = try ["Ann", "Bo", "Al"].map { name in
            let c = try context.insert(Customer.self)
            c.name = name
            return c
        }
        for i in 0..<60 {
            let p = try context.insert(Purchase.self)
            p.code = ["p", "q", "pq"][g.int(3)] + String(i)
            p.qty = Int64(g.int(12)) - 3
            p.amount = g.chance(40) ? nil : Double(g.int(5)) * 2.5
            let owner = g.int(4)
            p.customer = owner < customers.count ? customers[owner] : nil
            plain.append(Plain(code: p.code, qty: p.qty, amount: p.amount, customer: p.customer?.name))
            if i == 39 { try context.save() }                                   // the last 20 stay unsaved
        }
        let wanted: [Int64] = [0, 2, 7]
        // Identities, as SwiftData compares persistentModelIDs: both saved by now, so their IDs are permanent.
        let annID = customers[0].objectID
        let noCustomer: ObjectID? = nil
        let first = try #require(try context.fetch(Purchase.self, where: \.code == plain[0].code).first)
        let firstID = first.objectID
        // Each case: the #Predicate on the entity, and the same closure on plain values.
        let cases: [(String, Predicate<Purchase>, (Plain) -> Bool)] = [
            ("qty > 3", #Predicate { $0.qty > 3 }, { $0.qty > 3 }),
            ("2 >= qty", #Predicate { 2 >= $0.qty }, { 2 >= $0.qty }),
            ("amount nil or qty < 0", #Predicate { $0.amount == nil || $0.qty < 0 }, { $0.amount == nil || $0.qty < 0 }),
            ("amount 5 and prefix q", #Predicate { $0.amount == 5.0 && $0.code.starts(with: "q") }, { $0.amount == 5.0 && $0.code.starts(with: "q") }),
            ("contains q, not qty 1", #Predicate { $0.code.contains("q") && !($0.qty == 1) }, { $0.code.contains("q") && !($0.qty == 1) }),
            ("qty in list", #Predicate { wanted.contains($0.qty) }, { wanted.contains($0.qty) }),
            ("amount not nil", #Predicate { $0.amount != nil }, { $0.amount != nil }),
            // Nil as Swift reads it: an absent amount or customer is not equal to a value, under NOT too.
            ("amount not 5", #Predicate { $0.amount != 5.0 }, { $0.amount != 5.0 }),
            ("not amount 5", #Predicate { !($0.amount == 5.0) }, { !($0.amount == 5.0) }),
            ("customer Ann", #Predicate { $0.customer?.name == "Ann" }, { $0.customer == "Ann" }),
            ("not customer Ann", #Predicate { !($0.customer?.name == "Ann") }, { !($0.customer == "Ann") }),
            ("customer not Ann", #Predicate { $0.customer?.name != "Ann" }, { $0.customer != "Ann" }),
            ("customer prefix A", #Predicate { $0.customer?.name.starts(with: "A") == true }, { $0.customer?.starts(with: "A") == true }),
            ("not customer prefix B", #Predicate { !($0.customer?.name.starts(with: "B") ?? false) }, { !($0.customer?.starts(with: "B") ?? false) }),
            ("customer is Ann by ID", #Predicate { $0.customer?.objectID == annID }, { $0.customer == "Ann" }),
            ("customer not Ann by ID", #Predicate { $0.customer?.objectID != annID }, { $0.customer != "Ann" }),
            ("no customer by a nil ID", #Predicate { $0.customer?.objectID == noCustomer }, { $0.customer == nil }),
            ("the object by ID", #Predicate { $0.objectID == firstID }, { $0.code == plain[0].code }),
            ("all but the object by ID", #Predicate { $0.objectID != firstID && $0.qty > 0 }, { $0.code != plain[0].code && $0.qty > 0 }),
        ]
        for (label, predicate, swift) in cases {
            let fetched = try context.fetch(Purchase.self, where: predicate).map(\.code).sorted()
            let expected = plain.filter(swift).map(\.code).sorted()
            #expect(fetched == expected, "\(backend) \(label)")
            #expect(try context.count(Purchase.self, where: predicate) == expected.count, "\(backend) \(label)")
        }
        // After a save, a fresh context (reading only the store) agrees too.
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        for (label, predicate, swift) in cases {
            #expect(try fresh.fetch(Purchase.self, where: predicate).map(\.code).sorted() == plain.filter(swift).map(\.code).sorted(), "\(backend) \(label) fresh")
        }
    }

    /// What cannot be run as a store predicate is refused with an error naming the entity and the expression,
    /// never evaluated differently or dropped.
    @Test func untranslatableExpressionsAreClearErrors() throws {
        let untranslatable: [(Predicate<Purchase>, String)] = [
            (#Predicate { $0.qty + 1 > 3 }, "Arithmetic"),
            (#Predicate { ($0.customer?.name ?? "") == "Ann" }, "??"),
            (#Predicate { $0.code == $0.code }, "two properties"),
            (#Predicate { $0.code.count > 2 }, "key path"),
            (#Predicate { $0.code.contains("1") == false }, "write `!` before the test"),
            (#Predicate { $0.customer?.name.isEmpty == true }, "a nested value"),
            (#Predicate { $0.`default`?.isEmpty == true }, "a property of a String value"),
        ]
        // A property the type does not list in keyPathNames cannot be named in a store predicate either.
        do {
            _ = try TypedPredicate(#Predicate<UnlistedPurchase> { $0.code == "p1" })
            Issue.record("translated a key path missing from keyPathNames")
        } catch let error as QueryError {
            #expect(error.localizedDescription.contains("#Predicate on Purchase"), "\(error.localizedDescription)")
            #expect(error.localizedDescription.contains("keyPathNames"), "\(error.localizedDescription)")
        }
        for (predicate, fragment) in untranslatable {
            do {
                _ = try TypedPredicate(predicate)
                Issue.record("translated although it contains \(fragment)")
            } catch let error as QueryError {
                #expect(error.localizedDescription.contains("#Predicate on Purchase"), "\(error.localizedDescription)")
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription)")
            }
        }
    }
}

/// A hand-written view of `Purchase` that forgets to list `code` in `keyPathNames`.
struct UnlistedPurchase: EntityObject {
    static let entityName = "Purchase"
    static let declaredProperties: [DeclaredProperty] = [.attribute("code", String.self)]
    static var keyPathNames: [PartialKeyPath<UnlistedPurchase>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var code: String { managedObject[attribute: "code"] }
}

import Foundation
import Switchyard
import Testing

/// Entity types generated from `Shop.xcdatamodeld` by the `SwitchyardCodegen` build plugin (this target
/// declares it), used as a Core Data user uses Xcode's generated `NSManagedObject` subclasses.
@Suite struct TypedEntityTests {
    static func coordinator(_ backend: Backend, _ dir: TempDir) throws -> StoreCoordinator {
        let url = try #require(Bundle.module.url(forResource: "Shop", withExtension: "xcdatamodeld"))
        return try backend.coordinator(ModelLoader.load(at: url), in: dir)
    }

    /// Saves a purchase per code, each of the customer named beside it (customers made once per name).
    static func savePurchases(_ customers: KeyValuePairs<String, String?>, in coordinator: StoreCoordinator) throws {
        let writer = ObjectContext(coordinator: coordinator)
        var made: [String: Customer] = [:]
        for (i, (code, name)) in customers.enumerated() {
            let purchase = try writer.insert(Purchase.self)
            purchase.code = code
            purchase.qty = Int64(i + 1)
            guard let name else { continue }
            if made[name] == nil {
                made[name] = try writer.insert(Customer.self)
                made[name]!.name = name
            }
            purchase.customer = made[name]
        }
        try writer.save()
    }

    /// A view's initializer may read the store (here a to-one): a typed fetch makes its views once the store's
    /// read has ended, as mapping the fetched objects did.
    @Test(arguments: Backend.everyStore)
    func aViewMayReadTheStoreInItsInitializer(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        try Self.savePurchases(["p1": "Ann", "p2": nil, "p3": "Ann"], in: coordinator)
        let context = ObjectContext(coordinator: coordinator)
        let views = try context.fetch(PurchaseWithCustomerName.self, sortedBy: [.ascending(\.code)])
        #expect(views.map(\.code) == ["p1", "p2", "p3"])
        #expect(views.map(\.customerName) == ["Ann", nil, "Ann"])
        let one = try context.fetch(PurchaseWithCustomerName.self, where: \.code == "p3")
        #expect(one.map(\.customerName) == ["Ann"] && one.first == views[2])
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
        #expect(label.shouted == "GIFT")                                    // the hand-declared type's own member
        try purchases[0].add(label, to: \.labels)
        ann.favorites = [purchases[2], purchases[0]]
        let insertedPast = #expect(throws: ContextError.self) { try ann.insert(purchases[1], at: 5, into: \.favorites) }
        #expect(insertedPast?.localizedDescription == "Customer.favorites: position 5 is out of range; valid positions are 0...2")
        let movedPast = #expect(throws: ContextError.self) { try ann.move(from: 0, to: 2, in: \.favorites) }
        #expect(movedPast?.localizedDescription == "Customer.favorites: position 0 -> 2 is out of range; valid positions are 0..<2")
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
        // IN and BETWEEN on an optional attribute: nil matches IN only when the list holds nil, never BETWEEN.
        #expect(try fresh.fetch(Purchase.self, where: .between(\.amount, 0, 5)).map(\.code) == ["p1"])
        #expect(try fresh.fetch(Purchase.self, where: .in(\.amount, [10, 99])).map(\.code) == ["p2"])
        #expect(try fresh.fetch(Purchase.self, where: .in(\.amount, [10, nil]), sortedBy: [.ascending(\.code)]).map(\.code) == ["p2", "p3"])
        #expect(try fresh.count(Purchase.self, where: .in(\.amount, [nil])) == 1)
        #expect(try fresh.count(Purchase.self, where: !.in(\.amount, [0, nil])) == 1)
        #expect(throws: QueryError.self) { try fresh.fetch(Purchase.self, where: \.amount > Double.nan) }   // NaN matches nothing consistently
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

    /// ANY / ALL / NONE over an OR or AND of member tests: what NSPredicate's per-comparison quantifiers can say
    /// returns exactly the objects whose members pass, on every store; what they cannot (an AND under ANY,
    /// a NOT) is a clear error from every typed entry point, never rows matched member by member.
    @Test(arguments: Backend.everyStore)
    func quantifiersOverCompoundMemberTests(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        func customer(_ name: String, _ purchases: [(qty: Int64, amount: Double?)]) throws {
            let c = try context.insert(Customer.self)
            c.name = name
            for (i, p) in purchases.enumerated() {
                let purchase = try context.insert(Purchase.self)
                purchase.code = "\(name)-\(i)"
                purchase.qty = p.qty
                purchase.amount = p.amount
                purchase.customer = c
            }
        }
        try customer("Ann", [(1, 0), (3, nil)])     // qty 1 has an amount; the one without an amount has qty 3
        try customer("Bo", [(1, nil)])
        try customer("Cy", [(2, 10)])
        try customer("Di", [])
        let gift = try context.insert(Label.self)
        gift.title = "gift"
        try context.fetch(Purchase.self, where: \.code == "Cy-0")[0].add(gift, to: \.labels)
        for view in [context, ObjectContext(coordinator: coordinator)] {
            if view !== context { try context.save() }   // unsaved first, then saved and read by another context
            func names(_ predicate: TypedPredicate<Customer>) throws -> [String] {
                try view.fetch(Customer.self, where: predicate, sortedBy: [.ascending(\.name)]).map(\.name)
            }
            #expect(try names(.any(\.purchases, \.qty == 1 || \.qty == 2)) == ["Ann", "Bo", "Cy"])
            #expect(try names(.all(\.purchases, \.qty >= 1 && \.qty <= 2)) == ["Bo", "Cy", "Di"])   // ALL holds for none
            #expect(try names(.none(\.purchases, \.qty == 2 || \.qty == 3)) == ["Bo", "Di"])
            #expect(try names(.any(\.purchases, .any(\.labels, \.title == "gift"))) == ["Cy"])
            #expect(try names(.none(\.purchases, .any(\.labels, \.title == "gift"))) == ["Ann", "Bo", "Di"])
            // Ann has a purchase of qty 1 and one without an amount, but none that is both: only Bo matches,
            // which no per-comparison ANY can say, so each typed entry point refuses it.
            let both: TypedPredicate<Customer> = .any(\.purchases, \.qty == 1 && \.amount == nil)
            let error = #expect(throws: QueryError.self) { try names(both) }
            #expect(error?.localizedDescription.contains("ANY over 'purchases'") == true, "\(String(describing: error))")
            #expect(throws: QueryError.self) { try view.count(Customer.self, where: both) }
            #expect(throws: QueryError.self) { try view.count(Customer.self, where: !both || \.name == "Ann") }
            #expect(throws: QueryError.self) { try view.forEach(Customer.self, where: both) { _ in Issue.record("ran") } }
            #expect(throws: QueryError.self) { _ = try coordinator.observe(Customer.self, where: both) }
            #expect(throws: QueryError.self) { try names(.any(\.purchases, !(\.qty == 1))) }
            #expect(throws: QueryError.self) { try names(.all(\.purchases, \.qty == 1 || \.qty == 2)) }
            #expect(throws: QueryError.self) { try names(.any(\.purchases, .all(\.labels, \.title == "gift"))) }
            #expect(try names(.all(\.purchases, .none(\.labels, \.title == "gift"))) == ["Ann", "Bo", "Di"])
            // ALL of ALL is every label of every purchase: Ann's and Bo's purchases have no labels, so it holds
            // for them (SQL once ran it as "every purchase has some label", which left them out).
            #expect(try names(.all(\.purchases, .all(\.labels, \.title == "gift"))) == ["Ann", "Bo", "Cy", "Di"])
            #expect(try names(.all(\.purchases, .all(\.labels, \.title == "x"))) == ["Ann", "Bo", "Di"])
            // An aggregate is one total in memory but one per member in SQL: it cannot be said per comparison.
            #expect(throws: QueryError.self) { try names(.none(\.purchases, .count(\.labels, .greater, 0))) }
        }
        // Read as a plain predicate, an unsayable one matches nothing rather than something else.
        #expect((.any(\Customer.purchases, \.qty == 1 && \.amount == nil) as TypedPredicate<Customer>).predicate == .constant(false))
    }

    /// Sorting by a property across a to-one: by the customer's name (nil first ascending, last descending),
    /// then by code; unsaved and saved objects in one order on every store.
    @Test(arguments: Backend.everyStore)
    func sortsAcrossAToOne(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        let bo = try context.insert(Customer.self), ann = try context.insert(Customer.self)
        bo.name = "Bo"
        ann.name = "Ann"
        for (code, customer) in [("a", bo), ("b", nil), ("c", ann), ("d", bo), ("e", ann)] as [(String, Customer?)] {
            let p = try context.insert(Purchase.self)
            p.code = code
            p.customer = customer
            if code == "c" { try context.save() }   // some saved, some pending in the same fetch
        }
        for view in [context, ObjectContext(coordinator: coordinator)] {
            if view !== context { try context.save() }
            let up = try view.fetch(Purchase.self, sortedBy: [.ascending(\.customer, \.name), .ascending(\.code)]).map(\.code)
            #expect(up == ["b", "c", "e", "a", "d"], "\(backend)")
            let down = try view.fetch(Purchase.self, sortedBy: [.descending(\.customer, \.name), .descending(\.code)]).map(\.code)
            #expect(down == ["d", "a", "e", "c", "b"], "\(backend)")
        }
    }

    /// The typed to-many operations on ordered and unordered relationships, with their inverses, as saved.
    @Test(arguments: Backend.everyStore)
    func typedToManyMutationsAndInverses(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert(Customer.self)
        ann.name = "Ann"
        var p: [Purchase] = []
        for code in ["a", "b", "c", "d"] {
            let purchase = try context.insert(Purchase.self)
            purchase.code = code
            p.append(purchase)
        }
        try ann.set(\.favorites, [p[0], p[1], p[2]])
        try ann.move(from: 0, to: 2, in: \.favorites)                 // b c a
        try ann.insert(p[3], at: 1, into: \.favorites)                // b d c a
        try ann.remove(p[2], from: \.favorites)                       // b d a
        #expect(ann.favorites.map(\.code) == ["b", "d", "a"])
        try ann.set(\.purchases, [p[0], p[1]])
        try ann.add(p[2], to: \.purchases)
        try ann.remove(p[0], from: \.purchases)
        #expect(p[2].customer?.name == "Ann" && p[0].customer == nil)
        #expect(throws: ContextError.self) { try ann.move(from: 0, to: 5, in: \.favorites) }
        #expect(throws: ContextError.self) { try ann.move(from: 0, to: 1, in: \.purchases) }   // not ordered
        try context.save()

        let fresh = ObjectContext(coordinator: coordinator)
        let saved = try fresh.fetch(Customer.self)[0]
        #expect(saved.favorites.map(\.code) == ["b", "d", "a"])
        #expect(saved.purchases.map(\.code).sorted() == ["b", "c"])
        let byCode = Dictionary(uniqueKeysWithValues: try fresh.fetch(Purchase.self).map { ($0.code, $0) })
        #expect(byCode["c"]?.favoredBy == nil && byCode["d"]?.favoredBy?.name == "Ann")
        #expect(byCode["a"]?.customer == nil && byCode["c"]?.customer?.name == "Ann")
        // The string-keyed view reads the same members, and a change through it shows through the typed one.
        #expect(try saved.managedObject.relatedObjects(forKey: "favorites").map { try $0.get("code", as: String.self) } == ["b", "d", "a"])
        try saved.managedObject.moveRelatedObject(from: 2, to: 0, forKey: "favorites")
        #expect(saved.favorites.map(\.code) == ["a", "b", "d"])
    }

    /// Entity values compare and hash by the object they view, as NSManagedObjects do: `purchase.customer == ann`
    /// in plain Swift, sets and dictionary keys; the same stored object in another context is another value with
    /// the same `objectID`, which encodes as its URI.
    @Test(arguments: Backend.everyStore)
    func entityValuesCompareByTheirObject(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert(Customer.self)
        ann.name = "Ann"
        let bo = try context.insert(Customer.self)
        bo.name = "Bo"
        let purchase = try context.insert(Purchase.self)
        purchase.code = "p1"
        purchase.customer = ann
        #expect(purchase.customer == ann)
        #expect(purchase.customer != bo)
        #expect(ann.as(Customer.self) == ann)                       // another view of one object is equal
        try context.save()
        let again = try #require(try context.fetch(Customer.self, where: \.name == "Ann").first)
        #expect(again == ann)                                       // a fetch in the same context: the same object
        #expect(Set([ann, bo, again]).count == 2)
        #expect([ann: 1][again] == 1)
        let other = try #require(try ObjectContext(coordinator: coordinator).fetch(Customer.self, where: \.name == "Ann").first)
        #expect(other != ann)                                       // another context: another object...
        #expect(other.objectID == ann.objectID)                     // ...of the same stored row
        // The ID round-trips through Codable as its URI (what a #Predicate capturing it needs).
        let encoded = try JSONEncoder().encode([ann.objectID])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"\(ann.objectID.uriRepresentation.replacingOccurrences(of: "/", with: "\\/"))\"]")
        #expect(try JSONDecoder().decode([ObjectID].self, from: encoded) == [ann.objectID])
        let bad = #expect(throws: DecodingError.self) { try JSONDecoder().decode([ObjectID].self, from: Data(#"["x-coredata://nope/Customer/p1"]"#.utf8)) }
        #expect(String(describing: bad).contains("'nope' is not a store UUID"), "\(String(describing: bad))")
        // In a #Predicate, an object is named by its ID (an entity value cannot be captured: it is not Sendable).
        let annID = ann.objectID
        #expect(try context.fetch(Purchase.self, where: #Predicate { $0.customer?.objectID == annID }) == [purchase])
        #expect(try context.fetch(Customer.self, where: #Predicate { $0.objectID != annID }) == [bo])
        // Asking for an object as a type it is not says which is which; a typed delete deletes.
        let wrong = #expect(throws: ContextError.self) { _ = try context.existingObject(Purchase.self, with: annID) }
        #expect(wrong?.localizedDescription.contains("/Customer/p1 is a Customer, not a Purchase (or one of its subentities)") == true,
            "\(String(describing: wrong?.localizedDescription))")
        try context.delete(bo)
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).fetch(Customer.self).map(\.name) == ["Ann"])
    }

    /// A key path the type does not list (a computed property of the app's own, a property of a property,
    /// `objectID` outside `#Predicate`) is an error from the fetch, count or setter that is given it, naming the
    /// key path, never a stop of the program.
    @Test func unlistedKeyPathsAreErrorsNotCrashes() throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Self.coordinator(.memory, dir))
        let purchase = try context.insert(Purchase.self)
        purchase.code = "p1"
        func message(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        let unlisted = [
            message { _ = try context.count(Purchase.self, where: \.loudCode == "P1") },
            message { _ = try context.fetch(Purchase.self, where: \.code.count > 0) },
            message { _ = try context.fetch(Purchase.self, where: \.qty > 0 && .beginsWith(\.loudCode, "P")) },
            message { _ = try context.fetch(Purchase.self, sortedBy: [.ascending(\.loudCode)]) },
            message { _ = try context.fetch(Purchase.self, sortedBy: [.ascending(\.qty), .descending(\.objectID)]) },
            message { _ = try context.fetch(Purchase.self, sortedBy: [.ascending(\.customer, \.loudName)]) },
            message { _ = try context.fetch(Purchase.self, where: .through(\.customer, \.loudName == "ANN")) },
            message { try purchase.set(\.loudCode, "P2") },
        ]
        for text in unlisted {
            #expect(text.contains("is not one of") && text.contains("keyPathNames"), "\(text)")
        }
        // A computed property's key path, which Swift does not name at run time, is named by its type and value
        // type rather than by the runtime's `<computed 0x… (String)>`.
        #expect(unlisted[0].contains("a key path of Purchase to a String property"), "\(unlisted[0])")
        #expect(!unlisted.contains { $0.contains("<computed") })
        #expect(purchase.code == "p1")
        #expect(try context.fetch(Purchase.self, where: \.code == "p1", sortedBy: [.ascending(\.code)]) == [purchase])
    }

    /// Typed predicates are the same predicates as format strings (so the same SQL and in-memory evaluation).
    @Test func typedPredicatesEqualTheirFormatStrings() throws {
        #expect((\Purchase.qty > 3).predicate == (try FetchPredicate(format: "qty > 3")))
        #expect((.beginsWith(\Purchase.code, "a", options: [.caseInsensitive, .diacriticInsensitive]) as TypedPredicate<Purchase>).predicate
            == (try FetchPredicate(format: "code BEGINSWITH[cd] 'a'")))
        #expect((.any(\Purchase.labels, \.title == "x") as TypedPredicate<Purchase>).predicate == (try FetchPredicate(format: "ANY labels.title == 'x'")))
        #expect((\Purchase.amount == nil || \Purchase.qty != 2).predicate == (try FetchPredicate(format: "amount == nil OR qty != 2")))
        #expect((.endsWith(\VIPCustomer.perk, "GE", options: .caseInsensitive) as TypedPredicate<VIPCustomer>).predicate
            == (try FetchPredicate(format: "perk ENDSWITH[c] 'GE'")))
        #expect((.equals(\VIPCustomer.perk, "lounge", options: .diacriticInsensitive) as TypedPredicate<VIPCustomer>).predicate
            == (try FetchPredicate(format: "perk ==[d] 'lounge'")))
    }

    /// Every string comparison of the typed API works on an optional attribute as on a required one, saved
    /// and unsaved, and nil never matches (Core Data's `ENDSWITH`/`==[c]` on a nil string is false).
    @Test(arguments: Backend.everyStore)
    func stringComparisonsOnAnOptionalAttribute(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        let context = ObjectContext(coordinator: coordinator)
        for (name, perk) in [("Vic", "Lounge"), ("Val", "lounge access"), ("Nil", nil), ("Éa", "Lóunge")] as [(String, String?)] {
            let vip = try context.insert(VIPCustomer.self)
            vip.name = name
            vip.perk = perk
        }
        func names(_ context: ObjectContext, _ predicate: TypedPredicate<VIPCustomer>) throws -> Set<String> {
            Set(try context.fetch(VIPCustomer.self, where: predicate).map(\.name))
        }
        for (label, current) in [("unsaved", context), ("saved", nil)] as [(String, ObjectContext?)] {
            if current == nil { try context.save() }
            let reader = current ?? ObjectContext(coordinator: coordinator)
            #expect(try names(reader, .endsWith(\.perk, "nge")) == ["Vic", "Éa"], "\(label)")
            #expect(try names(reader, .endsWith(\.perk, "óunge")) == ["Éa"], "\(label)")
            #expect(try names(reader, .endsWith(\.perk, "NGE")) == [], "\(label)")
            #expect(try names(reader, .endsWith(\.perk, "ÓUNGE", options: [.caseInsensitive, .diacriticInsensitive])) == ["Vic", "Éa"], "\(label)")
            #expect(try names(reader, .equals(\.perk, "LOUNGE", options: .caseInsensitive)) == ["Vic"], "\(label)")
            #expect(try names(reader, .equals(\.perk, "LOUNGE", options: [.caseInsensitive, .diacriticInsensitive])) == ["Vic", "Éa"], "\(label)")
            // NOT keeps SQL's three-valued logic: nil is not "not equal" either (see the README's known limits).
            #expect(try names(reader, !.equals(\.perk, "lounge", options: .caseInsensitive)) == ["Val", "Éa"], "\(label)")
            #expect(try reader.count(VIPCustomer.self, where: .endsWith(\.perk, "")) == 3, "\(label)")
        }
    }

    /// An optional property for a required attribute is accepted, as Xcode's codegen declares required strings
    /// `String?`: it reads nil while the attribute has no value, and both views agree once it is set. (The other
    /// way round, a non-optional property for an optional attribute with no default, is refused: above.)
    @Test(arguments: Backend.allCases)
    func anOptionalPropertyForARequiredAttributeReadsNilUntilSet(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, dir)
        try coordinator.register(LenientCustomer.self)
        let context = ObjectContext(coordinator: coordinator)
        let customer = try context.insert(LenientCustomer.self)
        #expect(customer.name == nil)
        #expect(try customer.managedObject.value(forKey: "name") == .null)
        customer.name = "Ann"
        #expect(try customer.managedObject.get("name", as: String.self) == "Ann")
        try context.save()
        let again = try ObjectContext(coordinator: coordinator).fetch(LenientCustomer.self, where: \.name == "Ann")
        #expect(again.map(\.name) == ["Ann"])
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
        // Key paths that name another property than the one they read (hand-written `keyPathNames`): found at
        // registration, not as predicates silently comparing the wrong attribute.
        let crossed = problems(CrossedCustomer.self)
        #expect(crossed.count == 3, "\(crossed)")
        #expect(crossed.contains { $0.contains("'name'") && $0.contains("Int16") }, "\(crossed)")
        #expect(crossed.contains { $0.contains("'tier'") && $0.contains("String") }, "\(crossed)")
        #expect(crossed.contains { $0.contains("'purchases'") && $0.contains("Optional<Date>") }, "\(crossed)")
        #expect(throws: EntityTypeError.self) { _ = try ObjectContext(coordinator: coordinator).fetch(CrossedCustomer.self, where: \.name == "Ann") }
        // A type whose own properties match but whose relationship hands out a mismatched type fails when it is
        // registered (naming the other type), not when the relationship first returns one of its objects.
        let error = #expect(throws: EntityTypeError.self) { try coordinator.register(PurchaseWithWrongLabels.self) }
        #expect(error?.type == "WrongLabel" && error?.problems.contains { $0.contains("Label.title is String") } == true, "\(String(describing: error))")
        #expect(throws: EntityTypeError.self) { _ = try ObjectContext(coordinator: coordinator).fetch(PurchaseWithWrongLabels.self) }
        // In a cycle (CycleCustomer -> CyclePurchase -> CycleCustomer, and CycleCustomer -> WrongPurchase) a failure
        // leaves none of the types registered: CyclePurchase hands out CycleCustomers, so it fails too.
        #expect(throws: EntityTypeError.self) { try coordinator.register(CycleCustomer.self) }
        let cycle = #expect(throws: EntityTypeError.self) { _ = try ObjectContext(coordinator: coordinator).fetch(CyclePurchase.self) }
        #expect(cycle?.type == "WrongPurchase", "\(String(describing: cycle))")
        // A key path whose Swift type its property cannot hold is found at registration too (it was an error
        // from `set` at first use).
        let loose = problems(LoosePurchase.self)
        #expect(loose.count == 2, "\(loose)")
        #expect(loose.contains { $0.contains("'code'") && $0.contains("Array<String>") }, "\(loose)")
        #expect(loose.contains { $0.contains("'customer'") && $0.contains("Int") }, "\(loose)")
        #expect(throws: EntityTypeError.self) { _ = try ObjectContext(coordinator: coordinator).fetch(LoosePurchase.self) }
    }
}

/// Hand-written types that do not match `Shop.xcdatamodeld`.
/// `Purchase` as a hand-written view that reads its customer's name in its initializer: a to-one read from the
/// store, which a typed fetch must allow (it makes its views after the store's read).
struct PurchaseWithCustomerName: EntityObject {
    static let entityName = "Purchase"
    static let declaredProperties: [DeclaredProperty] = [.attribute("code", String.self), .toOne("customer", Customer.self)]
    static var keyPathNames: [PartialKeyPath<PurchaseWithCustomerName>: String] { [\PurchaseWithCustomerName.code: "code"] }
    let managedObject: ManagedObject
    let customerName: String?
    init(managedObject: ManagedObject) {
        self.managedObject = managedObject
        customerName = (managedObject[toOne: "customer"] as Customer?)?.name
    }
    var code: String { managedObject[attribute: "code"] }
}

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

/// `Customer` whose declarations match the model but whose `keyPathNames` cross them: `\.name` (a String)
/// named 'tier', `\.tier` (an Int16) named 'name', `\.since` (a Date?) named 'purchases'.
struct CrossedCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [
        .attribute("name", String.self), .attribute("tier", Int16.self), .optionalAttribute("since", Date.self),
        .toMany("purchases", Purchase.self),
    ]
    static var keyPathNames: [PartialKeyPath<CrossedCustomer>: String] {
        [\CrossedCustomer.name: "tier", \CrossedCustomer.tier: "name", \CrossedCustomer.since: "purchases"]
    }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var name: String { get { managedObject[attribute: "name"] } nonmutating set { managedObject[attribute: "name"] = newValue } }
    var tier: Int16 { get { managedObject[attribute: "tier"] } nonmutating set { managedObject[attribute: "tier"] = newValue } }
    var since: Date? { get { managedObject[attribute: "since"] } nonmutating set { managedObject[attribute: "since"] = newValue } }
}

/// `Customer` with its required `name` declared optional.
struct LenientCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [.optionalAttribute("name", String.self)]
    static var keyPathNames: [PartialKeyPath<LenientCustomer>: String] { [\LenientCustomer.name: "name"] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var name: String? { get { managedObject[attribute: "name"] } nonmutating set { managedObject[attribute: "name"] = newValue } }
}

/// Matches `Purchase` itself, but its `labels` hand out `WrongLabel`s.
struct PurchaseWithWrongLabels: EntityObject {
    static let entityName = "Purchase"
    static let declaredProperties: [DeclaredProperty] = [.attribute("code", String.self), .toMany("labels", WrongLabel.self)]
    static var keyPathNames: [PartialKeyPath<PurchaseWithWrongLabels>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

struct WrongLabel: EntityObject {
    static let entityName = "Label"
    static let declaredProperties: [DeclaredProperty] = [.attribute("title", Int64.self)]
    static var keyPathNames: [PartialKeyPath<WrongLabel>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

/// Customer's purchases lead back to it through CyclePurchase; its favorites are WrongPurchases.
struct CycleCustomer: EntityObject {
    static let entityName = "Customer"
    static let declaredProperties: [DeclaredProperty] = [
        .toMany("purchases", CyclePurchase.self), .toMany("favorites", WrongPurchase.self, ordered: true),
    ]
    static var keyPathNames: [PartialKeyPath<CycleCustomer>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

struct CyclePurchase: EntityObject {
    static let entityName = "Purchase"
    static let declaredProperties: [DeclaredProperty] = [.toOne("customer", CycleCustomer.self)]
    static var keyPathNames: [PartialKeyPath<CyclePurchase>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

struct WrongPurchase: EntityObject {
    static let entityName = "Purchase"
    static let declaredProperties: [DeclaredProperty] = [.attribute("code", Int64.self)]
    static var keyPathNames: [PartialKeyPath<WrongPurchase>: String] { [:] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
}

/// Matches Purchase, but maps two key paths of Swift types the model cannot hold onto its properties: refused
/// at registration.
struct LoosePurchase: EntityObject {
    static let entityName = "Purchase"
    static let declaredProperties: [DeclaredProperty] = [.attribute("code", String.self), .toOne("customer", Customer.self)]
    static var keyPathNames: [PartialKeyPath<LoosePurchase>: String] { [\.code: "code", \.codeParts: "code", \.owner: "customer"] }
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }
    var code: String { managedObject[attribute: "code"] }
    var codeParts: [String] { code.split(separator: "-").map(String.init) }
    var owner: Int { 0 }
}

/// `Label` is Category/Extension in `Shop.xcdatamodeld`: the plugin generates its properties in an extension
/// that makes it an `EntityObject`, and the type itself is declared here with a member of its own, as an Xcode
/// user writes the class of such an entity. Internal, as this target's `switchyard-codegen.json` makes the plugin's
/// types (a public `Label` would need public members, which the generated extension would not give it).
struct Label {
    let managedObject: ManagedObject
    init(managedObject: ManagedObject) { self.managedObject = managedObject }

    /// Not in the model: the app's own addition beside the generated properties.
    var shouted: String { title.uppercased() }
}

/// Computed properties of the app's own, which `keyPathNames` does not list.
extension Purchase {
    var loudCode: String { code.uppercased() }
}

extension Customer {
    var loudName: String { name.uppercased() }
}

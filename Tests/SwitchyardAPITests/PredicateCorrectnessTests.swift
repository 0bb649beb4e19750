import Foundation
import Switchyard
import Testing

/// Predicates select the same objects on every backend, whatever indexes a store uses.
@Suite struct PredicateCorrectnessTests {
    /// An AND whose first term an index answers still checks its other terms (LMDB once returned every row
    /// the index named).
    @Test(arguments: Backend.everyStore)
    func andWithAnIndexedEqualityEvaluatesEveryTerm(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann")
        try Shop.order(context, "B", qty: 3, width: 150, customer: ann)
        try Shop.order(context, "B", qty: 500, width: 250)
        try Shop.order(context, "C", qty: 600, width: 300, customer: ann)
        try context.save()
        func codesAndQty(_ format: String, _ args: any PredicateArgumentConvertible...) throws -> [String] {
            let request = FetchRequest(
                entityName: "Order", predicate: try FetchPredicate(format: format, arguments: args.map(\.predicateArgument)),
                sortKeys: [SortKey("qty")])
            let fresh = ObjectContext(coordinator: coordinator)
            #expect(try fresh.count(request) == fresh.fetch(request).count)
            return try fresh.fetch(request).map { "\(try $0.get("code", as: String.self)!)\(try $0.get("qty", as: Int64.self)!)" }
        }
        #expect(try codesAndQty("code == 'B' AND width > 200") == ["B500"])
        #expect(try codesAndQty("qty == 3 AND code == 'C'") == [])
        #expect(try codesAndQty("code IN {'B', 'C'} AND qty >= 500") == ["B500", "C600"])
        #expect(try codesAndQty("code == 'B' AND NOT (qty == 3)") == ["B500"])
        #expect(try codesAndQty("code == 'B' AND customer.name == 'Ann'") == ["B3"])
        #expect(try codesAndQty("customer == %@ AND qty > 100", ann) == ["C600"])
        #expect(try codesAndQty("code == 'B' OR qty == 600") == ["B3", "B500", "C600"])
    }

    /// An object argument stands for its ObjectID: a store that does not hold the object matches nothing for
    /// `==` (Core Data compares object IDs, store included), and rows pointing elsewhere for `!=`.
    @Test(arguments: Backend.everyStore)
    func anObjectArgumentMatchesOnlyInItsOwnStore(_ backend: Backend) throws {
        let dir = try TempDir()
        let (coordinator, storeA, storeB) = try Shop.twoStores(backend, in: dir, "A", "B")
        let context = ObjectContext(coordinator: coordinator)
        var customers: [ManagedObject] = []
        for (store, name) in [(storeA, "a"), (storeB, "b")] {
            let customer = try Shop.customer(context, name.uppercased())
            try context.assign(customer, to: store)
            let order = try Shop.order(context, name, qty: 1, customer: customer)
            try context.assign(order, to: store)
            customers.append(customer)
        }
        try context.save()
        #expect(customers[0].objectID.primaryKey == customers[1].objectID.primaryKey)   // same key, other store
        func codes(_ format: String, _ args: [PredicateArgument]) throws -> [String] {
            let request = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: format, arguments: args), sortKeys: [SortKey("code")])
            let fresh = ObjectContext(coordinator: coordinator)
            #expect(try fresh.count(request) == fresh.fetch(request).count)
            return try Shop.codes(fresh.fetch(request))
        }
        #expect(try codes("customer == %@", [customers[0].predicateArgument]) == ["a"])
        #expect(try codes("customer != %@", [customers[0].predicateArgument]) == ["b"])
        #expect(try codes("customer IN %@", [customers.prefix(1).map { $0 }.predicateArgument]) == ["a"])
        #expect(try codes("customer IN %@", [customers.predicateArgument]) == ["a", "b"])
        // An object of another entity never matches, whatever its key.
        #expect(try codes("SELF == %@", [customers[0].predicateArgument]) == [])
        // The same holds in memory, for objects with unsaved changes.
        let orders = try context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        try orders[1].set("qty", Int64(2))
        let pending = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "customer == %@", customers[0]))
        #expect(try Shop.codes(context.fetch(pending)) == ["a"])
    }

    /// Two stores' objects with the same primary key are two objects in one context, each registered once: a
    /// fetch across both stores, a fetch from each store alone, and a lookup by ID all hand out the same two.
    @Test(arguments: Backend.everyStore)
    func objectsWithOneKeyInTwoStoresStayApartInAContext(_ backend: Backend) throws {
        let dir = try TempDir()
        let (coordinator, storeA, storeB) = try Shop.twoStores(backend, in: dir, "A", "B")
        let writer = ObjectContext(coordinator: coordinator)
        for (store, name) in [(storeA, "A"), (storeB, "B")] {
            try writer.assign(try Shop.customer(writer, name), to: store)
        }
        try writer.save()
        let context = ObjectContext(coordinator: coordinator)
        let byName = FetchRequest(entityName: "Customer", sortKeys: [SortKey("name")])
        let both = try context.fetch(byName)
        try #require(both.count == 2)
        #expect(try both.map { try $0.get("name", as: String.self) } == ["A", "B"])
        #expect(both[0].objectID.primaryKey == both[1].objectID.primaryKey)
        #expect(both[0].objectID != both[1].objectID && both[0] !== both[1])
        // Each store alone: its rows come as the store reads them, and find the objects already registered.
        for (store, object) in [(storeA, both[0]), (storeB, both[1])] {
            var one = byName
            one.affectedStoreIdentifiers = [store.identifier]
            let fetched = try context.fetch(one)
            #expect(fetched.count == 1 && fetched.first === object)
            #expect(try context.existingObject(with: object.objectID) === object)
        }
        // In a fresh context, store B's object is registered first, then A's with the same key.
        let fresh = ObjectContext(coordinator: coordinator)
        var onlyB = byName
        onlyB.affectedStoreIdentifiers = [storeB.identifier]
        let b = try fresh.fetch(onlyB)
        let again = try fresh.fetch(byName)
        #expect(again.count == 2 && again[1] === b.first)
        #expect(try again.map { try $0.get("name", as: String.self) } == ["A", "B"])
        #expect(Set(fresh.registeredObjects.map(\.objectID)) == Set(again.map(\.objectID)))
    }

    /// A key path or sort key the entity does not have is an error before any row is read, even on an empty
    /// store (as SQLite always reported it).
    @Test(arguments: Backend.everyStore)
    func unknownKeyPathsFailBeforeAnyRowIsRead(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let requests = [
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "nosuch == 1")),
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "customer.nosuch == 'x'")),
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "ANY tags.nosuch == 'x'")),
            FetchRequest(entityName: "Order", sortKeys: [SortKey("nosuch")]),
            FetchRequest(entityName: "Order", sortKeys: [SortKey("tags")]),
        ]
        for request in requests {
            // "store": straight to the store, which checks what a context would have checked for it.
            for attempt in ["fetch", "count", "coordinator", "store"] {
                do {
                    switch attempt {
                    case "fetch": _ = try context.fetch(request)
                    case "count": _ = try context.count(request)
                    case "coordinator": _ = try coordinator.fetchRows(request)
                    default:
                        _ = try #require(coordinator.stores.first).fetch(StoreFetchRequest(
                            entityName: request.entityName, predicate: request.predicate, sortKeys: request.sortKeys))
                    }
                    Issue.record("\(attempt) accepted \(request)")
                } catch let error as QueryError {
                    guard case .unknownKeyPath = error else { Issue.record("\(attempt): \(error)"); continue }
                } catch {
                    Issue.record("\(attempt): \(error) is not a QueryError")
                }
            }
        }
    }

    /// A transient attribute is no key path of a fetch (nothing stores it): comparing it with a constant is
    /// `unknownKeyPath` from the context, the coordinator and the store, while the stored attribute beside it
    /// is fetched, on every backend (the shortcut `validateFetch` takes for one comparison with a constant
    /// leaves a transient attribute to the full check).
    @Test(arguments: Backend.everyStore)
    func aTransientAttributeComparedWithAConstantIsAnUnknownKeyPath(_ backend: Backend) throws {
        let dir = try TempDir()
        let note = EntityDescription(name: "Note", attributes: [
            AttributeDescription(name: "text", type: .string),
            AttributeDescription(name: "draft", type: .string, isTransient: true),
        ])
        let model = try ObjectModel(entities: [note], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Note"])])
        let coordinator = try backend.coordinator(model, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try context.insert("Note").set("text", "kept")
        try context.save()
        #expect(try context.fetch(FetchRequest(entityName: "Note", predicate: FetchPredicate(format: "text == 'kept'"))).count == 1)
        let request = FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "draft == 'x'"))
        for attempt in ["fetch", "count", "coordinator", "store"] {
            do {
                switch attempt {
                case "fetch": _ = try ObjectContext(coordinator: coordinator).fetch(request)
                case "count": _ = try ObjectContext(coordinator: coordinator).count(request)
                case "coordinator": _ = try coordinator.fetchRows(request)
                default:
                    _ = try #require(coordinator.stores.first).fetch(StoreFetchRequest(entityName: "Note", predicate: request.predicate))
                }
                Issue.record("\(backend) \(attempt) accepted a predicate on a transient attribute")
            } catch let error as QueryError {
                guard case .unknownKeyPath = error else { Issue.record("\(attempt): \(error)"); continue }
            }
        }
    }

    /// A to-one that is nil partway along a to-many path is one unknown value, as SQL's LEFT JOIN makes it:
    /// `ALL children.pinned.name == "L"` fails for a parent with an unpinned child, on unsaved objects and on
    /// every store alike (memory, LMDB and PostgreSQL once skipped the child and matched). When a to-many
    /// follows the nil to-one, the child has no members there and `ALL` holds for it.
    @Test(arguments: Backend.everyStore)
    func aNilToOneInsideAQuantifierIsUnknown(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Graph.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        func make(_ name: String) throws -> ManagedObject { try Relations.insert(context, "Node", name) }
        let label = try Relations.insert(context, "Label", "L")
        let r1 = try make("R1"), r2 = try make("R2")
        let c1 = try make("c1"), c2 = try make("c2"), c3 = try make("c3")
        try r1.setRelatedObjects([c1, c2], forKey: "children")
        try r2.setRelatedObjects([c3], forKey: "children")
        for pinned in [c1, c3] {
            try pinned.setRelatedObject(label, forKey: "pinned")
            try pinned.setRelatedObjects([label], forKey: "labels")
        }
        let expected: [String: [String]] = [
            "ALL children.pinned.name == 'L'": ["R2"],
            "ANY children.pinned.name == 'L'": ["R1", "R2"],
            "NONE children.pinned.name == 'M'": ["R1", "R2"],
            "ALL children.pinned.name != 'L'": [],
            "NOT (ALL children.pinned.name == 'L')": ["R1"],
            "ALL children.pinned.nodes.name BEGINSWITH 'c'": ["R1", "R2"],
            "ALL children.pinned.nodes.name == 'c1'": [],
        ]
        func roots(_ context: ObjectContext, _ format: String) throws -> [String] {
            let request = FetchRequest(
                entityName: "Node", predicate: try FetchPredicate(format: "name BEGINSWITH 'R' AND (\(format))"),
                sortKeys: [SortKey("name")])
            let names = try Relations.names(context.fetch(request))
            #expect(try context.count(request) == names.count, "\(format): count")
            return names
        }
        for (format, names) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(try roots(context, format) == names, "unsaved: \(format)")
        }
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        for (format, names) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(try roots(fresh, format) == names, "saved: \(format)")
        }
    }
}

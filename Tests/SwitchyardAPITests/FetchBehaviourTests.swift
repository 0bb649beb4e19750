import Foundation
import Switchyard
import Testing

/// What fetches promise a user over an entity hierarchy, and fetched properties across two stores. Each test
/// names the `NSFetchRequest` / `NSFetchedPropertyDescription` behaviour it matches.
@Suite struct FetchBehaviourTests {
    private func names(_ context: ObjectContext, _ request: FetchRequest) throws -> [String] {
        try Relations.names(context.fetch(request))
    }

    /// `NSFetchRequest`: `sortDescriptors` order the result (several keys, ascending or not), `fetchOffset`
    /// skips and `fetchLimit` caps after sorting, and `count(for:)` gives the number `fetch` would return.
    @Test(arguments: Backend.everyStore)
    func sortOffsetAndLimit(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Catalogue.seeded(backend, in: dir))
        var request = FetchRequest(entityName: "Item", sortKeys: [SortKey("price")])
        #expect(try names(context, request) == ["b2", "e1", "b1", "a1", "e2"])
        request.sortKeys = [SortKey("price", ascending: false)]
        #expect(try names(context, request) == ["e2", "a1", "b1", "e1", "b2"])
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(try names(context, request) == ["a1", "b1"])
        #expect(try context.count(request) == 2)
        request.fetchOffset = 4
        #expect(try names(context, request) == ["b2"])
        request.fetchOffset = 9
        #expect(try names(context, request) == [])
        #expect(try context.count(request) == 0)
        // Two keys: label ties everywhere, so name decides.
        let tied = FetchRequest(entityName: "Item", sortKeys: [SortKey("label"), SortKey("name", ascending: false)], fetchLimit: 3)
        #expect(try names(context, tied) == ["e2", "e1", "b2"])
        let filtered = FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "price >= %@ AND price < %@", 2.0, 5.0), sortKeys: [SortKey("name")])
        #expect(try names(context, filtered) == ["a1", "b1", "e1"])
        #expect(try context.count(filtered) == 3)
        #expect(try context.count(FetchRequest(entityName: "Item")) == 5)
    }

    /// Sorting by a to-one relationship itself is refused on every backend, saved or not, through the fetch,
    /// the count and the walk: objects have no order of their own (SQLite ordered them by foreign key while LMDB
    /// and memory left them unordered, a user trial found, and an unsaved object has no key). Sorting by an
    /// attribute of the destination works.
    @Test(arguments: Backend.everyStore)
    func sortingByAToOneRelationshipItselfIsRefused(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann"), bob = try Shop.customer(context, "Bob")
        try Shop.order(context, "o1", qty: 1, customer: bob)
        try Shop.order(context, "o2", qty: 2, customer: ann)
        try Shop.order(context, "o3", qty: 3)
        for saved in [false, true] {
            if saved { try context.save() }
            for ascending in [true, false] {
                let byCustomer = FetchRequest(entityName: "Order", sortKeys: [SortKey("customer", ascending: ascending), SortKey("code")])
                for attempt in [
                    { _ = try context.fetch(byCustomer) }, { _ = try context.count(byCustomer) },
                    { try context.forEach(byCustomer, batchSize: 2) { _ in } },
                    { _ = try ObjectContext(coordinator: coordinator).fetch(byCustomer) },
                ] as [() throws -> Void] {
                    let error = #expect(throws: QueryError.self, "saved \(saved)") { try attempt() }
                    #expect("\(error.map { $0.localizedDescription } ?? "")".contains("'customer'"), "\(String(describing: error))")
                }
            }
        }
        let byName = FetchRequest(entityName: "Order", sortKeys: [SortKey("customer.name", ascending: false), SortKey("code")])
        #expect(try Shop.codes(context.fetch(byName)) == ["o1", "o2", "o3"])
    }

    /// Core Data's SQLite sort order, on every backend, saved or not: nil sorts before any value ascending and
    /// after every value descending; strings compare by code point (`compare:` without options), so
    /// capitals come before lower case and "é" after "e".
    @Test(arguments: Backend.everyStore)
    func nilsAndStringsSortAlikeOnEveryBackend(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Catalogue.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (name, price) in [("b", 2.0), ("B", nil), ("a", 1.0), ("é", nil), ("e", 3.0), ("Z", -1.0)] as [(String, Double?)] {
            try Catalogue.item(context, "Book", name, price: 0).set("price", price)
        }
        let byPrice = FetchRequest(entityName: "Book", sortKeys: [SortKey("price"), SortKey("name")])
        let byPriceDown = FetchRequest(entityName: "Book", sortKeys: [SortKey("price", ascending: false), SortKey("name")])
        let byName = FetchRequest(entityName: "Book", sortKeys: [SortKey("name")])
        for phase in ["unsaved", "saved", "fresh"] {
            if phase == "saved" { try context.save() }
            let reader = phase == "fresh" ? ObjectContext(coordinator: coordinator) : context
            #expect(try names(reader, byPrice) == ["B", "é", "Z", "a", "b", "e"], "\(phase)")
            #expect(try names(reader, byPriceDown) == ["e", "b", "a", "Z", "B", "é"], "\(phase)")
            #expect(try names(reader, byName) == ["B", "Z", "a", "b", "e", "é"], "\(phase)")
        }
    }

    /// A comparison between a number attribute and a string (or a string attribute and a number) selects the
    /// same objects on every backend, with or without unsaved changes in the context — whichever rule is
    /// chosen (convert as SQLite's column affinity does, never match, or refuse the predicate). It matters for
    /// fetched properties, whose `$FETCHED_PROPERTY.userInfo` values are always strings.
    @Test func mixedTypeComparisonsAgreeOnEveryBackend() throws {
        // A to-one compared with a numeric string: SQLite's INTEGER affinity on the foreign key would make
        // `customer == '1'` select the orders of the customer whose primary key is 1 (found by fuzzing).
        let formats = ["qty >= '4'", "qty == '5'", "qty IN {'3', '5'}", "width == '2.5'", "code == 10", "code > 9", "customer == '1'", "customer IN {'01', '2'}"]
        var answers: [String: [String: String]] = [:]   // format -> "backend/state" -> answer
        for backend in Backend.everyStore {
            let dir = try TempDir()
            let coordinator = try Shop.coordinator(backend, in: dir)
            let setup = ObjectContext(coordinator: coordinator)
            let ann = try Shop.customer(setup, "Ann")
            try Shop.order(setup, "10", qty: 3, width: 2.5, customer: ann)
            try Shop.order(setup, "9", qty: 5)
            try setup.save()
            let pending = ObjectContext(coordinator: coordinator)
            try pending.fetch(FetchRequest(entityName: "Order")).forEach { try $0.set("width", try $0.get("width", as: Double.self)) }
            for format in formats {
                let request = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("code")])
                for (state, context) in [("saved", ObjectContext(coordinator: coordinator)), ("pending", pending)] {
                    let answer: String
                    do { answer = try Shop.codes(context.fetch(request)).joined(separator: ",") } catch { answer = "error" }
                    answers[format, default: [:]]["\(backend)/\(state)"] = answer
                }
            }
        }
        for format in formats {
            let byBackend = answers[format] ?? [:]
            #expect(Set(byBackend.values).count == 1, "\(format): \(byBackend.sorted { $0.key < $1.key })")
        }
    }

    /// `NSFetchRequest.fetchLimit` of 0 means no limit (Core Data's default value), with and without
    /// unsaved changes in the context. Switchyard spells "no limit" `nil` and returns nothing for 0.
    @Test(arguments: Backend.everyStore)
    func aFetchLimitOfZeroMeansNoLimit(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = ObjectContext(coordinator: try Catalogue.seeded(backend, in: dir))
        let request = FetchRequest(entityName: "Item", sortKeys: [SortKey("name")], fetchLimit: 0)
        #expect(try names(context, request) == ["a1", "b1", "b2", "e1", "e2"])
        #expect(try context.count(request) == 5)
        try Catalogue.item(context, "Album", "a0", price: 1)
        #expect(try names(context, request) == ["a0", "a1", "b1", "b2", "e1", "e2"])
        #expect(try context.count(request) == 6)
    }

    /// A negative `fetchLimit` or `fetchOffset` never brings the process down, and every backend answers
    /// it alike (each case runs in a child process, so a crash fails only this test).
    @Test func aNegativeLimitOrOffsetDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            var answers: Set<String> = []
            for backend in Backend.everyStore {
                let dir = try TempDir()
                let context = ObjectContext(coordinator: try Catalogue.seeded(backend, in: dir))
                var answer = ""
                for (limit, offset) in [(-1, 0), (2, -1)] {
                    let request = FetchRequest(entityName: "Item", sortKeys: [SortKey("name")], fetchLimit: limit, fetchOffset: offset)
                    // Refusing the request is fine, as long as every backend does.
                    do { answer += try Relations.names(context.fetch(request)).joined(separator: ",") + ";" } catch { answer += "error;" }
                }
                answers.insert(answer)
            }
            if answers.count != 1 { exit(1) }
        }
    }

    /// `NSFetchRequest.includesSubentities` (true by default): fetching an entity returns its subentities'
    /// objects, each as its own concrete entity with its own attributes; false returns the entity's own only;
    /// an abstract parent can be fetched though it cannot be inserted.
    @Test(arguments: Backend.everyStore)
    func subentitiesAreIncludedUnlessExcluded(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Catalogue.seeded(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let books = FetchRequest(entityName: "Book", sortKeys: [SortKey("name")])
        #expect(try names(context, books) == ["b1", "b2", "e1", "e2"])
        #expect(try context.count(books) == 4)
        let fetched = try context.fetch(books)
        #expect(fetched.map(\.entity.name) == ["Book", "Book", "EBook", "EBook"])
        #expect(fetched.map(\.objectID.entityName) == ["Book", "Book", "EBook", "EBook"])
        #expect(try fetched[2].get("sizeMB", as: Double.self) == nil)    // an EBook attribute, readable
        var ownOnly = books
        ownOnly.includesSubentities = false
        #expect(try names(context, ownOnly) == ["b1", "b2"])
        #expect(try context.count(ownOnly) == 2)
        #expect(try names(context, FetchRequest(entityName: "EBook", sortKeys: [SortKey("name")])) == ["e1", "e2"])
        var items = FetchRequest(entityName: "Item", sortKeys: [SortKey("name")])
        #expect(try names(context, items) == ["a1", "b1", "b2", "e1", "e2"])
        items.includesSubentities = false
        #expect(try names(context, items) == [])
        #expect(try context.count(items) == 0)
        // Counts with a predicate over a table that holds every entity of the tree: only the family counts.
        func count(_ entity: String, _ format: String, own: Bool = false) throws -> Int {
            var request = FetchRequest(entityName: entity, predicate: try FetchPredicate(format: format))
            request.includesSubentities = !own
            return try context.count(request)
        }
        #expect(try count("Book", "price > 1.5") == 3)                      // b1, e1, e2
        #expect(try count("Book", "price > 1.5", own: true) == 1)           // b1
        #expect(try count("EBook", "price < 3") == 1)                       // e1
        #expect(try count("Item", "price > 0", own: true) == 0)
        #expect(try count("Item", "price > 1.5") == 4)                      // all but b2
        #expect(try count("Book", "price > 1.5 AND name >= 'e'") == 2)      // e1, e2
        // Subentities with limits and a predicate on an inherited attribute, unsaved objects included.
        try Catalogue.item(context, "EBook", "e0", price: 0.5)
        let cheapest = FetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "price < 3"), sortKeys: [SortKey("price")], fetchLimit: 2)
        #expect(try names(context, cheapest) == ["e0", "b2"])
        #expect(try context.count(cheapest) == 2)
    }

    /// `includesSubentities` across stores: when a subentity (EBook) lives in another configuration than its
    /// parent (Book, Item), fetching and counting the parent returns the subentity's objects from their own
    /// store too, merged under the sort, as Core Data searches every store that holds an entity of the family.
    @Test(arguments: Backend.everyStore)
    func subentitiesInAnotherConfigurationAreFetchedFromTheirStore(_ backend: Backend) throws {
        let model = try ObjectModel(entities: try Catalogue.model().entities, configurations: [
            ConfigurationDescription(name: "Paper", entityNames: ["Item", "Book", "Album"]),
            ConfigurationDescription(name: "Digital", entityNames: ["EBook"]),
        ])
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: model)
        let paper = try backend.add(to: coordinator, configuration: "Paper", in: dir.url)
        let digital = try backend.add(to: coordinator, configuration: "Digital", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        for (entity, name, price) in [("Book", "b1", 3.0), ("Book", "b2", 1.0), ("EBook", "e1", 2.0), ("EBook", "e2", 5.0), ("Album", "a1", 4.0)] {
            try Catalogue.item(context, entity, name, price: price)
        }
        try context.save()
        #expect(try paper.count(StoreFetchRequest(entityName: "Item")) == 3)
        #expect(try digital.count(StoreFetchRequest(entityName: "EBook")) == 2)
        let fresh = ObjectContext(coordinator: coordinator)
        var ownBooks = FetchRequest(entityName: "Book", sortKeys: [SortKey("price")])
        ownBooks.includesSubentities = false
        #expect(try names(fresh, ownBooks) == ["b2", "b1"])
        #expect(try names(fresh, FetchRequest(entityName: "EBook", sortKeys: [SortKey("price")])) == ["e1", "e2"])
        #expect(try names(fresh, FetchRequest(entityName: "Book", sortKeys: [SortKey("price")])) == ["b2", "e1", "b1", "e2"])
        #expect(try fresh.count(FetchRequest(entityName: "Book")) == 4)
        #expect(try names(fresh, FetchRequest(entityName: "Item", sortKeys: [SortKey("price")])) == ["b2", "e1", "b1", "a1", "e2"])
    }

    /// Core Data's cross-store fetched property (Apple's "Linking data between two Core Data stores"): a
    /// Product in one store finds its Reviews in another through `sku == $FETCH_SOURCE.sku`; the result is
    /// cached until the object is refreshed (`refresh(_:mergeChanges:)` re-evaluates it). Any pair of backends.
    @Test(arguments: Backend.everyStore, Backend.everyStore)
    func fetchedPropertyAcrossTwoStores(_ catalogBackend: Backend, _ reviewBackend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try TwoStores.model())
        try catalogBackend.add(to: coordinator, configuration: "Catalog", in: dir.url)
        let reviewStore = try reviewBackend.add(to: coordinator, configuration: "Reviews", in: dir.url)
        try Self.seedReviews(coordinator)

        let context = ObjectContext(coordinator: coordinator)
        let products = try Self.products(in: context)
        #expect(try products.map { try Self.stars($0) } == [[3, 5], [4], []])
        let reviews = try products[0].fetchedProperty("reviews")
        #expect(reviews.allSatisfy { $0.persistentStore === reviewStore && $0.entity.name == "Review" })
        // The results are the context's objects: one instance per review.
        let fetchedReviews = try context.fetch(FetchRequest(entityName: "Review"))
        #expect(reviews.allSatisfy { r in fetchedReviews.contains { $0 === r } })

        let writer = ObjectContext(coordinator: coordinator)
        let late = try writer.insert("Review")
        try late.set("sku", "A")
        try late.set("stars", Int16(1))
        try writer.save()
        #expect(try Self.stars(products[0]) == [3, 5])          // cached
        try context.refresh(products[0])
        #expect(try Self.stars(products[0]) == [1, 3, 5])
        expectContextError("unknown fetched property", { if case .unknownKey = $0 { return true } else { return false } }) {
            _ = try products[0].fetchedProperty("ratings")
        }
    }

    /// `prefetchFetchedProperty(_:for:)` resolves a fetched property for many objects at once (like a
    /// prefetching fetch) with the same results as resolving each one, and fills the cache each object
    /// answers from until it is refreshed or prefetched again.
    @Test(arguments: Backend.everyStore)
    func prefetchGivesTheSameResultsAndFillsTheCache(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.reviewedProducts(backend, in: dir)

        let single = ObjectContext(coordinator: coordinator)
        let oneByOne = try Self.products(in: single).map { try Self.stars($0) }
        let context = ObjectContext(coordinator: coordinator)
        let products = try Self.products(in: context)
        try context.prefetchFetchedProperty("reviews", for: products)

        let writer = ObjectContext(coordinator: coordinator)
        for sku in ["A", "B", "C"] {
            let review = try writer.insert("Review")
            try review.set("sku", sku)
            try review.set("stars", Int16(2))
        }
        try writer.save()
        // Answered from what the prefetch cached, so the reviews saved since do not show.
        #expect(try products.map { try Self.stars($0) } == oneByOne)
        #expect(oneByOne == [[3, 5], [4], []])
        try context.refresh(products[2])
        #expect(try Self.stars(products[2]) == [2])
        // Prefetching again reads the stores again, for cached objects too (it returned the first prefetch's
        // results before).
        try context.prefetchFetchedProperty("reviews", for: products)
        #expect(try products.map { try Self.stars($0) } == [[2, 3, 5], [2, 4], [2]])
        try context.prefetchFetchedProperty("reviews", for: [])
        expectContextError("unknown fetched property", { if case .unknownKey = $0 { return true } else { return false } }) {
            try context.prefetchFetchedProperty("ratings", for: products)
        }
    }

    /// A prefetch is for this context's objects: another context's are refused (`foreignObject`) and nothing is
    /// cached on any object, so each context still answers with its own objects. Before, another context's
    /// objects were handed this context's results.
    @Test(arguments: Backend.everyStore)
    func prefetchRefusesAnotherContextsObjects(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.reviewedProducts(backend, in: dir)
        let mine = ObjectContext(coordinator: coordinator)
        let theirs = ObjectContext(coordinator: coordinator)
        let ownProducts = try Self.products(in: mine)
        let otherProducts = try Self.products(in: theirs)
        #expect(ownProducts.count == 3)
        expectContextError("another context's object", { if case .foreignObject = $0 { return true } else { return false } }) {
            try mine.prefetchFetchedProperty("reviews", for: ownProducts + [otherProducts[1]])
        }
        // Nothing was cached by the refused call: each context resolves with its own objects.
        for product in otherProducts {
            #expect(try product.fetchedProperty("reviews").allSatisfy { $0.context === theirs })
        }
        for product in ownProducts {
            #expect(try product.fetchedProperty("reviews").allSatisfy { $0.context === mine })
        }
        #expect(try ownProducts.map { try Self.stars($0) } == otherProducts.map { try Self.stars($0) })
    }

    /// A prefetch for more objects than SQLite binds parameters in one statement by default (32,766), and `IN`
    /// lists longer than Debian's SQLite binds (250,000), give the results one lookup per object gives, on every
    /// backend; keys holding quotes, backslashes, control characters and non-ASCII text match only themselves.
    @Test(arguments: Backend.everyStore)
    func prefetchAndInListsLongerThanSQLiteBinds(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try TwoStores.coordinator(backend, in: dir.url)
        let odd = ["quote\"d", "back\\slash", "new\nline", "tab\there", "bell\u{7}", "caf\u{E9}", "\u{1F600}", "[1]", "null", "", " ", "5", "\\n"]
        let skus = odd + (0..<35_000).map { "p\($0)" }
        let seed = ObjectContext(coordinator: coordinator)
        for sku in skus {
            let product = try seed.insert("Product")
            try product.set("sku", sku)
        }
        // Every odd key and every third other product has a review; "cafe" and "p1 " differ from "caf\u{E9}"
        // and "p1" only slightly.
        var expected: [String: [Int]] = [:]
        for (i, sku) in skus.enumerated() where i < odd.count || i % 3 == 0 {
            let review = try seed.insert("Review")
            try review.set("sku", sku)
            try review.set("stars", Int16(i % 5 + 1))
            expected[sku] = [i % 5 + 1]
        }
        for sku in ["cafe", "p1 ", "Quote\"d"] {
            let review = try seed.insert("Review")
            try review.set("sku", sku)
            try review.set("stars", Int16(9))
        }
        try seed.save()

        let context = ObjectContext(coordinator: coordinator)
        let products = try context.fetch(FetchRequest(entityName: "Product"))
        #expect(products.count == skus.count)
        try context.prefetchFetchedProperty("reviews", for: products)
        var mismatches: [String] = []
        for product in products {
            let sku = try product.get("sku", as: String.self) ?? "?"
            if try Self.stars(product) != expected[sku, default: []] { mismatches.append(sku) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) products got other reviews, e.g. \(mismatches.prefix(5))")

        let reviewed = try context.fetch(FetchRequest(
            entityName: "Review", predicate: try FetchPredicate(
                format: "sku IN %@", (skus + (0..<260_000).map { "absent \($0)" }).predicateArgument)))
        #expect(Set(try reviewed.map { try $0.get("sku", as: String.self) ?? "?" }) == Set(expected.keys))
        let starred = try context.count(FetchRequest(
            entityName: "Review", predicate: try FetchPredicate(format: "stars IN %@", ([Int.min, Int.max] + Array(3..<300_000)).predicateArgument)))
        #expect(starred == expected.values.filter { $0[0] >= 3 }.count + 3)
        // Numbers never equal text, however long the list: the review of "5" is not among them.
        let numbered = try context.fetch(FetchRequest(
            entityName: "Review", predicate: try FetchPredicate(format: "sku IN %@", Array(0..<40).predicateArgument)))
        #expect(numbered.isEmpty)
    }

    /// Products A, B, C in `Catalog`; reviews A 5, A 3, B 4 and one for a product that does not exist.
    static func seedReviews(_ coordinator: StoreCoordinator) throws {
        let context = ObjectContext(coordinator: coordinator)
        for sku in ["A", "B", "C"] {
            let product = try context.insert("Product")
            try product.set("sku", sku)
            try product.set("name", "Product \(sku)")
        }
        for (sku, stars) in [("A", 5), ("A", 3), ("B", 4), ("Z", 1)] {
            let review = try context.insert("Review")
            try review.set("sku", sku)
            try review.set("stars", Int16(stars))
        }
        try context.save()
    }

    /// The stars of `product`'s reviews, sorted.
    /// Every product `context` fetches, by SKU.
    static func products(in context: ObjectContext) throws -> [ManagedObject] {
        try context.fetch(FetchRequest(entityName: "Product", sortKeys: [SortKey("sku")]))
    }

    /// A two-store coordinator of `backend` in `dir` holding `seedReviews`' products and reviews.
    static func reviewedProducts(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        let coordinator = try TwoStores.coordinator(backend, in: dir.url)
        try seedReviews(coordinator)
        return coordinator
    }

    static func stars(_ product: ManagedObject) throws -> [Int] {
        try product.fetchedProperty("reviews").map { try $0.get("stars", as: Int.self) ?? -1 }.sorted()
    }
}

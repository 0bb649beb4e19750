import Foundation
import Switchyard
import Testing

/// `forEach(_:batchSize:)` walks what `fetch` returns, in the same order, holding one batch at a time (Core
/// Data's `fetchBatchSize`: only a batch of objects is materialized at once).
@Suite struct BatchWalkTests {
    static func seeded(_ backend: Backend, _ dir: TempDir, count: Int) throws -> StoreCoordinator {
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for i in 0..<count { try Shop.order(context, String(format: "o%03d", (i * 37) % count), qty: Int64(i % 5)) }
        try context.save()
        return coordinator
    }

    @Test(arguments: Backend.everyStore)
    func walkMatchesFetchAndHoldsOneBatch(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 50)
        for request in [
            FetchRequest(entityName: "Order"),
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty >= 2")),
            FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty < 3"), sortKeys: [SortKey("code", ascending: false)]),
        ] {
            let expected = try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request))
            let context = ObjectContext(coordinator: coordinator)
            var walked: [String] = []
            var mostRegistered = 0
            try context.forEach(request, batchSize: 7) { order in
                walked.append(try order.get("code", as: String.self)!)
                mostRegistered = max(mostRegistered, context.registeredObjects.count)
            }
            #expect(walked == expected, "\(request)")
            #expect(mostRegistered <= 7)
            #expect(context.registeredObjects.isEmpty)
        }
    }

    @Test(arguments: Backend.everyStore)
    func changedObjectsStayAndUnsavedChangesAreSeen(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 20)
        let context = ObjectContext(coordinator: coordinator)
        var changed: [ManagedObject] = []
        try context.forEach(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 0")), batchSize: 3) { order in
            try order.set("qty", Int64(9))
            changed.append(order)
        }
        #expect(changed.count == 4)
        #expect(context.registeredObjects.count == 4)
        // With unsaved changes the walk sees them, as fetch does.
        try Shop.order(context, "new", qty: 9)
        var nines = 0
        try context.forEach(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 9")), batchSize: 2) { _ in nines += 1 }
        #expect(nines == 5)
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 9"))) == 5)
    }

    /// The walk's objects are those matching when it starts, each handed once, as Core Data's batched fetch
    /// keeps the object IDs its first fetch found — whatever is saved meanwhile, by another context or by the
    /// walk's own body. (Before, batches were fresh pages over the live store: rows saved before the walk's
    /// position shifted every later page, so objects were handed twice or never.)
    enum Meddling: String, CaseIterable, CustomTestStringConvertible {
        /// Another context saves a new order sorting before the walk's position.
        case insertBefore
        /// Another context deletes orders already walked.
        case deleteBehind
        /// The body moves every order past the end of the sort, saving every batch.
        case changeSortKey
        /// The body deletes every order, saving every batch.
        case deleteAll
        /// The body saves a copy of every order.
        case copyEach
        var testDescription: String { rawValue }
    }

    @Test(arguments: Backend.everyStore, Meddling.allCases)
    func eachObjectMatchingAtTheStartIsHandedOnce(_ backend: Backend, meddling: Meddling) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 40)
        let context = ObjectContext(coordinator: coordinator)
        let other = ObjectContext(coordinator: coordinator)
        for sorted in [true, false] {
            let request = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty >= 0"), sortKeys: sorted ? [SortKey("code")] : [])
            let before = try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request))
            var walked: [String] = []
            try context.forEach(request, batchSize: 7) { order in
                let code = try order.get("code", as: String.self)!
                walked.append(code)
                switch meddling {
                case .insertBefore:
                    if walked.count == 10 {
                        try Shop.order(other, "a-before-\(sorted)", qty: 1)
                        try other.save()
                    }
                case .deleteBehind:
                    if walked.count == 10 {
                        for walkedOrder in try other.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code IN %@", [walked[0], walked[1], walked[2]]))) {
                            try other.delete(walkedOrder)
                        }
                        try other.save()
                    }
                case .changeSortKey:
                    try order.set("code", "z-" + code)
                    if walked.count % 7 == 0 { try context.save() }
                case .deleteAll:
                    try context.delete(order)
                    if walked.count % 7 == 0 { try context.save() }
                case .copyEach:
                    try Shop.order(context, "copy-" + code, qty: 2)
                    if walked.count % 7 == 0 { try context.save() }
                }
            }
            try context.save()
            #expect(walked == before, "sorted: \(sorted)")
            if meddling == .deleteAll {
                #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order")) == 0)
                // Put the orders back for the unsorted round.
                for code in before { try Shop.order(context, code, qty: 1) }
                try context.save()
            }
            if meddling == .changeSortKey {
                #expect(try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request)).allSatisfy { $0.hasPrefix("z-") })
            }
        }
    }

    /// An object deleted by someone else before its batch is read is skipped; the rest are handed.
    @Test(arguments: Backend.everyStore)
    func anObjectDeletedBeforeItsBatchIsSkipped(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 30)
        let context = ObjectContext(coordinator: coordinator)
        let request = FetchRequest(entityName: "Order", sortKeys: [SortKey("code")])
        let before = try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request))
        var walked: [String] = []
        try context.forEach(request, batchSize: 5) { order in
            walked.append(try order.get("code", as: String.self)!)
            if walked.count == 1 {
                let other = ObjectContext(coordinator: coordinator)
                for late in try other.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code IN %@", [before[20], before[29]]))) {
                    try other.delete(late)
                }
                try other.save()
            }
        }
        #expect(walked == before.filter { $0 != before[20] && $0 != before[29] })
    }

    /// `batchSize` 0 means no batching, as Core Data's `fetchBatchSize`: the walk is one fetch. A negative size
    /// is an error, not a crash.
    @Test(arguments: Backend.everyStore)
    func batchSizeZeroIsOneFetchAndANegativeOneIsRefused(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.seeded(backend, dir, count: 12)
        let context = ObjectContext(coordinator: coordinator)
        let request = FetchRequest(entityName: "Order", sortKeys: [SortKey("code", ascending: false)])
        var walked: [String] = []
        try context.forEach(request, batchSize: 0) { walked.append(try $0.get("code", as: String.self)!) }
        #expect(walked == (try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request))))
        #expect(walked.count == 12)
        #expect {
            try context.forEach(request, batchSize: -1) { _ in }
        } throws: { error in
            guard case let .invalidRequest(message) = error as? QueryError else { return false }
            return message.contains("batchSize -1")
        }
    }
}

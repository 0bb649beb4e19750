import Foundation
import Synchronization
import Testing
@testable import Switchyard

/// Fetched properties resolved across stores, singly and batched, on every backend.
@Suite struct FetchedPropertyTests {
    let dir = TemporaryDirectory()

    /// Messenger with Cloud and Cache on `backend`, 60 messages (every other one linked, 10 distinct URLs)
    /// and a preview for 8 of those URLs.
    private func messenger(_ backend: Backend, cache: Backend? = nil) throws -> (StoreCoordinator, ObjectContext, [ManagedObject]) {
        let model = try ModelLoader.load(at: Repository.url("Schemas/Messenger.xcdatamodeld"))
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Cloud", in: dir)
        try (cache ?? backend).add(to: coordinator, configuration: "Cache", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for i in 0..<60 {
            let m = try context.insert("Message")
            try m.set("messageID", "m\(i)")
            try m.set("sentAt", Date(timeIntervalSinceReferenceDate: Double(i)))
            if i % 2 == 0 { try m.set("link", "https://example.com/\(i % 10)") }
        }
        for u in 0..<8 {
            let p = try context.insert("LinkPreview")
            try p.set("url", "https://example.com/\(u)")
            try p.set("title", "Article \(u)")
        }
        try context.save()
        let reader = ObjectContext(coordinator: coordinator)
        return (coordinator, reader, try reader.fetch(FetchRequest(entityName: "Message", sortKeys: [SortKey("messageID")])))
    }

    @Test(arguments: Backend.allCases)
    func batchedResolutionIsOneQueryPerDestinationStore(backend: Backend) throws {
        let (coordinator, context, messages) = try messenger(backend)
        let before = coordinator.storeFetchCount.load(ordering: .relaxed)
        try context.prefetchFetchedProperty("preview", for: messages)
        #expect(coordinator.storeFetchCount.load(ordering: .relaxed) - before == 1)
        // The cache now answers without another query, with the same answers as one-by-one resolution.
        let cached = try messages.map { try $0.fetchedProperty("preview").map { try $0.get("url", as: String.self) ?? "" } }
        #expect(coordinator.storeFetchCount.load(ordering: .relaxed) - before == 1)
        let fresh = ObjectContext(coordinator: coordinator)
        let single = try fresh.fetch(FetchRequest(entityName: "Message", sortKeys: [SortKey("messageID")]))
            .map { try $0.fetchedProperty("preview").map { try $0.get("url", as: String.self) ?? "" } }
        #expect(cached == single)
        #expect(cached.filter { !$0.isEmpty }.count == 24)   // links ending 0,2,4,6 have previews; 8 does not
        #expect(cached.filter(\.isEmpty).count == 36)
    }

    /// Issue #15: a fetched property from a PostgreSQL store into an embedded one and back, batched: one query
    /// per destination store, the same answers as one object at a time.
    @Test(TestServer.needed, arguments: [(Backend.postgresql, Backend.sqlite), (.postgresql, .lmdb), (.sqlite, .postgresql), (.lmdb, .postgresql)])
    func batchedAcrossPostgreSQLAndEmbeddedStores(cloud: Backend, cache: Backend) throws {
        let (coordinator, context, messages) = try messenger(cloud, cache: cache)
        #expect(Set(coordinator.stores.map(\.type)) == [cloud.storeType, cache.storeType])
        let before = coordinator.storeFetchCount.load(ordering: .relaxed)
        try context.prefetchFetchedProperty("preview", for: messages)
        #expect(coordinator.storeFetchCount.load(ordering: .relaxed) - before == 1)
        let cached = try messages.map { try $0.fetchedProperty("preview").map { try $0.get("title", as: String.self) ?? "" } }
        let fresh = ObjectContext(coordinator: coordinator)
        let single = try fresh.fetch(FetchRequest(entityName: "Message", sortKeys: [SortKey("messageID")]))
            .map { try $0.fetchedProperty("preview").map { try $0.get("title", as: String.self) ?? "" } }
        #expect(cached == single)
        #expect(cached.filter { !$0.isEmpty }.count == 24)
        #expect(cached[0] == ["Article 0"])
    }

    @Test func joinDetection() throws {
        let simple = try #require(ObjectContext.batchableJoin(in: try FetchPredicate(format: "url == $FETCH_SOURCE.link")))
        #expect(simple.destinationKey == ["url"] && simple.sourcePath == ["link"] && simple.termIndex == nil)
        let reversed = try #require(ObjectContext.batchableJoin(in: try FetchPredicate(format: "$FETCH_SOURCE.link == url AND title != nil")))
        #expect(reversed.destinationKey == ["url"] && reversed.termIndex == 0)
        #expect(ObjectContext.batchableJoin(in: try FetchPredicate(format: "url == $FETCH_SOURCE.link OR title == nil")) == nil)
        #expect(ObjectContext.batchableJoin(in: try FetchPredicate(format: "url CONTAINS $FETCH_SOURCE.link")) == nil)
        #expect(ObjectContext.batchableJoin(in: try FetchPredicate(format: "url == $FETCH_SOURCE.link AND title == $FETCH_SOURCE.text")) == nil)
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: Backend.allCases)
    func appleTwoStoreSample(backend: Backend) throws {
        let model = try ModelLoader.load(at: Fixtures.url(
            "mihaelamj__cupertino-sample-code/coredata-linking-data-between-two-core-data-stores/CoreDataFetchedProperty/CoreDataFetchedProperty.xcdatamodeld"))
        let coordinator = StoreCoordinator(model: model)
        let books = try backend.add(to: coordinator, configuration: "Book", in: dir)
        let feedbackStore = try backend.add(to: coordinator, configuration: "Feedback", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        var uuids: [UUID] = []
        for title in ["Dune", "Kindred"] {
            let book = try context.insert("Book")
            try book.set("title", title)
            let uuid = UUID()
            uuids.append(uuid)
            try book.set("uuid", uuid)
        }
        for (i, rating) in [5, 4, 2].enumerated() {
            let feedback = try context.insert("Feedback")
            try feedback.set("bookUUID", uuids[i == 2 ? 1 : 0])
            try feedback.set("rating", rating)
            try feedback.set("comment", "comment \(i)")
        }
        try context.save()
        #expect(try books.count(StoreFetchRequest(entityName: "Book")) == 2)
        #expect(try feedbackStore.count(StoreFetchRequest(entityName: "Feedback")) == 3)
        let dune = try #require(try context.fetch(FetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "title == 'Dune'"))).first)
        #expect(try dune.fetchedProperty("feedbackList").compactMap { try $0.get("rating", as: Int.self) }.sorted() == [4, 5])
        let writer = ObjectContext(coordinator: coordinator)
        let more = try writer.insert("Feedback")
        try more.set("bookUUID", uuids[0])
        try more.set("rating", 1)
        try writer.save()
        #expect(try dune.fetchedProperty("feedbackList").count == 2)   // cached until refreshed
        try context.refresh(dune)
        #expect(try dune.fetchedProperty("feedbackList").compactMap { try $0.get("rating", as: Int.self) }.sorted() == [1, 4, 5])
    }

    /// A legacy store's REAL column can hold infinity, which a decimal attribute reads as NaN (Decimal has no
    /// infinity). A fetched property joined on such a key finds nothing, as SQLite would (it binds NaN as
    /// NULL), one object at a time or batched, and the other sources' results are unaffected.
    @Test(.enabled(if: SQLite3.available, "needs /usr/bin/sqlite3"))
    func aNaNJoinKeyMatchesNothing() throws {
        let product = EntityDescription(
            name: "Product", attributes: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "code", type: .decimal)],
            fetchedProperties: [FetchedPropertyDescription(name: "parts", destination: "Part", predicate: "code == $FETCH_SOURCE.code")])
        let part = EntityDescription(name: "Part", attributes: [AttributeDescription(name: "code", type: .decimal)])
        let model = try ObjectModel(entities: [product, part], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Product", "Part"])])
        let url = try #require(Backend.sqlite.url(in: dir, name: "nan"))
        let writer = ObjectContext(coordinator: StoreCoordinator(model: model))
        try writer.coordinator.addStore(.sqlite, configuration: "Main", at: url)
        for (name, code) in [("ok", 1), ("broken", 2)] {
            let p = try writer.insert("Product")
            try p.set("name", name)
            try p.setValue(.decimal(Decimal(code)), forKey: "code")
            let q = try writer.insert("Part")
            try q.setValue(.decimal(Decimal(code)), forKey: "code")
        }
        try writer.save()
        try SQLite3.execute(url.path, "UPDATE ZPRODUCT SET ZCODE = 9e999 WHERE ZNAME = 'broken'")

        func products() throws -> (ObjectContext, [ManagedObject]) {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            return (context, try context.fetch(FetchRequest(entityName: "Product", sortKeys: [SortKey("name")])))
        }
        let (context, batched) = try products()
        #expect(try batched.map { try $0.get("name", as: String.self) } == ["broken", "ok"])
        guard case .decimal(let nan) = try batched[0].value(forKey: "code") else { Issue.record("code is not a decimal"); return }
        #expect(nan.isNaN)
        try context.prefetchFetchedProperty("parts", for: batched)
        #expect(try batched.map { try $0.fetchedProperty("parts").count } == [0, 1])
        let (other, single) = try products()
        #expect(try single.map { try $0.fetchedProperty("parts").count } == [0, 1])
        withExtendedLifetime(other) {}
    }
}

import Foundation
import Testing
@testable import Switchyard

/// The `PersistentStore` contract, run against every backend. A backend-specific exemption needs a written
/// reason next to it.
@Suite struct StoreConformanceTests {
    let model: ObjectModel
    let dir = TemporaryDirectory()

    init() throws { model = try TestModels.library() }

    private func book(_ pk: Int64, _ title: String, code: String? = nil, pages: Int64? = nil, author: Int64? = nil) -> StoreRow {
        var row = StoreRow(entityName: "Book", primaryKey: pk, values: ["title": .string(title)])
        if let code { row.values["code"] = .string(code) }
        if let pages { row.values["pages"] = .integer(pages) }
        if let author { row.toOne["author"] = RowReference(entityName: "Author", primaryKey: author) }
        return row
    }

    private func insertBooks(_ store: any PersistentStore, _ rows: [StoreRow]) throws {
        let keys = try store.allocatePrimaryKeys(for: "Book", count: rows.count)
        var changes = StoreChangeSet()
        for (row, pk) in zip(rows, keys) {
            var r = row
            r.primaryKey = pk
            changes.inserts.append(r)
        }
        try store.save(changes)
    }

    // MARK: - Metadata

    @Test(arguments: Backend.everyStore)
    func newStoreMetadata(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        let metadata = try store.metadata()
        #expect(metadata.storeType == backend.storeType.rawValue)
        #expect(metadata.uuid == store.identifier)
        #expect(metadata.versionHashes["Book"] == model.entity(named: "Book")!.versionHash)
        #expect(metadata.versionIdentifiers == ["1"])
    }

    @Test(arguments: Backend.everyStore)
    func metadataKeepsAppKeys(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        var metadata = try store.metadata()
        metadata.additional["com.example.sync-token"] = .string("abc")
        metadata.additional["com.example.counts"] = .array([.integer(1), .integer(2)])
        try store.setMetadata(metadata)
        let read = try store.metadata()
        #expect(read.additional["com.example.sync-token"] == .string("abc"))
        #expect(read.additional["com.example.counts"] == .array([.integer(1), .integer(2)]))
        #expect(read.uuid == metadata.uuid)
    }

    @Test(arguments: Backend.everyStore)
    func newStoreRecordsItsModel(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        let stored = try #require(try store.storedModel())
        #expect(stored.entities.map(\.name) == model.entities.map(\.name))
        #expect(stored.versionHashes == model.versionHashes)
        #expect(stored.configurations.map(\.name) == model.configurations.map(\.name))
    }

    // MARK: - Keys

    @Test(arguments: Backend.everyStore)
    func primaryKeysAreNeverReused(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        let first = try store.allocatePrimaryKeys(for: "Book", count: 3)
        #expect(first == 1...3)
        // Subentities share their root's key space (one table per inheritance root).
        let magazine = try store.allocatePrimaryKeys(for: "Magazine", count: 2)
        #expect(magazine == 4...5)
        try store.save(StoreChangeSet(inserts: [book(5, "x")]))
        try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Book", primaryKey: 5, expectedVersion: 1)]))
        #expect(try store.allocatePrimaryKeys(for: "Book", count: 1) == 6...6)
        #expect(try store.allocatePrimaryKeys(for: "Author", count: 1) == 1...1)
    }

    // MARK: - Values

    @Test(arguments: Backend.everyStore)
    func everyAttributeTypeRoundTrips(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.25)
        let uuid = UUID()
        var row = StoreRow(entityName: "Book", primaryKey: 1, values: [
            "title": "Dune", "published": .date(date), "pages": 412, "code": "B-1",
            "price": .decimal(Decimal(string: "12.5")!), "cover": .binary(Data([0, 1, 2, 255])),
            "link": .uri(URL(string: "https://example.com/dune")!), "edition": 3, "copies": .integer(Int64.max),
            "weight": .double(0.75),
        ])
        row.primaryKey = try store.allocatePrimaryKeys(for: "Book", count: 1).lowerBound
        let authorRow = StoreRow(entityName: "Author", primaryKey: try store.allocatePrimaryKeys(for: "Author", count: 1).lowerBound,
                                 values: ["name": "Herbert", "born": .date(date), "rating": 4.5, "active": true, "authorID": .uuid(uuid)])
        row.toOne["author"] = authorRow.reference
        try store.save(StoreChangeSet(inserts: [authorRow, row]))
        let fetched = try #require(try store.fetch(StoreFetchRequest(entityName: "Book")).first)
        #expect(fetched.entityName == "Book")
        #expect(fetched.version == 1)
        #expect(fetched["title"] == "Dune")
        #expect(fetched["published"] == .date(date))
        #expect(fetched["pages"] == 412)
        #expect(fetched["price"] == .decimal(Decimal(string: "12.5")!))
        #expect(fetched["cover"] == .binary(Data([0, 1, 2, 255])))
        #expect(fetched["link"] == .uri(URL(string: "https://example.com/dune")!))
        #expect(fetched["edition"] == 3)
        #expect(fetched["copies"] == .integer(Int64.max))
        #expect(fetched["weight"] == .double(0.75))
        #expect(fetched["magazineOnly"] == .null)
        #expect(fetched.toOne["author"] == authorRow.reference)
        let author = try #require(try store.rows(for: [authorRow.reference]).first)
        #expect(author["authorID"] == .uuid(uuid))
        #expect(author["active"] == .bool(true))
        #expect(author["rating"] == .double(4.5))
    }

    /// `fetch(_:each:)` hands over exactly the rows `fetch` returns, in the same order, for every shape of
    /// request; an error thrown by the caller's body ends the read and comes out unchanged.
    @Test(arguments: Backend.everyStore)
    func fetchEachDeliversWhatFetchReturns(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        try insertBooks(store, (0..<40).map { book(0, "T\(($0 * 7) % 40)", code: "C\($0)", pages: Int64($0)) })
        let requests: [StoreFetchRequest] = [
            StoreFetchRequest(entityName: "Book"),
            StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "pages >= 10 AND pages < 30")),
            StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "code == 'C13'")),
            StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "code BEGINSWITH 'C1'"), fetchLimit: 4, fetchOffset: 1),
            StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "pages > 4"), fetchLimit: 7, fetchOffset: 5),
            StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "code IN {'C31', 'C3', 'C17', 'C5'}")),
            StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "pages < 12"), includesSubentities: false),
            StoreFetchRequest(entityName: "Book", fetchLimit: 0),
            StoreFetchRequest(entityName: "Book", fetchOffset: 100),
            StoreFetchRequest(entityName: "Book", sortKeys: [SortKey("title", ascending: false)], fetchLimit: 9, fetchOffset: 2),
        ]
        for request in requests {
            var streamed: [StoreRow] = []
            try store.fetch(request) { streamed.append($0) }
            let whole = try store.fetch(request)
            #expect(streamed == whole, "\(request.predicate.map { "\($0)" } ?? "all"), limit \(request.fetchLimit.map(String.init) ?? "none")")
        }
        #expect(try store.fetch(requests[1]).count == 20)

        struct Stop: Error, Equatable {}
        var seen = 0
        #expect(throws: Stop()) {
            try store.fetch(StoreFetchRequest(entityName: "Book")) { _ in
                seen += 1
                if seen == 3 { throw Stop() }
            }
        }
        #expect(seen == 3)
        // The store is still usable after the interrupted read.
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 40)
    }

    @Test(arguments: Backend.everyStore)
    func invalidValuesAreRejected(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        var wrongKind = book(1, "x")
        wrongKind.values["pages"] = "many"
        #expect(throws: StoreError.self) { try store.save(StoreChangeSet(inserts: [wrongKind])) }
        var outOfRange = book(1, "x")
        outOfRange.values["edition"] = .integer(40_000)   // Integer 16
        #expect(throws: StoreError.self) { try store.save(StoreChangeSet(inserts: [outOfRange])) }
        var unknown = book(1, "x")
        unknown.values["nosuch"] = 1
        #expect(throws: StoreError.unknownProperty(path: store.displayPath, configuration: store.configurationName, entity: "Book", property: "nosuch")) {
            try store.save(StoreChangeSet(inserts: [unknown]))
        }
        #expect(throws: StoreError.self) { _ = try store.allocatePrimaryKeys(for: "Book", count: 0) }
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 0)
    }

    @Test(arguments: Backend.everyStore)
    func entityOutsideConfigurationIsAnError(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Notes", in: dir)
        #expect(throws: StoreError.self) { try store.fetch(StoreFetchRequest(entityName: "Book")) }
        #expect(throws: StoreError.self) { try store.save(StoreChangeSet(inserts: [book(1, "x")])) }
    }

    // MARK: - Fetch

    @Test(arguments: Backend.everyStore)
    func sortLimitOffsetAndNullOrdering(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        try insertBooks(store, [book(0, "c", pages: 30), book(0, "a", pages: nil), book(0, "b", pages: 10), book(0, "d", pages: 10)])
        let byPages = try store.fetch(StoreFetchRequest(entityName: "Book", sortKeys: [SortKey("pages")]))
        // NULL first, ties broken by primary key.
        #expect(byPages.map { $0["title"] } == ["a", "b", "d", "c"])
        let descending = try store.fetch(StoreFetchRequest(entityName: "Book", sortKeys: [SortKey("pages", ascending: false)]))
        #expect(descending.map { $0["title"] } == ["c", "b", "d", "a"])
        let page = try store.fetch(StoreFetchRequest(entityName: "Book", sortKeys: [SortKey("title")], fetchLimit: 2, fetchOffset: 1))
        #expect(page.map { $0["title"] } == ["b", "c"])
        #expect(try store.count(StoreFetchRequest(entityName: "Book", fetchLimit: 1)) == 4)
    }

    @Test(arguments: Backend.everyStore)
    func subentitiesIncludedUnlessExcluded(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        let keys = try store.allocatePrimaryKeys(for: "Publication", count: 3)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Book", primaryKey: keys.lowerBound, values: ["title": "B"]),
            StoreRow(entityName: "Magazine", primaryKey: keys.lowerBound + 1, values: ["title": "M", "issue": 7]),
            StoreRow(entityName: "Book", primaryKey: keys.lowerBound + 2, values: ["title": "B2"]),
        ]))
        #expect(try store.count(StoreFetchRequest(entityName: "Publication")) == 3)
        #expect(try store.count(StoreFetchRequest(entityName: "Publication", includesSubentities: false)) == 0)
        let magazines = try store.fetch(StoreFetchRequest(entityName: "Magazine"))
        #expect(magazines.map(\.entityName) == ["Magazine"])
        #expect(magazines.first?["issue"] == 7)
        let sorted = try store.fetch(StoreFetchRequest(entityName: "Publication", sortKeys: [SortKey("title", ascending: false)]))
        #expect(sorted.map(\.entityName) == ["Magazine", "Book", "Book"])
    }

    @Test(arguments: Backend.everyStore)
    func predicatesFilter(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        let a = try store.allocatePrimaryKeys(for: "Author", count: 2)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Author", primaryKey: a.lowerBound, values: ["name": "Le Guin"]),
            StoreRow(entityName: "Author", primaryKey: a.upperBound, values: ["name": "Herbert"]),
        ]))
        try insertBooks(store, [
            book(0, "Dune", code: "D", pages: 412, author: a.upperBound),
            book(0, "Earthsea", code: "E", pages: 200, author: a.lowerBound),
            book(0, "Lathe", code: "L", pages: 180, author: a.lowerBound),
        ])
        func titles(_ format: String, _ args: PredicateArgument...) throws -> [String] {
            let p = try FetchPredicate(format: format, arguments: args)
            return try store.fetch(StoreFetchRequest(entityName: "Book", predicate: p, sortKeys: [SortKey("title")]))
                .compactMap { $0["title"].stringValue }
        }
        #expect(try titles("pages > %d", 190) == ["Dune", "Earthsea"])
        #expect(try titles("author.name == %@", "Le Guin") == ["Earthsea", "Lathe"])
        #expect(try titles("title BEGINSWITH[c] 'e' OR code == 'D'") == ["Dune", "Earthsea"])
        #expect(try titles("NOT (pages BETWEEN {180, 300})") == ["Dune"])
        #expect(try titles("code IN {'L', 'X'}") == ["Lathe"])
        #expect(throws: QueryError.self) { try titles("nosuchkey == 1") }
        let authors = try store.fetch(StoreFetchRequest(entityName: "Author", predicate: try FetchPredicate(format: "publications.@count >= 2")))
        #expect(authors.map { $0["name"] } == ["Le Guin"])
    }

    // MARK: - Save

    @Test(arguments: Backend.everyStore)
    func updateIncrementsVersionAndConflictRollsBackEverything(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        try insertBooks(store, [book(0, "Dune", code: "D")])
        try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "Book", primaryKey: 1, expectedVersion: 1, values: ["pages": 10])]))
        let row = try #require(try store.fetch(StoreFetchRequest(entityName: "Book")).first)
        #expect(row.version == 2)
        #expect(row["pages"] == 10)
        // A stale update in the same change set as an insert: neither is written.
        let stale = StoreChangeSet(
            inserts: [book(try store.allocatePrimaryKeys(for: "Book", count: 1).lowerBound, "New", code: "N")],
            updates: [RowUpdate(entityName: "Book", primaryKey: 1, expectedVersion: 1, values: ["pages": 99])])
        #expect {
            try store.save(stale)
        } throws: { error in
            guard case StoreError.conflict(_, _, _, "Book", 1, 1, 2)? = error as? StoreError else { return false }
            return true
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 1)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Book")).first?["pages"] == 10)
        // Deleting with a stale version is a conflict too.
        #expect(throws: StoreError.self) {
            try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Book", primaryKey: 1, expectedVersion: 1)]))
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 1)
    }

    @Test(arguments: Backend.everyStore)
    func uniquenessConstraintIsEnforced(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir)
        try insertBooks(store, [book(0, "Dune", code: "D")])
        #expect {
            try insertBooks(store, [book(0, "Other", code: "X"), book(0, "Dune again", code: "D")])
        } throws: { error in
            // Every backend names the row's entity (the constraint is declared by its parent, Publication).
            guard case StoreError.uniquenessViolation(_, _, let entity, let properties, let values)? = error as? StoreError else { return false }
            return entity == "Book" && properties == ["code"] && values == [AttributeValue.string("D").description]
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 1)
        // NULLs never collide.
        try insertBooks(store, [book(0, "n1"), book(0, "n2")])
        #expect(try store.count(StoreFetchRequest(entityName: "Book")) == 3)
    }

    @Test(arguments: Backend.everyStore)
    func concurrentWritersAndReaders(backend: Backend) async throws {
        let store = try backend.open(model, configuration: "Notes", in: dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<25 {
                        let pk = try store.allocatePrimaryKeys(for: "Note", count: 1).lowerBound
                        try store.save(StoreChangeSet(inserts: [
                            StoreRow(entityName: "Note", primaryKey: pk, values: ["text": .string("w\(worker)-\(i)"), "rank": .integer(Int64(i))])
                        ]))
                        let seen = try store.count(StoreFetchRequest(entityName: "Note"))
                        #expect(seen >= i + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        let rows = try store.fetch(StoreFetchRequest(entityName: "Note"))
        #expect(rows.count == 200)
        #expect(Set(rows.map(\.primaryKey)).count == 200)
    }

    @Test(arguments: Backend.everyStore.filter { $0 != .memory })
    func reopenKeepsEverything(backend: Backend) throws {
        // Memory stores have no file to reopen; every other backend must persist.
        var identifier: UUID
        do {
            let store = try backend.open(model, configuration: "Main", in: dir, name: "reopen")
            identifier = store.identifier
            try insertBooks(store, [book(0, "Dune", code: "D")])
        }
        let again = try backend.open(model, configuration: "Main", in: dir, name: "reopen")
        #expect(again.identifier == identifier)
        #expect(try again.fetch(StoreFetchRequest(entityName: "Book")).map { $0["title"] } == ["Dune"])
        #expect(try again.allocatePrimaryKeys(for: "Book", count: 1) == 2...2)
    }

    @Test(arguments: Backend.everyStore)
    func destroyRemovesTheStore(backend: Backend) throws {
        let store = try backend.open(model, configuration: "Main", in: dir, name: "gone")
        try insertBooks(store, [book(0, "Dune")])
        try store.destroy()
        if let url = store.url {
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
        #expect(throws: (any Error).self) { try store.fetch(StoreFetchRequest(entityName: "Book")) }
    }
}

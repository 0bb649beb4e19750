import Foundation
import Testing
@testable import Switchyard

/// The same predicates through every path — compiled to SQL by the SQLite store, evaluated in memory by the
/// memory store, evaluated over a cursor (or an index) by the LMDB store — on the same rows must select the
/// same objects.
@Suite struct PredicateParityTests {
    static let formats: [String] = [
        "TRUEPREDICATE", "FALSEPREDICATE",
        "pages > 200", "pages >= 200", "pages < 200", "pages <= 200", "pages == 200", "pages != 200",
        "pages == nil", "pages != nil", "NOT (pages < 300)", "NOT (pages == nil)",
        "pages BETWEEN {150, 412}", "pages IN {180, 412, 999}", "pages IN {}", "code IN {'D', nil}",
        "title == 'Dune'", "title ==[c] 'dune'", "title ==[cd] 'ÉARTHSEA'", "title != 'Dune'",
        "title BEGINSWITH 'E'", "title BEGINSWITH[c] 'e'", "title ENDSWITH 'ne'", "title CONTAINS 'a'",
        "title CONTAINS[cd] 'É'", "title LIKE '*a*'", "title LIKE 'D?ne'", "title LIKE[c] 'l*'",
        "title < 'E'", "title >= 'Earthsea'", "code == nil OR pages > 400",
        "pages > 150 AND (title BEGINSWITH 'L' OR title BEGINSWITH 'D')",
        "published > CAST(700000000, 'NSDate')", "published == nil",
        "price > 10", "price == 9.99", "weight < 1.5",
        "author.name == 'Le Guin'", "author.name BEGINSWITH[c] 'h'", "author == nil", "author.active == YES",
        "author.rating >= 4.5", "author.name == nil",
        "edition == 1", "edition != 1",
    ]

    static let authorFormats: [String] = [
        "publications.@count == 2", "publications.@count > 0", "publications.@count == 0",
        "ANY publications.pages > 400", "ALL publications.pages > 150", "NONE publications.pages > 400",
        "ANY publications.title BEGINSWITH[c] 'e'", "publications.title CONTAINS 'Dune'",
        "ALL publications.pages > 0", "name ==[c] 'BUTLER'", "active == NO", "rating == nil",
        "authorID == %@", "born < %@",
    ]

    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let born = Date(timeIntervalSinceReferenceDate: -1_000_000_000)

    /// Authors and books with nulls, accents, case differences and an author without books.
    static func populate(_ store: any PersistentStore) throws {
        let a = try store.allocatePrimaryKeys(for: "Author", count: 3)
        let authors: [StoreRow] = [
            StoreRow(entityName: "Author", primaryKey: a.lowerBound, values: ["name": "Le Guin", "active": true, "rating": 4.8, "authorID": .uuid(uuid), "born": .date(born)]),
            StoreRow(entityName: "Author", primaryKey: a.lowerBound + 1, values: ["name": "Herbert", "active": false, "rating": 4.5]),
            StoreRow(entityName: "Author", primaryKey: a.lowerBound + 2, values: ["name": "Butler", "active": true]),
        ]
        let b = try store.allocatePrimaryKeys(for: "Book", count: 5)
        func book(_ i: Int64, _ values: [String: AttributeValue], author: Int64?) -> StoreRow {
            var row = StoreRow(entityName: "Book", primaryKey: b.lowerBound + i, values: values)
            if let author { row.toOne["author"] = RowReference(entityName: "Author", primaryKey: author) }
            return row
        }
        let books = [
            book(0, ["title": "Dune", "pages": 412, "code": "D", "price": .decimal(Decimal(string: "9.99")!), "published": .date(Date(timeIntervalSinceReferenceDate: 710_000_000)), "weight": 1.2, "edition": 1], author: a.lowerBound + 1),
            book(1, ["title": "Earthsea", "pages": 200, "code": "E", "price": .decimal(12), "weight": 0.5, "edition": 2], author: a.lowerBound),
            book(2, ["title": "Lathe", "pages": 180, "published": .date(Date(timeIntervalSinceReferenceDate: 690_000_000)), "edition": 1], author: a.lowerBound),
            book(3, ["title": "Éarthsea Revisited", "code": "R", "edition": 1], author: nil),
            book(4, ["title": "dune messiah", "pages": 256, "code": "M", "price": .decimal(Decimal(string: "10.5")!), "edition": 3], author: a.lowerBound + 1),
        ]
        try store.save(StoreChangeSet(inserts: authors + books))
    }

    func stores() throws -> (sqlite: any PersistentStore, memory: any PersistentStore, lmdb: any PersistentStore, dir: TemporaryDirectory) {
        let model = try TestModels.library()
        let dir = TemporaryDirectory()
        let sqlite = try Backend.sqlite.open(model, configuration: "Main", in: dir)
        let memory = try Backend.memory.open(model, configuration: "Main", in: dir)
        let lmdb = try Backend.lmdb.open(model, configuration: "Main", in: dir)
        try Self.populate(sqlite)
        try Self.populate(memory)
        try Self.populate(lmdb)
        return (sqlite, memory, lmdb, dir)
    }

    @Test(arguments: formats)
    func bookPredicateAgrees(format: String) throws {
        let (sqlite, memory, lmdb, dir) = try stores()
        _ = dir
        let predicate = try FetchPredicate(format: format)
        let request = StoreFetchRequest(entityName: "Book", predicate: predicate, sortKeys: [SortKey("title")])
        let fromSQL = try sqlite.fetch(request).map(\.primaryKey)
        let inMemory = try memory.fetch(request).map(\.primaryKey)
        let fromLMDB = try lmdb.fetch(request).map(\.primaryKey)
        #expect(fromSQL == inMemory, "\(format): SQL \(fromSQL) vs memory \(inMemory)")
        #expect(fromLMDB == fromSQL, "\(format): LMDB \(fromLMDB) vs SQL \(fromSQL)")
        #expect(try sqlite.count(request) == fromSQL.count)
        #expect(try lmdb.count(request) == fromLMDB.count)
    }

    @Test(arguments: authorFormats)
    func authorPredicateAgrees(format: String) throws {
        let (sqlite, memory, lmdb, dir) = try stores()
        _ = dir
        let arguments: [PredicateArgument] = format.hasPrefix("authorID") ? [.uuid(Self.uuid)]
            : format.hasPrefix("born") ? [.date(Self.born.addingTimeInterval(1))] : []
        let predicate = try FetchPredicate(format: format, arguments: arguments)
        let request = StoreFetchRequest(entityName: "Author", predicate: predicate, sortKeys: [SortKey("name")])
        let fromSQL = try sqlite.fetch(request).map(\.primaryKey)
        let inMemory = try memory.fetch(request).map(\.primaryKey)
        let fromLMDB = try lmdb.fetch(request).map(\.primaryKey)
        #expect(fromSQL == inMemory, "\(format): SQL \(fromSQL) vs memory \(inMemory)")
        #expect(fromLMDB == fromSQL, "\(format): LMDB \(fromLMDB) vs SQL \(fromSQL)")
        #expect(try lmdb.count(request) == fromLMDB.count)
    }

    // MARK: - Many-to-many and ordered relationships

    static let relationshipFormats: [String] = [
        "tags.@count == 2", "tags.@count == 0", "tags.@count >= 1", "ANY tags.name == 'red'", "ALL tags.name == 'blue'",
        "NONE tags.name BEGINSWITH 'r'", "tags.name CONTAINS 'green'", "ANY tags.name ==[c] 'RED'",
        "ANY tags.photos.name == 'p2'", "ANY tags.photos.@count > 1", "NOT (ANY tags.name == 'blue')",
        "tags.@count == 1 OR name == 'p3'", "ANY tags.name IN {'green', 'nope'}",
    ]

    /// Photos p1 {red, blue}, p2 {blue, green}, p3 {}, p4 {green}, with links named from both ends.
    static func populateRelationships(_ store: any PersistentStore) throws {
        let p = try store.allocatePrimaryKeys(for: "Photo", count: 4)
        let t = try store.allocatePrimaryKeys(for: "Tag", count: 3)
        func photo(_ i: Int64) -> RowReference { RowReference(entityName: "Photo", primaryKey: p.lowerBound + i) }
        func tag(_ i: Int64) -> RowReference { RowReference(entityName: "Tag", primaryKey: t.lowerBound + i) }
        let tagNames = ["red", "blue", "green"]
        try store.save(StoreChangeSet(
            inserts: (0..<4).map { StoreRow(entityName: "Photo", primaryKey: photo($0).primaryKey, values: ["name": .string("p\($0 + 1)")]) }
                + (0..<3).map { StoreRow(entityName: "Tag", primaryKey: tag($0).primaryKey, values: ["name": .string(tagNames[Int($0)])]) },
            linkInserts: [
                RelationshipLink(source: photo(0), relationship: "tags", destination: tag(0)),
                RelationshipLink(source: photo(0), relationship: "tags", destination: tag(1)),
                RelationshipLink(source: tag(1), relationship: "photos", destination: photo(1)),
                RelationshipLink(source: tag(2), relationship: "photos", destination: photo(1)),
                RelationshipLink(source: photo(3), relationship: "tags", destination: tag(2)),
            ]))
    }

    @Test(arguments: relationshipFormats)
    func manyToManyPredicateAgrees(format: String) throws {
        let model = try RelationshipTestModel.make()
        let dir = TemporaryDirectory()
        var results: [[String]] = []
        for backend in [Backend.sqlite, .memory, .lmdb] {
            let store = try backend.open(model, configuration: "Default", in: dir)
            try Self.populateRelationships(store)
            let request = StoreFetchRequest(entityName: "Photo", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")])
            let names = try store.fetch(request).compactMap { $0["name"].stringValue }
            #expect(try store.count(request) == names.count, "\(backend) \(format)")
            results.append(names)
        }
        #expect(results[1] == results[0], "\(format): memory \(results[1]) vs SQL \(results[0])")
        #expect(results[2] == results[0], "\(format): LMDB \(results[2]) vs SQL \(results[0])")
    }

    @Test func manyToManySelectionsSpotCheck() throws {
        let dir = TemporaryDirectory()
        let store = try Backend.sqlite.open(try RelationshipTestModel.make(), configuration: "Default", in: dir)
        try Self.populateRelationships(store)
        func names(_ format: String) throws -> [String] {
            try store.fetch(StoreFetchRequest(entityName: "Photo", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")]))
                .compactMap { $0["name"].stringValue }
        }
        #expect(try names("tags.@count == 2") == ["p1", "p2"])
        #expect(try names("ALL tags.name == 'blue'") == ["p3"])
        #expect(try names("ANY tags.photos.name == 'p2'") == ["p1", "p2", "p4"])
        #expect(try names("ANY tags.photos.@count > 1") == ["p1", "p2", "p4"])
    }

    @Test func expectedSelectionsSpotCheck() throws {
        let (sqlite, _, _, dir) = try stores()
        _ = dir
        func titles(_ format: String) throws -> [String] {
            try sqlite.fetch(StoreFetchRequest(entityName: "Book", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("title")]))
                .compactMap { $0["title"].stringValue }
        }
        #expect(try titles("title ==[cd] 'earthsea revisited'") == ["Éarthsea Revisited"])
        #expect(try titles("NOT (pages < 300)") == ["Dune"])
        #expect(try titles("author == nil") == ["Éarthsea Revisited"])
    }
}

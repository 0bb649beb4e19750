import Foundation
import Testing
@testable import Switchyard

/// Real Core Data models with the relationships the fixture stores lack: Apple's Tags sample (Photo.tags <<->>
/// Tag.photos, many-to-many) and CoreStore's TestEntity2 (an ordered self-referential to-many). New stores are
/// created from each model on every backend, filled through a context, reopened, and read back; on SQLite the
/// file is checked against Core Data's layout with the sqlite3 CLI.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage))
struct FixtureModelRelationshipTests {
    let dir = TemporaryDirectory()

    static func tagsModel() throws -> ObjectModel {
        try ModelLoader.load(at: Fixtures.url(
            "mihaelamj__cupertino-sample-code/coredata-showcase-app-data-in-spotlight/Tags/CoreDataStack/Tags.xcdatamodeld"))
    }

    static func coreStoreModel() throws -> ObjectModel {
        try ModelLoader.load(at: Fixtures.url("JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld"))
    }

    /// A second coordinator over the same files (a memory store cannot be reopened: the same one is reused).
    private func reopen(_ backend: Backend, _ model: ObjectModel, _ configuration: String, name: String, _ first: StoreCoordinator) throws -> StoreCoordinator {
        guard backend != .memory else { return first }
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: configuration, in: dir, name: name)
        return coordinator
    }

    @Test(arguments: Backend.allCases)
    func tagsManyToManyRoundTrips(backend: Backend) throws {
        let model = try Self.tagsModel()
        #expect(model.manyToManyEnds(of: "tags", from: "Photo").map { [$0.first.key, $0.second.key] } == ["Photo.tags", "Tag.photos"])
        let first = StoreCoordinator(model: model)
        try backend.add(to: first, configuration: "Default", in: dir, name: "tags")
        let context = ObjectContext(coordinator: first)
        var photos: [ManagedObject] = []
        for i in 0..<4 {
            let photo = try context.insert("Photo")
            try photo.set("uniqueName", "p\(i)")
            photos.append(photo)
        }
        var tags: [ManagedObject] = []
        for i in 0..<3 {
            let tag = try context.insert("Tag")
            try tag.set("name", "t\(i)")
            tags.append(tag)
        }
        // p_i carries t_j when i + j is even: 6 links in all.
        var expected: [String: [String]] = [:]
        for (i, photo) in photos.enumerated() {
            let chosen = tags.enumerated().filter { (i + $0.offset) % 2 == 0 }.map(\.element)
            try photo.setRelatedObjects(chosen, forKey: "tags")
            expected["p\(i)"] = try chosen.map { try $0.get("name", as: String.self)! }
        }
        try context.save()

        let coordinator = try reopen(backend, model, "Default", name: "tags", first)
        let check = ObjectContext(coordinator: coordinator)
        for photo in try check.fetch(FetchRequest(entityName: "Photo", sortKeys: [SortKey("uniqueName")])) {
            let name = try #require(try photo.get("uniqueName", as: String.self))
            #expect(try photo.relatedObjects(forKey: "tags").map { try $0.get("name", as: String.self)! }.sorted() == expected[name])
        }
        let t1 = try #require(try check.fetch(FetchRequest(entityName: "Tag", predicate: try FetchPredicate(format: "name == 't1'"))).first)
        #expect(try t1.relatedObjects(forKey: "photos").map { try $0.get("uniqueName", as: String.self)! }.sorted() == ["p1", "p3"])
        #expect(try check.count(FetchRequest(entityName: "Photo", predicate: try FetchPredicate(format: "ANY tags.name == 't1'"))) == 2)
        #expect(try check.count(FetchRequest(entityName: "Photo", predicate: try FetchPredicate(format: "tags.@count == 2"))) == 2)
        #expect(try check.count(FetchRequest(entityName: "Tag", predicate: try FetchPredicate(format: "photos.@count == 2"))) == 3)

        if backend == .sqlite, SQLite3.available, let path = coordinator.stores.first?.url?.path {
            // Photo(1).tags <<->> Tag(3).photos, exactly as Core Data names it.
            #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_1TAGS'")
                == "CREATE TABLE Z_1TAGS ( Z_1PHOTOS INTEGER, Z_3TAGS INTEGER, PRIMARY KEY (Z_1PHOTOS, Z_3TAGS) )")
            let pairs = try SQLite3.rows(path, """
                SELECT p.ZUNIQUENAME, t.ZNAME FROM Z_1TAGS j JOIN ZPHOTO p ON p.Z_PK = j.Z_1PHOTOS
                JOIN ZTAG t ON t.Z_PK = j.Z_3TAGS ORDER BY 1, 2
                """)
            let wanted = expected.keys.sorted().flatMap { p in expected[p]!.sorted().map { [p, $0] } }
            #expect(pairs == wanted)
        }
    }

    @Test(arguments: Backend.allCases)
    func coreStoreOrderedSelfReferenceRoundTrips(backend: Backend) throws {
        let model = try Self.coreStoreModel()
        let first = StoreCoordinator(model: model)
        try backend.add(to: first, configuration: "Config2", in: dir, name: "corestore")
        let context = ObjectContext(coordinator: first)
        func entity(_ label: String) throws -> ManagedObject {
            let object = try context.insert("TestEntity2")
            try object.set("testString", label)
            return object
        }
        let root = try entity("root")
        let children = try (0..<4).map { try entity("c\($0)") }
        let grandchild = try entity("g")
        try root.setRelatedObjects([children[3], children[1], children[0], children[2]], forKey: "testToManyOrdered")
        try children[1].setRelatedObjects([grandchild], forKey: "testToManyOrdered")
        try context.save()

        let coordinator = try reopen(backend, model, "Config2", name: "corestore", first)
        func labels(_ objects: [ManagedObject]) throws -> [String] { try objects.map { try $0.get("testString", as: String.self)! } }
        let check = ObjectContext(coordinator: coordinator)
        func object(_ label: String) throws -> ManagedObject {
            try #require(try check.fetch(FetchRequest(entityName: "TestEntity2", predicate: try FetchPredicate(format: "testString == %@", label))).first)
        }
        let reread = try object("root")
        #expect(try labels(reread.relatedObjects(forKey: "testToManyOrdered")) == ["c3", "c1", "c0", "c2"])
        #expect(try labels(object("c1").relatedObjects(forKey: "testToManyOrdered")) == ["g"])
        #expect(try object("g").relatedObject(forKey: "testToOne").map { try $0.get("testString", as: String.self) } == "c1")
        #expect(try check.count(FetchRequest(entityName: "TestEntity2", predicate: try FetchPredicate(format: "testToOne.testString == 'root'"))) == 4)
        #expect(try check.count(FetchRequest(entityName: "TestEntity2", predicate: try FetchPredicate(format: "testToManyOrdered.@count > 0"))) == 2)
        try reread.moveRelatedObject(from: 3, to: 0, forKey: "testToManyOrdered")
        try check.save()
        let again = ObjectContext(coordinator: coordinator)
        let root2 = try #require(try again.fetch(FetchRequest(entityName: "TestEntity2", predicate: try FetchPredicate(format: "testString == 'root'"))).first)
        #expect(try labels(root2.relatedObjects(forKey: "testToManyOrdered")) == ["c2", "c3", "c1", "c0"])

        if backend == .sqlite, SQLite3.available, let path = coordinator.stores.first?.url?.path {
            #expect(try SQLite3.query(path, """
                SELECT c.ZTESTSTRING FROM ZTESTENTITY2 c JOIN ZTESTENTITY2 p ON p.Z_PK = c.ZTESTTOONE
                WHERE p.ZTESTSTRING = 'root' ORDER BY c.Z_FOK_TESTTOONE
                """).split(separator: "\n") == ["c2", "c3", "c1", "c0"])
        }
    }
}

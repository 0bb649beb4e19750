import Foundation
import Testing
@testable import Switchyard

/// Every backend agrees on the order of ordered to-many members in the corner cases a review found them to
/// disagree on, and unordered lists read the same before and after a save.
@Suite struct RelationshipOrderConsistencyTests {
    let dir = TemporaryDirectory()

    /// "members left out keep no position and read after the others" (RelationshipOrder): SQLite keeps stale
    /// Z_FOK values for members left out of a later order.
    @Test(arguments: Backend.allCases, ["Album.tracks", "Playlist.songs"])
    func membersLeftOutOfAnOrderReadLast(backend: Backend, path: String) throws {
        let store = try backend.open(try RelationshipTestModel.make(), configuration: "Default", in: dir, name: "partial")
        let isAlbum = path.hasPrefix("Album")
        let (ownerEntity, memberEntity, rel) = isAlbum ? ("Album", "Track", "tracks") : ("Playlist", "Song", "songs")
        let owner = RowReference(entityName: ownerEntity, primaryKey: try store.allocatePrimaryKeys(for: ownerEntity, count: 1).lowerBound)
        let members = try store.allocatePrimaryKeys(for: memberEntity, count: 3).map { RowReference(entityName: memberEntity, primaryKey: $0) }
        try store.save(StoreChangeSet(
            inserts: [StoreRow(entityName: ownerEntity, primaryKey: owner.primaryKey)]
                + members.map { StoreRow(entityName: memberEntity, primaryKey: $0.primaryKey, toOne: isAlbum ? ["album": owner] : [:]) },
            linkInserts: isAlbum ? [] : members.map { RelationshipLink(source: owner, relationship: rel, destination: $0) },
            orders: [RelationshipOrder(source: owner, relationship: rel, members: members)]))
        try store.save(StoreChangeSet(orders: [RelationshipOrder(source: owner, relationship: rel, members: [members[2]])]))
        #expect(try store.relatedReferences(of: [owner], relationship: rel)[owner] == [members[2], members[0], members[1]])
    }

    /// A saved member of an ordered to-many moved to another owner through its to-one: LMDB and memory put it
    /// last in the new owner's list (no position there); SQLite reuses its old owner's Z_FOK.
    @Test(arguments: Backend.allCases)
    func memberMovedThroughItsToOneReadsLastInTheNewOwner(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: try RelationshipTestModel.make())
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: "move")
        let context = ObjectContext(coordinator: coordinator)
        func insert(_ entity: String, _ name: String) throws -> ManagedObject {
            let o = try context.insert(entity)
            try o.set("name", name)
            return o
        }
        let a = try insert("Album", "A"), b = try insert("Album", "B")
        let p = try insert("Track", "p"), q = try insert("Track", "q"), x = try insert("Track", "x"), y = try insert("Track", "y")
        try a.setRelatedObjects([y, x], forKey: "tracks")
        try b.setRelatedObjects([q, p], forKey: "tracks")
        try context.save()
        #expect(try b.relatedObjects(forKey: "tracks").map { try $0.get("name", as: String.self) } == ["q", "p"])

        let edit = ObjectContext(coordinator: coordinator)
        let albums = try edit.fetch(FetchRequest(entityName: "Album", sortKeys: [SortKey("name")]))
        let yy = try #require(try albums[0].relatedObjects(forKey: "tracks").first)
        try yy.setRelatedObject(albums[1], forKey: "album")
        #expect(try albums[1].relatedObjects(forKey: "tracks").map { try $0.get("name", as: String.self) } == ["q", "p", "y"])
        try edit.save()

        let check = ObjectContext(coordinator: coordinator)
        let b2 = try check.fetch(FetchRequest(entityName: "Album", sortKeys: [SortKey("name")]))[1]
        #expect(try b2.relatedObjects(forKey: "tracks").map { try $0.get("name", as: String.self) } == ["q", "p", "y"])
    }

    /// RowLayout(names:) accepts duplicates ("keep their first position"), but iteration/dictionary use the
    /// last, so equality (fast path by slots vs dictionary path) stops being transitive.
    /// relatedObjects documents "otherwise by primary key (unsaved members last)"; an unsaved many-to-many
    /// list comes back in assignment order instead, and changes order once saved.
    @Test(arguments: Backend.allCases)
    func unorderedManyToManyOrderIsStableAcrossSave(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: try RelationshipTestModel.make())
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: "m2m-order")
        let context = ObjectContext(coordinator: coordinator)
        let photo = try context.insert("Photo")
        let red = try context.insert("Tag"), blue = try context.insert("Tag")
        try red.set("name", "red")
        try blue.set("name", "blue")
        try context.save()
        try photo.setRelatedObjects([blue, red], forKey: "tags")
        let before = try photo.relatedObjects(forKey: "tags").map { try $0.get("name", as: String.self) }
        try context.save()
        let after = try photo.relatedObjects(forKey: "tags").map { try $0.get("name", as: String.self) }
        #expect(before == after)
    }
}

import Foundation
import Testing
@testable import Switchyard

/// Ordered to-many relationships — an ordered many-to-many (Playlist.songs) and an ordered to-many with a
/// to-one inverse (Album.tracks) — keep their order through save and a fresh context, on every backend.
@Suite struct OrderedRelationshipTests {
    let dir = TemporaryDirectory()

    private func coordinator(_ backend: Backend, name: String = "ordered") throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: try RelationshipTestModel.make())
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: name)
        return coordinator
    }

    private func one(_ context: ObjectContext, _ entity: String) throws -> ManagedObject {
        try #require(try context.fetch(FetchRequest(entityName: entity)).first)
    }

    /// The members of `key` of the only `entity` object, read in a new context.
    private func members(_ coordinator: StoreCoordinator, _ entity: String, _ key: String) throws -> [String] {
        // The context must outlive its objects' use: an object only holds it weakly.
        let context = ObjectContext(coordinator: coordinator)
        return try RelationshipTestModel.names(one(context, entity).relatedObjects(forKey: key))
    }

    @Test(arguments: Backend.allCases, ["Playlist.songs", "Album.tracks"])
    func orderSurvivesSaveAndRefetch(backend: Backend, path: String) throws {
        let (entity, key) = (String(path.split(separator: ".")[0]), String(path.split(separator: ".")[1]))
        let member = entity == "Playlist" ? "Song" : "Track"
        let coordinator = try coordinator(backend, name: entity)
        let context = ObjectContext(coordinator: coordinator)
        let owner = try RelationshipTestModel.insert(context, entity, ["o"])[0]
        let items = try RelationshipTestModel.insert(context, member, ["a", "b", "c", "d"])
        // Not primary-key order, so only stored positions can bring it back.
        try owner.setRelatedObjects([items[2], items[0], items[3], items[1]], forKey: key)
        #expect(try RelationshipTestModel.names(owner.relatedObjects(forKey: key)) == ["c", "a", "d", "b"])
        try context.save()
        #expect(try RelationshipTestModel.names(owner.relatedObjects(forKey: key)) == ["c", "a", "d", "b"])
        #expect(try members(coordinator, entity, key) == ["c", "a", "d", "b"])

        // Reorder in a new context: move, insert at a position, remove.
        let edit = ObjectContext(coordinator: coordinator)
        let o = try one(edit, entity)
        try o.moveRelatedObject(from: 0, to: 3, forKey: key)
        #expect(try RelationshipTestModel.names(o.relatedObjects(forKey: key)) == ["a", "d", "b", "c"])
        let e = try RelationshipTestModel.insert(edit, member, ["e"])[0]
        try o.insertRelatedObject(e, at: 1, forKey: key)
        let d = try o.relatedObjects(forKey: key)[2]
        try o.removeRelatedObject(d, forKey: key)
        #expect(try RelationshipTestModel.names(o.relatedObjects(forKey: key)) == ["a", "e", "b", "c"])
        try edit.save()
        #expect(try members(coordinator, entity, key) == ["a", "e", "b", "c"])

        // Out-of-range positions are refused, and a move changes nothing else.
        let bad = ObjectContext(coordinator: coordinator)
        #expect(throws: ContextError.self) { try one(bad, entity).moveRelatedObject(from: 0, to: 9, forKey: key) }
        #expect(throws: ContextError.self) { try one(bad, entity).insertRelatedObject(e, at: -1, forKey: key) }
    }

    @Test(arguments: Backend.allCases)
    func aMemberJoiningThroughItsToOneGoesLast(backend: Backend) throws {
        let coordinator = try coordinator(backend)
        let context = ObjectContext(coordinator: coordinator)
        let album = try RelationshipTestModel.insert(context, "Album", ["o"])[0]
        let tracks = try RelationshipTestModel.insert(context, "Track", ["x", "y"])
        try album.setRelatedObjects([tracks[1], tracks[0]], forKey: "tracks")
        try context.save()
        let later = ObjectContext(coordinator: coordinator)
        let z = try RelationshipTestModel.insert(later, "Track", ["z"])[0]
        try z.setRelatedObject(try one(later, "Album"), forKey: "album")
        try later.save()
        #expect(try members(coordinator, "Album", "tracks") == ["y", "x", "z"])
        // Moving a track to another album takes it out of this one's order.
        let move = ObjectContext(coordinator: coordinator)
        let other = try RelationshipTestModel.insert(move, "Album", ["p"])[0]
        let y = try #require(try one(move, "Album").relatedObjects(forKey: "tracks").first)
        try y.setRelatedObject(other, forKey: "album")
        try move.save()
        let check = ObjectContext(coordinator: coordinator)
        let albums = try check.fetch(FetchRequest(entityName: "Album", sortKeys: [SortKey("name")]))
        #expect(try RelationshipTestModel.names(albums[0].relatedObjects(forKey: "tracks")) == ["x", "z"])
        #expect(try RelationshipTestModel.names(albums[1].relatedObjects(forKey: "tracks")) == ["y"])
    }

    /// Re-pointing a saved member's to-one moves it between the owners' lists at once, and after the save,
    /// in the same context (the members each owner read before are not reused).
    @Test(arguments: Backend.allCases)
    func membersFollowTheirToOneInTheSameContext(backend: Backend) throws {
        let coordinator = try coordinator(backend, name: "follow")
        let context = ObjectContext(coordinator: coordinator)
        let albums = try RelationshipTestModel.insert(context, "Album", ["a", "b"])
        let tracks = try RelationshipTestModel.insert(context, "Track", ["x", "y"])
        try albums[0].setRelatedObjects(tracks, forKey: "tracks")
        try context.save()
        #expect(try RelationshipTestModel.names(albums[0].relatedObjects(forKey: "tracks")) == ["x", "y"])
        #expect(try albums[1].relatedObjects(forKey: "tracks").isEmpty)
        try tracks[0].setRelatedObject(albums[1], forKey: "album")
        #expect(try RelationshipTestModel.names(albums[0].relatedObjects(forKey: "tracks")) == ["y"])
        #expect(try RelationshipTestModel.names(albums[1].relatedObjects(forKey: "tracks")) == ["x"])
        try context.save()
        #expect(try RelationshipTestModel.names(albums[0].relatedObjects(forKey: "tracks")) == ["y"])
        #expect(try RelationshipTestModel.names(albums[1].relatedObjects(forKey: "tracks")) == ["x"])
        try context.delete(tracks[1])
        #expect(try albums[0].relatedObjects(forKey: "tracks").isEmpty)
        try context.save()
        #expect(try albums[0].relatedObjects(forKey: "tracks").isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func theOtherSideOfAnOrderedManyToManyFollows(backend: Backend) throws {
        let coordinator = try coordinator(backend)
        let context = ObjectContext(coordinator: coordinator)
        let lists = try RelationshipTestModel.insert(context, "Playlist", ["l1", "l2"])
        let songs = try RelationshipTestModel.insert(context, "Song", ["s1", "s2"])
        try lists[0].setRelatedObjects([songs[1], songs[0]], forKey: "songs")
        // Adding from the song's (unordered) side appends to the playlist's order.
        try songs[0].addRelatedObject(lists[1], forKey: "playlists")
        try songs[1].addRelatedObject(lists[1], forKey: "playlists")
        #expect(try RelationshipTestModel.names(lists[1].relatedObjects(forKey: "songs")) == ["s1", "s2"])
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        let fetched = try check.fetch(FetchRequest(entityName: "Playlist", sortKeys: [SortKey("name")]))
        #expect(try RelationshipTestModel.names(fetched[0].relatedObjects(forKey: "songs")) == ["s2", "s1"])
        #expect(try RelationshipTestModel.names(fetched[1].relatedObjects(forKey: "songs")) == ["s1", "s2"])
        let s1 = try #require(try check.fetch(FetchRequest(entityName: "Song", predicate: try FetchPredicate(format: "name == 's1'"))).first)
        #expect(try RelationshipTestModel.names(s1.relatedObjects(forKey: "playlists")).sorted() == ["l1", "l2"])
        // Predicates see ordered relationships like any to-many.
        let request = FetchRequest(entityName: "Playlist", predicate: try FetchPredicate(format: "ANY songs.name == 's2' AND songs.@count == 2"))
        #expect(try check.count(request) == 2)
        #expect(try check.count(FetchRequest(entityName: "Song", predicate: try FetchPredicate(format: "playlists.@count == 2"))) == 2)
    }

    /// Core Data's columns, checked with the sqlite3 CLI: the join table of an ordered many-to-many has a
    /// `Z_FOK_` column, and an ordered to-many's members keep their position in `Z_FOK_<INVERSE>`.
    @Test(.enabled(if: SQLite3.available)) func sqliteFileLayout() throws {
        let coordinator = try coordinator(.sqlite, name: "layout")
        let path = try #require(coordinator.stores.first?.url?.path)
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_2TAGS'")
            == "CREATE TABLE Z_2TAGS ( Z_2PHOTOS INTEGER, Z_5TAGS INTEGER, PRIMARY KEY (Z_2PHOTOS, Z_5TAGS) )")
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_3SONGS'")
            == "CREATE TABLE Z_3SONGS ( Z_3PLAYLISTS INTEGER, Z_4SONGS INTEGER, Z_FOK_4SONGS INTEGER, PRIMARY KEY (Z_3PLAYLISTS, Z_4SONGS) )")
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_3SONGS_Z_4SONGS_INDEX'")
            == "CREATE INDEX Z_3SONGS_Z_4SONGS_INDEX ON Z_3SONGS (Z_4SONGS, Z_3PLAYLISTS)")
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'ZTRACK'")
            == "CREATE TABLE ZTRACK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZALBUM INTEGER, Z_FOK_ALBUM INTEGER, ZNAME VARCHAR )")

        let context = ObjectContext(coordinator: coordinator)
        let list = try RelationshipTestModel.insert(context, "Playlist", ["l"])[0]
        let songs = try RelationshipTestModel.insert(context, "Song", ["a", "b", "c"])
        try list.setRelatedObjects([songs[2], songs[0], songs[1]], forKey: "songs")
        let album = try RelationshipTestModel.insert(context, "Album", ["o"])[0]
        let tracks = try RelationshipTestModel.insert(context, "Track", ["x", "y"])
        try album.setRelatedObjects([tracks[1], tracks[0]], forKey: "tracks")
        try context.save()
        #expect(try SQLite3.query(path, """
            SELECT s.ZNAME FROM Z_3SONGS j JOIN ZSONG s ON s.Z_PK = j.Z_4SONGS JOIN ZPLAYLIST p ON p.Z_PK = j.Z_3PLAYLISTS
            WHERE p.ZNAME = 'l' ORDER BY j.Z_FOK_4SONGS
            """).split(separator: "\n") == ["c", "a", "b"])
        #expect(try SQLite3.query(path, "SELECT ZNAME FROM ZTRACK ORDER BY Z_FOK_ALBUM").split(separator: "\n") == ["y", "x"])
    }

    /// At the store boundary: orders set positions for both kinds of ordered to-many, members without a
    /// position read last by primary key, and an order on an unordered relationship is refused.
    @Test(arguments: Backend.allCases)
    func storesKeepOrders(backend: Backend) throws {
        let store = try backend.open(try RelationshipTestModel.make(), configuration: "Default", in: dir, name: "store-orders")
        let album = RowReference(entityName: "Album", primaryKey: try store.allocatePrimaryKeys(for: "Album", count: 1).lowerBound)
        let list = RowReference(entityName: "Playlist", primaryKey: try store.allocatePrimaryKeys(for: "Playlist", count: 1).lowerBound)
        let t = try store.allocatePrimaryKeys(for: "Track", count: 3)
        let s = try store.allocatePrimaryKeys(for: "Song", count: 3)
        let tracks = t.map { RowReference(entityName: "Track", primaryKey: $0) }
        let songs = s.map { RowReference(entityName: "Song", primaryKey: $0) }
        try store.save(StoreChangeSet(
            inserts: [StoreRow(entityName: "Album", primaryKey: album.primaryKey), StoreRow(entityName: "Playlist", primaryKey: list.primaryKey)]
                + tracks.map { StoreRow(entityName: "Track", primaryKey: $0.primaryKey, toOne: ["album": album]) }
                + songs.map { StoreRow(entityName: "Song", primaryKey: $0.primaryKey) },
            linkInserts: songs.map { RelationshipLink(source: list, relationship: "songs", destination: $0) },
            orders: [
                RelationshipOrder(source: album, relationship: "tracks", members: [tracks[2], tracks[0]]),
                RelationshipOrder(source: list, relationship: "songs", members: [songs[1], songs[2], songs[0]]),
            ]))
        #expect(try store.relatedReferences(of: [album], relationship: "tracks") == [album: [tracks[2], tracks[0], tracks[1]]])
        #expect(try store.relatedReferences(of: [list], relationship: "songs") == [list: [songs[1], songs[2], songs[0]]])
        // The unordered side reads by primary key.
        #expect(try store.relatedReferences(of: [songs[0]], relationship: "playlists") == [songs[0]: [list]])
        #expect(throws: StoreError.self) {
            try store.save(StoreChangeSet(orders: [RelationshipOrder(source: songs[0], relationship: "playlists", members: [list])]))
        }
        #expect(throws: StoreError.self) { try store.relatedReferences(of: [album], relationship: "name") }
    }

    /// An existing store's join table is found even where Core Data added a numeric suffix to a column; a
    /// store that lacks the join table the model needs is a schema mismatch that names it.
    @Test(.enabled(if: SQLite3.available)) func existingJoinTablesAreResolved() throws {
        let model = try RelationshipTestModel.make()
        let pair = try #require(model.manyToManyEnds(of: "songs", from: "Playlist"))
        let expected = SQLiteJoinTable.expected(first: pair.first, second: pair.second, numbers: [:], model: model)
        let found = try #require(expected.resolved(in: ["Z_3SONGS": ["Z_3PLAYLISTS1", "Z_4SONGS", "Z_FOK_4SONGS"]]))
        #expect(found.firstColumn == "Z_3PLAYLISTS1")
        #expect(found.secondColumn == "Z_4SONGS")
        #expect(found.firstOrderColumn == "Z_FOK_4SONGS")
        #expect(expected.resolved(in: ["Z_3SONGS": ["Z_3PLAYLISTS", "Z_9OTHER"]]) == nil)

        let url = dir.file("missing-join.sqlite")
        _ = try SQLiteStore(url: url, model: model, configuration: "Default")
        try SQLite3.execute(url.path, "DROP TABLE Z_2TAGS")
        #expect {
            _ = try SQLiteStore(url: url, model: model, configuration: "Default")
        } throws: { error in
            guard case StoreError.schemaMismatch(_, _, let reason)? = error as? StoreError else { return false }
            return reason.contains("Z_2TAGS") && reason.contains("Photo.tags")
        }
    }
}

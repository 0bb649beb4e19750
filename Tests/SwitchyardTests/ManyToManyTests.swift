import Foundation
import Testing
@testable import Switchyard

/// Photo <<->> Tag (many-to-many), Playlist <<->> Song (ordered many-to-many), Album 1->> Track (ordered
/// to-many with a to-one inverse). Entity numbers: Album 1, Photo 2, Playlist 3, Song 4, Tag 5, Track 6.
enum RelationshipTestModel {
    /// Inserts one `entity` per name, with its `name` attribute set.
    static func insert(_ context: ObjectContext, _ entity: String, _ names: [String]) throws -> [ManagedObject] {
        try names.map { n in
            let object = try context.insert(entity)
            try object.set("name", n)
            return object
        }
    }

    /// The `name` of each object ("?" where unset).
    static func names(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.get("name", as: String.self) ?? "?" }
    }

    static func make(tagRule: DeleteRule = .nullify, maxTags: Int = 0) throws -> ObjectModel {
        let name = [AttributeDescription(name: "name", type: .string)]
        return try ObjectModel(entities: [
            EntityDescription(name: "Photo", attributes: name, relationships: [
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "photos", isToMany: true, maxCount: maxTags, deleteRule: tagRule),
            ]),
            EntityDescription(name: "Tag", attributes: name, relationships: [
                RelationshipDescription(name: "photos", destination: "Photo", inverse: "tags", isToMany: true),
            ]),
            EntityDescription(name: "Playlist", attributes: name, relationships: [
                RelationshipDescription(name: "songs", destination: "Song", inverse: "playlists", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Song", attributes: name, relationships: [
                RelationshipDescription(name: "playlists", destination: "Playlist", inverse: "songs", isToMany: true),
            ]),
            EntityDescription(name: "Album", attributes: name, relationships: [
                RelationshipDescription(name: "tracks", destination: "Track", inverse: "album", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Track", attributes: name, relationships: [
                RelationshipDescription(name: "album", destination: "Album", inverse: "tracks"),
            ]),
        ])
    }
}

/// Many-to-many relationships through the context, on every backend.
@Suite struct ManyToManyTests {
    let dir = TemporaryDirectory()

    private func coordinator(_ backend: Backend, _ model: ObjectModel, name: String = "m2m") throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: name)
        return coordinator
    }

    private func object(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        try #require(try context.fetch(FetchRequest(entityName: entity, predicate: try FetchPredicate(format: "name == %@", name))).first)
    }

    /// p1 {red, blue}, p2 {blue}, p3 {}; tags red, blue, green.
    private func populate(_ coordinator: StoreCoordinator) throws {
        let context = ObjectContext(coordinator: coordinator)
        let photos = try RelationshipTestModel.insert(context, "Photo", ["p1", "p2", "p3"])
        let tags = try RelationshipTestModel.insert(context, "Tag", ["red", "blue", "green"])
        try photos[0].addRelatedObject(tags[0], forKey: "tags")
        // From the other side: the photo's list follows before any save.
        try tags[1].addRelatedObject(photos[0], forKey: "photos")
        try tags[1].addRelatedObject(photos[1], forKey: "photos")
        #expect(try RelationshipTestModel.names(photos[0].relatedObjects(forKey: "tags")) == ["red", "blue"])
        #expect(try RelationshipTestModel.names(photos[1].relatedObjects(forKey: "tags")) == ["blue"])
        try context.save()
    }

    private func tagNames(_ coordinator: StoreCoordinator, _ photo: String) throws -> [String] {
        let context = ObjectContext(coordinator: coordinator)
        return try RelationshipTestModel.names(object(context, "Photo", photo).relatedObjects(forKey: "tags")).sorted()
    }

    @Test(arguments: Backend.allCases)
    func linksAddedFromBothSidesSurviveASave(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make())
        try populate(coordinator)
        #expect(try tagNames(coordinator, "p1") == ["blue", "red"])
        #expect(try tagNames(coordinator, "p2") == ["blue"])
        #expect(try tagNames(coordinator, "p3") == [])
        let context = ObjectContext(coordinator: coordinator)
        #expect(try RelationshipTestModel.names(object(context, "Tag", "blue").relatedObjects(forKey: "photos")).sorted() == ["p1", "p2"])
        #expect(try object(context, "Tag", "green").relatedObjects(forKey: "photos").isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func removingFromOneSideUpdatesTheOther(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make())
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        let blue = try object(context, "Tag", "blue")
        let p1 = try object(context, "Photo", "p1")
        try blue.removeRelatedObject(p1, forKey: "photos")
        #expect(try RelationshipTestModel.names(p1.relatedObjects(forKey: "tags")) == ["red"])
        #expect(p1.hasChanges && blue.hasChanges)
        try context.save()
        #expect(try tagNames(coordinator, "p1") == ["red"])
        #expect(try tagNames(coordinator, "p2") == ["blue"])
        // Replacing the whole list from the photo's side.
        let again = ObjectContext(coordinator: coordinator)
        let p2 = try object(again, "Photo", "p2")
        try p2.setRelatedObjects([try object(again, "Tag", "green"), try object(again, "Tag", "red")], forKey: "tags")
        #expect(try RelationshipTestModel.names(object(again, "Tag", "blue").relatedObjects(forKey: "photos")) == [])
        try again.save()
        #expect(try tagNames(coordinator, "p2") == ["green", "red"])
        let check = ObjectContext(coordinator: coordinator)
        #expect(try RelationshipTestModel.names(object(check, "Tag", "red").relatedObjects(forKey: "photos")).sorted() == ["p1", "p2"])
    }

    @Test(arguments: Backend.allCases)
    func rollbackForgetsUnsavedLinks(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make())
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        let p3 = try object(context, "Photo", "p3")
        try p3.addRelatedObject(try object(context, "Tag", "green"), forKey: "tags")
        context.rollback()
        #expect(try p3.relatedObjects(forKey: "tags").isEmpty)
        try context.save()
        #expect(try tagNames(coordinator, "p3") == [])
    }

    // MARK: - Delete rules

    @Test(arguments: Backend.allCases)
    func nullifyRemovesTheLinksOfADeletedObject(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make())
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        let blue = try object(context, "Tag", "blue")
        let p1 = try object(context, "Photo", "p1")
        _ = try p1.relatedObjects(forKey: "tags")
        try context.delete(blue)
        try context.save()
        #expect(try RelationshipTestModel.names(p1.relatedObjects(forKey: "tags")) == ["red"])
        #expect(try tagNames(coordinator, "p1") == ["red"])
        #expect(try tagNames(coordinator, "p2") == [])
        if backend == .sqlite, let path = coordinator.stores.first?.url?.path {
            #expect(try SQLite3.query(path, "SELECT count(*) FROM Z_2TAGS") == "1")
        }
    }

    @Test(arguments: Backend.allCases)
    func cascadeDeletesTheLinkedObjects(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make(tagRule: .cascade))
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        try context.delete(try object(context, "Photo", "p1"))
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        #expect(try RelationshipTestModel.names(check.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")]))) == ["green"])
        #expect(try tagNames(coordinator, "p2") == [])
    }

    @Test(arguments: Backend.allCases)
    func denyRefusesWhileLinksRemain(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make(tagRule: .deny))
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        let p1 = try object(context, "Photo", "p1")
        try context.delete(p1)
        #expect {
            try context.save()
        } throws: { error in
            guard case ContextError.deleteDenied(entity: "Photo", key: "tags", _, count: 2)? = error as? ContextError else { return false }
            return true
        }
        context.rollback()
        try p1.setRelatedObjects([], forKey: "tags")
        try context.save()
        try context.delete(p1)
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Photo")) == 2)
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Tag")) == 3)
    }

    @Test(arguments: Backend.allCases)
    func maximumCountIsValidated(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make(maxTags: 2))
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        try object(context, "Photo", "p1").addRelatedObject(try object(context, "Tag", "green"), forKey: "tags")
        #expect {
            try context.save()
        } throws: { error in
            guard case ContextError.relationshipCount(entity: "Photo", key: "tags", count: 3, min: 0, max: 2, _)? = error as? ContextError
            else { return false }
            return true
        }
        #expect(try tagNames(coordinator, "p1") == ["blue", "red"])
    }

    // MARK: - Predicates

    static let photoFormats: [(String, [String])] = [
        ("tags.@count == 2", ["p1"]), ("tags.@count == 0", ["p3"]), ("tags.@count > 0", ["p1", "p2"]),
        ("ANY tags.name == 'red'", ["p1"]), ("ANY tags.name == 'blue'", ["p1", "p2"]),
        ("ALL tags.name == 'blue'", ["p2", "p3"]), ("NONE tags.name == 'red'", ["p2", "p3"]),
        ("tags.name CONTAINS 'blue'", ["p1", "p2"]), ("ANY tags.name BEGINSWITH[c] 'R'", ["p1"]),
    ]
    static let tagFormats: [(String, [String])] = [
        ("photos.@count == 2", ["blue"]), ("photos.@count == 0", ["green"]), ("ANY photos.name == 'p2'", ["blue"]),
        ("NONE photos.name == 'p1'", ["green"]),
    ]

    @Test(arguments: Backend.allCases)
    func predicatesOverManyToManyAgreeOnEveryBackend(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make())
        try populate(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        for (entity, cases) in [("Photo", Self.photoFormats), ("Tag", Self.tagFormats)] {
            for (format, expected) in cases {
                let request = FetchRequest(entityName: entity, predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")])
                // Through the store (SQL, memory walk, LMDB links)...
                #expect(try RelationshipTestModel.names(context.fetch(request)) == expected, "\(backend) \(entity): \(format)")
                #expect(try context.count(request) == expected.count, "\(backend) \(entity): \(format)")
                // ...and with unsaved changes, through the context's own evaluation.
                let pending = ObjectContext(coordinator: coordinator)
                _ = try pending.insert("Song")
                let objects = try pending.fetch(FetchRequest(entityName: entity, sortKeys: [SortKey("name")]))
                let evaluated = try objects.filter { try PredicateEvaluator.evaluate(request.predicate!, on: $0) }
                #expect(try RelationshipTestModel.names(evaluated) == expected, "\(backend) \(entity) in context: \(format)")
            }
        }
    }

    /// Walking a fetched list reads members in one store call, not one per object (both kinds of to-many).
    @Test(arguments: Backend.allCases)
    func membersOfAFetchedListAreReadInOneBatch(backend: Backend) throws {
        let coordinator = try coordinator(backend, RelationshipTestModel.make(), name: "batch-context")
        let setup = ObjectContext(coordinator: coordinator)
        let tags = try RelationshipTestModel.insert(setup, "Tag", ["a", "b"])
        let albums = try RelationshipTestModel.insert(setup, "Album", (0..<40).map { "album\($0)" })
        for (i, photo) in try RelationshipTestModel.insert(setup, "Photo", (0..<40).map { "p\($0)" }).enumerated() {
            try photo.setRelatedObjects(i % 2 == 0 ? tags : [tags[1]], forKey: "tags")
            let track = try setup.insert("Track")
            try track.setRelatedObject(albums[i], forKey: "album")
        }
        try setup.save()
        let context = ObjectContext(coordinator: coordinator)
        var links = 0
        for photo in try context.fetch(FetchRequest(entityName: "Photo")) { links += try photo.relatedObjects(forKey: "tags").count }
        #expect(links == 60)
        #expect(context.memberReads == 1)
        var tracks = 0
        for album in try context.fetch(FetchRequest(entityName: "Album")) { tracks += try album.relatedObjects(forKey: "tracks").count }
        #expect(tracks == 40)
        #expect(context.memberReads == 2)
    }

    /// A relationship that is its own inverse (Person.friends <<->> Person.friends): either person lists the
    /// other, and removing the link from one side removes it for both.
    @Test(arguments: Backend.allCases)
    func aRelationshipThatIsItsOwnInverse(backend: Backend) throws {
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "friends", destination: "Person", inverse: "friends", isToMany: true),
            ]),
        ])
        let coordinator = try coordinator(backend, model, name: "friends")
        let context = ObjectContext(coordinator: coordinator)
        let people = try RelationshipTestModel.insert(context, "Person", ["ann", "bob", "cy"])
        try people[0].setRelatedObjects([people[1], people[2]], forKey: "friends")
        #expect(try RelationshipTestModel.names(people[1].relatedObjects(forKey: "friends")) == ["ann"])
        try context.save()
        func friends(_ name: String) throws -> [String] {
            let check = ObjectContext(coordinator: coordinator)
            return try RelationshipTestModel.names(object(check, "Person", name).relatedObjects(forKey: "friends")).sorted()
        }
        #expect(try friends("ann") == ["bob", "cy"])
        #expect(try friends("bob") == ["ann"])
        let edit = ObjectContext(coordinator: coordinator)
        try object(edit, "Person", "cy").removeRelatedObject(try object(edit, "Person", "ann"), forKey: "friends")
        try edit.save()
        #expect(try friends("ann") == ["bob"])
        #expect(try friends("cy") == [])
        let query = ObjectContext(coordinator: coordinator)
        #expect(try RelationshipTestModel.names(query.fetch(FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "ANY friends.name == 'ann'")))) == ["bob"])
        if backend == .sqlite, let path = coordinator.stores.first?.url?.path {
            #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_1FRIENDS'")
                == "CREATE TABLE Z_1FRIENDS ( Z_1FRIENDS INTEGER, Z_1FRIENDS1 INTEGER, PRIMARY KEY (Z_1FRIENDS, Z_1FRIENDS1) )")
        }
    }

    // MARK: - Store level

    @Test(arguments: Backend.allCases)
    func storeReadsMembersInBatches(backend: Backend) throws {
        let model = try RelationshipTestModel.make()
        let store = try backend.open(model, configuration: "Default", in: dir, name: "batch")
        let photos = try store.allocatePrimaryKeys(for: "Photo", count: 3)
        let tags = try store.allocatePrimaryKeys(for: "Tag", count: 2)
        func photo(_ i: Int64) -> RowReference { RowReference(entityName: "Photo", primaryKey: photos.lowerBound + i) }
        func tag(_ i: Int64) -> RowReference { RowReference(entityName: "Tag", primaryKey: tags.lowerBound + i) }
        try store.save(StoreChangeSet(
            inserts: (0..<3).map { StoreRow(entityName: "Photo", primaryKey: photo($0).primaryKey) }
                + (0..<2).map { StoreRow(entityName: "Tag", primaryKey: tag($0).primaryKey) },
            linkInserts: [
                RelationshipLink(source: photo(0), relationship: "tags", destination: tag(0)),
                RelationshipLink(source: photo(0), relationship: "tags", destination: tag(1)),
                // The same link named from the other end is kept once.
                RelationshipLink(source: tag(1), relationship: "photos", destination: photo(0)),
                RelationshipLink(source: tag(1), relationship: "photos", destination: photo(2)),
            ]))
        let members = try store.relatedReferences(of: [photo(0), photo(1), photo(2)], relationship: "tags")
        #expect(members == [photo(0): [tag(0), tag(1)], photo(1): [], photo(2): [tag(1)]])
        #expect(try store.relatedReferences(of: [tag(1)], relationship: "photos") == [tag(1): [photo(0), photo(2)]])
        try store.save(StoreChangeSet(linkDeletes: [RelationshipLink(source: tag(0), relationship: "photos", destination: photo(0))]))
        #expect(try store.relatedReferences(of: [photo(0)], relationship: "tags") == [photo(0): [tag(1)]])
        // Deleting a row drops its links on both ends.
        try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Tag", primaryKey: tag(1).primaryKey, expectedVersion: 1)]))
        #expect(try store.relatedReferences(of: [photo(0), photo(2)], relationship: "tags") == [photo(0): [], photo(2): []])
        // A relationship that is not many-to-many cannot hold links.
        #expect(throws: StoreError.self) {
            try store.save(StoreChangeSet(linkInserts: [RelationshipLink(source: photo(0), relationship: "name", destination: photo(1))]))
        }
    }
}

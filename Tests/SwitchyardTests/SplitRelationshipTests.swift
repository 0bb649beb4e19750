import Foundation
import Testing
@testable import Switchyard
import SwitchyardPostgreSQL

/// A legacy store with every kind of to-many — Photo.tags <<->> Tag.photos, Playlist.songs <<->> Song.playlists
/// (ordered from both sides), Album.tracks (ordered, to-one inverse), Person.friends (its own inverse) — split
/// along a target model that renames Tag to Label and Photo.tags to labels and adds Label before Person, so
/// every entity number, join table and join column differs between source and outputs.
enum SplitRelationshipModel {
    static func legacy() throws -> ObjectModel {
        let name = [AttributeDescription(name: "name", type: .string)]
        return try ObjectModel(entities: [
            EntityDescription(name: "Album", attributes: name, relationships: [
                RelationshipDescription(name: "tracks", destination: "Track", inverse: "album", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Person", attributes: name, relationships: [
                RelationshipDescription(name: "friends", destination: "Person", inverse: "friends", isToMany: true),
            ]),
            EntityDescription(name: "Photo", attributes: name, relationships: [
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "photos", isToMany: true),
            ]),
            EntityDescription(name: "Playlist", attributes: name, relationships: [
                RelationshipDescription(name: "songs", destination: "Song", inverse: "playlists", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Song", attributes: name, relationships: [
                RelationshipDescription(name: "playlists", destination: "Playlist", inverse: "songs", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Tag", attributes: name, relationships: [
                RelationshipDescription(name: "photos", destination: "Photo", inverse: "tags", isToMany: true),
            ]),
            EntityDescription(name: "Track", attributes: name, relationships: [
                RelationshipDescription(name: "album", destination: "Album", inverse: "tracks"),
            ]),
        ])
    }

    /// Configurations Media (Album, Track, Label, Photo, Person) and Music (Playlist, Song).
    static func target() throws -> ObjectModel {
        let name = [AttributeDescription(name: "name", type: .string)]
        return try ObjectModel(
            entities: [
                EntityDescription(name: "Album", attributes: name, relationships: [
                    RelationshipDescription(name: "tracks", destination: "Track", inverse: "album", isToMany: true, isOrdered: true),
                ]),
                EntityDescription(name: "Label", attributes: name, relationships: [
                    RelationshipDescription(name: "photos", destination: "Photo", inverse: "labels", isToMany: true),
                ], renamingIdentifier: "Tag"),
                EntityDescription(name: "Person", attributes: name, relationships: [
                    RelationshipDescription(name: "friends", destination: "Person", inverse: "friends", isToMany: true),
                ]),
                EntityDescription(name: "Photo", attributes: name, relationships: [
                    RelationshipDescription(
                        name: "labels", destination: "Label", inverse: "photos", isToMany: true, renamingIdentifier: "tags"),
                ]),
                EntityDescription(name: "Playlist", attributes: name, relationships: [
                    RelationshipDescription(name: "songs", destination: "Song", inverse: "playlists", isToMany: true, isOrdered: true),
                ]),
                EntityDescription(name: "Song", attributes: name, relationships: [
                    RelationshipDescription(name: "playlists", destination: "Playlist", inverse: "songs", isToMany: true, isOrdered: true),
                ]),
                EntityDescription(name: "Track", attributes: name, relationships: [
                    RelationshipDescription(name: "album", destination: "Album", inverse: "tracks"),
                ]),
            ],
            configurations: [
                ConfigurationDescription(name: "Media", entityNames: ["Album", "Track", "Label", "Photo", "Person"]),
                ConfigurationDescription(name: "Music", entityNames: ["Playlist", "Song"]),
            ])
    }

    /// The source: 120 photos with 0-4 of 12 tags, 15 playlists of up to 9 of 40 songs in scrambled orders (and
    /// each song's playlists in another order), 8 albums of 0-7 tracks in reverse order, 30 people with friends.
    @discardableResult
    static func make(_ type: StoreType, at url: URL) throws -> any PersistentStore {
        let model = try legacy()
        let store: any PersistentStore = type == .lmdb
            ? try LMDBStore(url: url, model: model, configuration: "Default")
            : try SQLiteStore(url: url, model: model, configuration: "Default")
        var rows: [StoreRow] = []
        func objects(_ entity: String, _ n: Int) throws -> [RowReference] {
            let keys = Array(try store.allocatePrimaryKeys(for: entity, count: n))
            for (i, pk) in keys.enumerated() {
                rows.append(StoreRow(entityName: entity, primaryKey: pk, values: ["name": .string("\(entity.lowercased())\(i)")]))
            }
            return keys.map { RowReference(entityName: entity, primaryKey: $0) }
        }
        let photos = try objects("Photo", 120), tags = try objects("Tag", 12)
        let playlists = try objects("Playlist", 15), songs = try objects("Song", 40)
        let people = try objects("Person", 30), albums = try objects("Album", 8)
        var links: [RelationshipLink] = []
        var orders: [RelationshipOrder] = []
        for (i, photo) in photos.enumerated() {
            for j in 0..<(i % 5) { links.append(RelationshipLink(source: photo, relationship: "tags", destination: tags[(i * 7 + j * 5) % 12])) }
        }
        var playlistsOfSong: [RowReference: [RowReference]] = [:]
        for (i, playlist) in playlists.enumerated() {
            let members = (0..<(i % 10)).map { songs[(i * 11 + $0 * 17) % 40] }
            links += members.map { RelationshipLink(source: playlist, relationship: "songs", destination: $0) }
            orders.append(RelationshipOrder(source: playlist, relationship: "songs", members: members))
            for song in members { playlistsOfSong[song, default: []].append(playlist) }
        }
        for (song, lists) in playlistsOfSong {
            orders.append(RelationshipOrder(source: song, relationship: "playlists", members: lists.reversed()))
        }
        for (i, person) in people.enumerated() where i % 3 != 0 {
            links.append(RelationshipLink(source: person, relationship: "friends", destination: people[(i + 1) % 30]))
        }
        var trackKeys = try store.allocatePrimaryKeys(for: "Track", count: 28).makeIterator()
        for (i, album) in albums.enumerated() {
            var tracks: [RowReference] = []
            for t in 0..<(i % 8) {
                let pk = trackKeys.next()!
                rows.append(StoreRow(
                    entityName: "Track", primaryKey: pk, values: ["name": .string("track\(i)-\(t)")], toOne: ["album": album]))
                tracks.append(RowReference(entityName: "Track", primaryKey: pk))
            }
            orders.append(RelationshipOrder(source: album, relationship: "tracks", members: tracks.reversed()))
        }
        try store.save(StoreChangeSet(inserts: rows, linkInserts: links, orders: orders))
        return store
    }

    /// Every object's members through `relationship`, by name, in the order the context returns them
    /// (sorted for an unordered relationship).
    static func members(
        _ coordinator: StoreCoordinator, _ entity: String, _ relationship: String, ordered: Bool
    ) throws -> [String: [String]] {
        let context = ObjectContext(coordinator: coordinator)
        var result: [String: [String]] = [:]
        for object in try context.fetch(FetchRequest(entityName: entity)) {
            let names = try object.relatedObjects(forKey: relationship).map { try $0.get("name", as: String.self) ?? "?" }
            result[try object.get("name", as: String.self) ?? "?"] = ordered ? names : names.sorted()
        }
        return result
    }
}

@Suite struct SplitRelationshipTests {
    static let pairs: [(StoreType, StoreType)] = [(.sqlite, .sqlite), (.sqlite, .lmdb), (.lmdb, .sqlite), (.lmdb, .lmdb)]
        + (TestServer.isSkipped ? [] : [(.sqlite, .postgreSQL), (.lmdb, .postgreSQL)])

    private func destinations(_ type: StoreType, in temp: TemporaryDirectory) throws -> [SplitDestination] {
        if type == .postgreSQL {
            StoreCoordinator.registerPostgreSQL()
            return [
                SplitDestination(configuration: "Media", url: try temp.postgresURL("media"), type: type),
                SplitDestination(configuration: "Music", url: try temp.postgresURL("music"), type: type),
            ]
        }
        let ext = type == .lmdb ? "lmdb" : "sqlite"
        return [
            SplitDestination(configuration: "Media", url: temp.file("Media.\(ext)"), type: type),
            SplitDestination(configuration: "Music", url: temp.file("Music.\(ext)"), type: type),
        ]
    }

    /// (entity, relationship) in the source model and in the target model, and whether order counts.
    static let relationships = [
        ("Photo", "tags", "Photo", "labels", false), ("Tag", "photos", "Label", "photos", false),
        ("Playlist", "songs", "Playlist", "songs", true), ("Song", "playlists", "Song", "playlists", true),
        ("Album", "tracks", "Album", "tracks", true), ("Person", "friends", "Person", "friends", false),
    ]

    @Test(arguments: pairs)
    func splitKeepsManyToManyLinksAndOrders(sourceType: StoreType, outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = temp.file(sourceType == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try SplitRelationshipModel.make(sourceType, at: url)
        let before = try LegacyMessenger.fingerprint(url)
        let legacy = StoreCoordinator(model: try SplitRelationshipModel.legacy())
        try legacy.addStore(sourceType, configuration: "Default", at: url, options: .readOnly)

        let target = try SplitRelationshipModel.target()
        let destinations = try destinations(outputType, in: temp)
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        let plan = try splitter.plan()
        #expect(plan.warnings.isEmpty, "\(plan.warnings)")
        #expect(plan.links.map { "\($0.entity).\($0.relationship) \($0.kind.rawValue) \($0.ordered) \($0.inverseOrdered) \($0.configuration)" } == [
            "Album.tracks order true false Media", "Label.photos manyToMany false false Media",
            "Person.friends manyToMany false false Media", "Playlist.songs manyToMany true true Music",
        ])
        let report = try splitter.run(plan, options: SplitOptions(batchSize: 7, verifyContent: true))
        #expect(report.contentVerified)
        let links = Dictionary(uniqueKeysWithValues: report.outputs.flatMap(\.links).map { ("\($0.entity).\($0.relationship)", $0) })
        // 120 photos with i % 5 tags; 15 playlists with i % 10 songs; 28 positioned tracks; 20 friendships kept both ways.
        #expect(links["Label.photos"]?.links == 240)
        #expect(links["Playlist.songs"]?.links == 55)
        #expect(links["Album.tracks"]?.links == 28)
        #expect(links["Person.friends"]?.links == 40)
        #expect(links.values.allSatisfy { $0.checksum != nil })
        #expect(try LegacyMessenger.fingerprint(url) == before, "the source must not change")

        let split = StoreCoordinator(model: target)
        for d in destinations { try split.addStore(d.type, configuration: d.configuration, at: d.url) }
        for (sourceEntity, sourceKey, targetEntity, targetKey, ordered) in Self.relationships {
            let expected = try SplitRelationshipModel.members(legacy, sourceEntity, sourceKey, ordered: ordered)
            let actual = try SplitRelationshipModel.members(split, targetEntity, targetKey, ordered: ordered)
            #expect(expected.values.contains { $0.count > 1 }, "\(sourceEntity).\(sourceKey) has members to compare")
            // Names of renamed entities keep their source spelling ("tag3"): the rows are copied, not rewritten.
            #expect(actual == expected, "\(targetEntity).\(targetKey)")
        }
        // New objects continue the copied keys and link like any other.
        let context = ObjectContext(coordinator: split)
        let photo = try context.insert("Photo")
        try photo.set("name", "new")
        try photo.setRelatedObjects(try context.fetch(FetchRequest(entityName: "Label", fetchLimit: 2)), forKey: "labels")
        try context.save()
        #expect(try SplitRelationshipModel.members(split, "Photo", "labels", ordered: false)["new"]?.count == 2)
    }

    @Test func sqliteOutputsUseTheTargetModelsJoinTables() throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.sqlite")
        try SplitRelationshipModel.make(.sqlite, at: url)
        let destinations = try destinations(.sqlite, in: temp)
        let splitter = try StoreSplitter(source: url, targetModel: try SplitRelationshipModel.target(), destinations: destinations)
        _ = try splitter.run(try splitter.plan())
        guard SQLite3.available else { return }
        // Source: Photo(3).tags <<->> Tag(6).photos in Z_3TAGS; target: Label(2).photos <<->> Photo(4).labels in Z_2PHOTOS.
        #expect(try SQLite3.query(url.path, "SELECT COUNT(*) FROM Z_3TAGS") == "240")
        let media = destinations[0].url.path, music = destinations[1].url.path
        #expect(try SQLite3.query(media, "SELECT COUNT(*) FROM Z_2PHOTOS") == "240")
        #expect(try SQLite3.query(media, "SELECT COUNT(*) FROM Z_2PHOTOS j JOIN ZLABEL l ON l.Z_PK = j.Z_2LABELS JOIN ZPHOTO p ON p.Z_PK = j.Z_4PHOTOS") == "240")
        #expect(try SQLite3.query(music, "SELECT COUNT(*) FROM Z_5SONGS WHERE Z_FOK_6SONGS IS NULL OR Z_FOK_5PLAYLISTS IS NULL") == "0")
        #expect(try SQLite3.query(media, "SELECT COUNT(*) FROM ZTRACK WHERE Z_FOK_ALBUM IS NOT NULL") == "28")
    }

    @Test(arguments: [StoreType.sqlite, .lmdb])
    func verificationCatchesATamperedLinkOrPosition(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.sqlite")
        try SplitRelationshipModel.make(.sqlite, at: url)
        let target = try SplitRelationshipModel.target()
        let destinations = try destinations(outputType, in: temp)
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        let plan = try splitter.plan()
        _ = try splitter.run(plan)
        for d in destinations { try FileManager.default.moveItem(at: d.url, to: d.temporaryURL) }
        var results = plan.entities.map { StoreSplitter.CopyResult(rows: $0.rowCount, checksum: nil) }
        var links = plan.links.map { _ in StoreSplitter.LinkResult() }
        try splitter.verify(plan, results: &results, links: &links, content: true, batchSize: 50)

        func open(_ index: Int) throws -> any PersistentStore {
            outputType == .lmdb
                ? try LMDBStore(url: destinations[index].temporaryURL, model: target, configuration: destinations[index].configuration)
                : try SQLiteStore(url: destinations[index].temporaryURL, model: target, configuration: destinations[index].configuration)
        }
        // One photo loses a label and gains another: row counts and the number of links stay the same.
        do {
            let media = try open(0)
            let photo = try #require(try media.fetch(StoreFetchRequest(entityName: "Photo", predicate: try FetchPredicate(format: "name == 'photo1'"))).first)
            let labels = try #require(try media.relatedReferences(of: [photo.reference], relationship: "labels")[photo.reference])
            let all = try media.fetch(StoreFetchRequest(entityName: "Label")).map(\.reference)
            let other = try #require(all.first { !labels.contains($0) })
            try media.save(StoreChangeSet(
                linkInserts: [RelationshipLink(source: photo.reference, relationship: "labels", destination: other)],
                linkDeletes: [RelationshipLink(source: photo.reference, relationship: "labels", destination: labels[0])]))
            try (media as? BulkCopyStore)?.closeFiles()
        }
        // One playlist's first two songs swap places.
        do {
            let music = try open(1)
            let list = try #require(try music.fetch(StoreFetchRequest(entityName: "Playlist", predicate: try FetchPredicate(format: "name == 'playlist5'"))).first)
            var songs = try #require(try music.relatedReferences(of: [list.reference], relationship: "songs")[list.reference])
            songs.swapAt(0, 1)
            try music.save(StoreChangeSet(orders: [RelationshipOrder(source: list.reference, relationship: "songs", members: songs)]))
            try (music as? BulkCopyStore)?.closeFiles()
        }
        links = plan.links.map { _ in StoreSplitter.LinkResult() }
        try splitter.verify(plan, results: &results, links: &links, content: false, batchSize: 50)
        do {
            try splitter.verify(plan, results: &results, links: &links, content: true, batchSize: 50)
            Issue.record("verification should fail")
        } catch let error as SplitError {
            #expect(error.step == "verify")
            #expect(error.reason.contains("Label.photos in Media: 240 links"))
            #expect(error.reason.contains("Playlist.songs in Music: 55 links"))
            #expect(!error.reason.contains("Album.tracks"))
            #expect(!error.reason.contains("rows"), "row checksums still match: \(error.reason)")
        }
    }

    @Test func crossingManyToManyIsAPlanningErrorSayingWhatToDeclare() throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.sqlite")
        try SplitRelationshipModel.make(.sqlite, at: url)
        let target = try SplitRelationshipModel.target()
        // Labels in their own store, the relationship dropped from both ends.
        let entities = target.entities.map { entity -> EntityDescription in
            var e = entity
            if e.name == "Photo" || e.name == "Label" { e.relationships = [] }
            return e
        }
        let split = try ObjectModel(entities: entities, configurations: [
            ConfigurationDescription(name: "Media", entityNames: ["Album", "Track", "Photo", "Person", "Playlist", "Song"]),
            ConfigurationDescription(name: "Labels", entityNames: ["Label"]),
        ])
        let splitter = try StoreSplitter(source: url, targetModel: split, destinations: [
            SplitDestination(configuration: "Media", url: temp.file("Media.sqlite"), type: .sqlite),
            SplitDestination(configuration: "Labels", url: temp.file("Labels.sqlite"), type: .sqlite),
        ])
        do {
            _ = try splitter.plan()
            Issue.record("planning should fail")
        } catch let error as SplitError {
            #expect(error.step == "plan")
            #expect(error.reason.contains("many-to-many Photo.tags crosses from configuration Media to Labels"))
            #expect(error.reason.contains("declare a join entity in one configuration"))
        }
    }

    @Test func orderDroppedByTheTargetModelIsAWarning() throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.lmdb")
        try SplitRelationshipModel.make(.lmdb, at: url)
        let target = try SplitRelationshipModel.target()
        let entities = target.entities.map { entity -> EntityDescription in
            var e = entity
            e.relationships = e.relationships.map { r in
                var r = r
                if e.name == "Song" { r.isOrdered = false }
                return r
            }
            return e
        }
        let model = try ObjectModel(entities: entities, configurations: target.configurations)
        let splitter = try StoreSplitter(source: url, targetModel: model, destinations: destinations(.sqlite, in: temp))
        let plan = try splitter.plan()
        #expect(plan.warnings == ["ordered to-many Song.playlists is unordered in the target model: its members are copied, their order is not"])
        #expect(plan.links.first { $0.relationship == "songs" }.map { "\($0.ordered) \($0.inverseOrdered)" } == "true false")
        let report = try splitter.run(plan, options: SplitOptions(verifyContent: true))
        #expect(report.warnings == plan.warnings)
    }

    /// The SQLite join-row copy in batches much smaller than the table: every link arrives once.
    @Test func sqliteLinkCopyInSmallBatches() throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.sqlite")
        let source = try #require(SplitRelationshipModel.make(.sqlite, at: url) as? SQLiteStore)
        let target = try SplitRelationshipModel.target()
        let destinations = try destinations(.sqlite, in: temp)
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        let plan = try splitter.plan()
        let output = try SQLiteStore(url: temp.file("Batched.sqlite"), model: target, configuration: "Media")
        let legacy = try SQLiteStore(url: url, model: try SplitRelationshipModel.legacy(), configuration: "Default", options: .readOnly)
        for (copy, mapping) in zip(plan.entities, plan.mappings) where copy.configuration == "Media" {
            _ = try output.copyRows(StoreSplitter.bulkSpec(mapping, plan: plan), from: legacy, batchSize: 5, progress: { _ in })
        }
        for (link, mapping) in zip(plan.links, plan.linkMappings) where link.configuration == "Media" {
            let spec = BulkLinkCopySpec(
                targetEnd: mapping.target, sourceEnd: mapping.source, targetInverse: mapping.targetInverse,
                sourceInverse: mapping.sourceInverse, ordered: link.ordered, inverseOrdered: link.inverseOrdered)
            let copied = try output.copyLinks(spec, from: legacy, batchSize: 3)
            #expect(copied == ["Label": 240, "Person": 40, "Album": 28][link.entity], "\(link.entity).\(link.relationship)")
        }
        let photos = try output.fetch(StoreFetchRequest(entityName: "Photo")).map(\.reference)
        let members = try output.relatedReferences(of: photos, relationship: "labels")
        let old = try source.relatedReferences(of: photos.map { RowReference(entityName: "Photo", primaryKey: $0.primaryKey) }, relationship: "tags")
        for photo in photos {
            #expect(members[photo]?.map(\.primaryKey) == old[RowReference(entityName: "Photo", primaryKey: photo.primaryKey)]?.map(\.primaryKey))
        }
    }
}

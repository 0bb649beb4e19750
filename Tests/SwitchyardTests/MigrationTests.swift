import Foundation
import Testing
@testable import Switchyard

/// In-place lightweight migration: one test per inferable change kind, on SQLite, LMDB and PostgreSQL; the
/// memory backend starts empty on every open, so it has nothing to migrate.
@Suite struct MigrationTests {
    static let backends: [Backend] = [.sqlite, .lmdb] + (TestServer.isSkipped ? [] : [.postgresql])
    let dir = TemporaryDirectory()

    /// Populates version 1, reopens with `model` and returns the migrated store.
    private func migrate(_ backend: Backend, to model: ObjectModel, progress: MigrationProgressHandler? = nil) throws -> any PersistentStore {
        let url = backend.url(in: dir, name: "m")!
        try MigrationFixtures.populate(backend, url: url)
        return try MigrationFixtures.open(backend, url: url, model: model, progress: progress)
    }

    /// Reopens the same file once more with `model` (a migrated store must open on the fast path, unchanged).
    private func reopen(_ backend: Backend, _ model: ObjectModel) throws -> any PersistentStore {
        try MigrationFixtures.open(backend, url: backend.url(in: dir, name: "m")!, model: model)
    }

    @Test(arguments: backends) func addAttributeWithDefaultFillsExistingRows(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            e["Item"]!.attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: .integer(7)))
            e["Item"]!.attributes.append(AttributeDescription(name: "extra", type: .string))
        }
        let events = Locked<[MigrationProgress]>([])
        let store = try migrate(backend, to: v2) { p in events.withLock { $0.append(p) } }
        let items = try MigrationFixtures.rows(store, "Item")
        #expect(items.count == MigrationFixtures.items)
        #expect(items.values.allSatisfy { $0["rank"] == .integer(7) && $0["extra"] == .null })
        #expect(items[4]?["note"] == .string("n4"))
        if backend == .lmdb {
            // The new position reads the default through the stored layout: no row is rewritten (O(1)).
            #expect(!events.withLock { $0 }.contains { $0.entity == "Item" })
        } else {
            let path = backend == .postgresql ? try #require(events.withLock { $0 }.last?.path) : store.url!.path
            #expect(backend != .postgresql || path.contains("schema=") && !path.contains("password"))
            #expect(events.withLock { $0 }.last == MigrationProgress(path: path, entity: "Item", done: 30, total: 30))
        }
        if backend == .sqlite {
            // One entity per table: the column's DEFAULT gives old rows the value, O(1) whatever the row count.
            #expect(try SQLite3.query(store.url!.path, "SELECT dflt_value FROM pragma_table_info('ZITEM') WHERE name = 'ZRANK'") == "7")
        }
        if backend == .postgresql {
            // The same on PostgreSQL: a constant DEFAULT in the catalog, no row rewritten.
            #expect(try MigrationFixtures.postgresValues(store.url!, "SELECT column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'ZITEM' AND column_name = 'ZRANK'") == ["7"])
        }
        #expect(try store.metadata().versionHashes == v2.versionHashes)
        #expect(try store.storedModel() == v2)
        // New rows get the attribute like any other.
        let key = try store.allocatePrimaryKeys(for: "Item", count: 1).lowerBound
        #expect(key == 31)
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Item", primaryKey: key, values: ["rank": .integer(1)])]))
        #expect(try store.count(StoreFetchRequest(entityName: "Item", predicate: FetchPredicate(format: "rank == 7"))) == 30)
    }

    @Test(arguments: backends) func removeAttributeKeepsTheRest(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in e["Item"]!.attributes.removeAll { $0.name == "note" } }
        let store = try migrate(backend, to: v2)
        let items = try MigrationFixtures.rows(store, "Item")
        #expect(items.count == 30)
        #expect(items[5]?["title"] == .string("t5") && items[5]?["count"] == .integer(5))
        #expect(items.values.allSatisfy { $0.values["note"] == nil })
        // Adding it back later does not resurrect the dropped values.
        let v3 = try MigrationFixtures.model()
        let again = try reopen(backend, v3)
        #expect(try MigrationFixtures.rows(again, "Item").values.allSatisfy { $0["note"] == .null })
    }

    @Test(arguments: backends) func renameAttributeThroughRenamingIdentifier(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            let i = e["Item"]!.attributes.firstIndex { $0.name == "title" }!
            e["Item"]!.attributes[i].name = "heading"
            e["Item"]!.attributes[i].renamingIdentifier = "title"
        }
        let store = try migrate(backend, to: v2)
        let items = try MigrationFixtures.rows(store, "Item")
        #expect((1...30).allSatisfy { items[Int64($0)]?["heading"] == .string("t\($0)") })
        // The rename is permanent: a model without the renaming identifier opens the migrated store.
        let v3 = try MigrationFixtures.model { e in
            let i = e["Item"]!.attributes.firstIndex { $0.name == "title" }!
            e["Item"]!.attributes[i].name = "heading"
        }
        #expect(try MigrationFixtures.rows(reopen(backend, v3), "Item")[3]?["heading"] == .string("t3"))
    }

    @Test(arguments: backends) func addEntity(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            e["Badge"] = EntityDescription(name: "Badge", attributes: [AttributeDescription(name: "code", type: .string)])
        }
        let store = try migrate(backend, to: v2)
        #expect(try MigrationFixtures.rows(store, "Item").count == 30)
        #expect(try MigrationFixtures.rows(store, "Tag")[2]?["label"] == .string("l2"))
        let key = try store.allocatePrimaryKeys(for: "Badge", count: 1).lowerBound
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Badge", primaryKey: key, values: ["code": "b"])]))
        #expect(try MigrationFixtures.rows(reopen(backend, v2), "Badge")[key]?["code"] == .string("b"))
    }

    @Test(arguments: backends) func removeEntity(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in e["Tag"] = nil }
        let store = try migrate(backend, to: v2)
        #expect(try MigrationFixtures.rows(store, "Item").count == 30)
        #expect(try MigrationFixtures.rows(store, "Owner").count == 3)
        // Adding it back gives an empty entity, not the old rows.
        #expect(try MigrationFixtures.rows(reopen(backend, try MigrationFixtures.model()), "Tag").isEmpty)
    }

    @Test(arguments: backends) func renameEntityThroughRenamingIdentifier(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            var label = e.removeValue(forKey: "Tag")!
            label.name = "Label"
            label.renamingIdentifier = "Tag"
            e["Label"] = label
        }
        let store = try migrate(backend, to: v2)
        let labels = try MigrationFixtures.rows(store, "Label")
        #expect(labels.count == 4 && labels[4]?["label"] == .string("l4"))
        let v3 = try MigrationFixtures.model { e in
            var label = e.removeValue(forKey: "Tag")!
            label.name = "Label"
            e["Label"] = label
        }
        #expect(try MigrationFixtures.rows(reopen(backend, v3), "Label").count == 4)
    }

    @Test(arguments: backends) func optionalBecomesRequiredWithDefault(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            let i = e["Item"]!.attributes.firstIndex { $0.name == "note" }!
            e["Item"]!.attributes[i].isOptional = false
            e["Item"]!.attributes[i].defaultValue = "none"
        }
        let items = try MigrationFixtures.rows(migrate(backend, to: v2), "Item")
        #expect(items[3]?["note"] == .string("none"))
        #expect(items[4]?["note"] == .string("n4"))
    }

    @Test(arguments: backends) func addAndRemoveToOneRelationship(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            e["Item"]!.relationships.append(RelationshipDescription(name: "tag", destination: "Tag"))
            e["Item"]!.relationships.removeAll { $0.name == "owner" }
            e["Owner"]!.relationships.removeAll()
        }
        let store = try migrate(backend, to: v2)
        let items = try MigrationFixtures.rows(store, "Item")
        #expect(items.count == 30 && items.values.allSatisfy { $0.toOne.isEmpty })
        try store.save(StoreChangeSet(updates: [RowUpdate(
            entityName: "Item", primaryKey: 1, expectedVersion: 1, values: [:], toOne: ["tag": RowReference(entityName: "Tag", primaryKey: 2)])]))
        #expect(try MigrationFixtures.rows(store, "Item")[1]?.toOne["tag"] == RowReference(entityName: "Tag", primaryKey: 2))
    }

    @Test(arguments: backends) func toManyBecomesToOneFilledFromTheInverse(backend: Backend) throws {
        // Owner.items (to-many) becomes Owner.firstItem (to-one): the item pointing at the owner fills it.
        let v2 = try MigrationFixtures.model { e in
            e["Owner"]!.relationships = [RelationshipDescription(name: "items", destination: "Item", inverse: "owner")]
        }
        let owners = try MigrationFixtures.rows(migrate(backend, to: v2), "Owner")
        // Item i points at owner i % 3 + 1: owner 1's lowest item is 3, owner 2's is 1, owner 3's is 2.
        #expect(owners[1]?.toOne["items"]?.primaryKey == 3)
        #expect(owners[2]?.toOne["items"]?.primaryKey == 1)
        #expect(owners[3]?.toOne["items"]?.primaryKey == 2)
    }

    @Test(arguments: backends) func toOneBecomesToManyKeepsTheInverseSide(backend: Backend) throws {
        // Item.owner (to-one) becomes to-many; Owner.items becomes a to-one (filled from the old Item.owner).
        let v2 = try MigrationFixtures.model { e in
            e["Item"]!.relationships = [RelationshipDescription(name: "owner", destination: "Owner", inverse: "items", isToMany: true)]
            e["Owner"]!.relationships = [RelationshipDescription(name: "items", destination: "Item", inverse: "owner")]
        }
        let report = ModelDiff.compare(from: try MigrationFixtures.model(), to: v2, configuration: "Default")
        #expect(report.verdict == .migratable)
        let store = try migrate(backend, to: v2)
        #expect(try MigrationFixtures.rows(store, "Item").values.allSatisfy { $0.toOne.isEmpty })
        #expect(try MigrationFixtures.rows(store, "Item").count == 30)
    }

    @Test(arguments: backends) func incompatibleChangeLeavesTheStoreUntouched(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            let i = e["Item"]!.attributes.firstIndex { $0.name == "count" }!
            e["Item"]!.attributes[i].type = .string
        }
        let url = backend.url(in: dir, name: "m")!
        try MigrationFixtures.populate(backend, url: url)
        let before = MigrationFixtures.snapshot(url)
        #expect {
            _ = try MigrationFixtures.open(backend, url: url, model: v2)
        } throws: { error in
            guard case StoreError.incompatibleModel(_, "Default", let report)? = error as? StoreError else { return false }
            return report.verdict == .incompatible && report.blockingReasons.contains { $0.contains("Item.count") }
                && "\(error)".contains("Integer 64 -> String")
        }
        #expect(MigrationFixtures.snapshot(url) == before)
        #expect(try MigrationFixtures.rows(MigrationFixtures.open(backend, url: url, model: MigrationFixtures.model()), "Item").count == 30)
    }

    @Test(arguments: backends) func hashOnlyDifferenceOpensWithoutWriting(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in e["Tag"]!.versionHashModifier = "2" }
        let url = backend.url(in: dir, name: "m")!
        try MigrationFixtures.populate(backend, url: url)
        let before = MigrationFixtures.snapshot(url)
        let store = try MigrationFixtures.open(backend, url: url, model: v2)
        #expect(try MigrationFixtures.rows(store, "Tag").count == 4)
        #expect(try store.metadata().versionHashes != v2.versionHashes)
        #expect(MigrationFixtures.snapshot(url)["data.mdb"] == before["data.mdb"])
        #expect(MigrationFixtures.snapshot(url)["schema"] == before["schema"])
    }
}

extension MigrationTests {
    /// A migration that fails half-way (entity renamed, one entity's rows rewritten, then a default that does
    /// not fit its attribute) rolls back whole: the store opens with its old model, every row as it was.
    @Test(arguments: backends) func aMigrationFailingHalfWayLeavesTheOldStore(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            // Indexed, so LMDB writes it into every row (an unindexed one is read through the layout instead).
            e["Item"]!.attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: 1, isIndexed: true))
            e["Tag"]!.attributes.append(AttributeDescription(name: "weight", type: .integer16, isOptional: false, defaultValue: "heavy"))
            var person = e.removeValue(forKey: "Owner")!
            person.name = "Person"
            person.renamingIdentifier = "Owner"
            e["Person"] = person
            e["Item"]!.relationships[0].destinationEntityName = "Person"
        }
        let url = backend.url(in: dir, name: "m")!
        try MigrationFixtures.populate(backend, url: url)
        let v1 = try MigrationFixtures.model()
        var before: [String: [Int64: StoreRow]] = [:]
        do {
            let store = try MigrationFixtures.open(backend, url: url, model: v1)
            for entity in ["Owner", "Item", "Tag"] { before[entity] = try MigrationFixtures.rows(store, entity) }
        }
        let events = Locked<[MigrationProgress]>([])
        #expect {
            _ = try MigrationFixtures.open(backend, url: url, model: v2) { e in events.withLock { $0.append(e) } }
        } throws: { error in
            guard case StoreError.invalidValue(_, _, "Tag", "weight", _, _)? = error as? StoreError else { return false }
            return true
        }
        // Item's rows were rewritten before Tag failed.
        #expect(events.withLock { $0 }.contains { $0.entity == "Item" && $0.done == MigrationFixtures.items })
        let store = try MigrationFixtures.open(backend, url: url, model: v1)
        #expect(try store.storedModel() == v1)
        for entity in ["Owner", "Item", "Tag"] {
            #expect(try MigrationFixtures.rows(store, entity) == before[entity], "\(entity)")
        }
    }
}

extension MigrationTests {
    /// A removed subentity takes its rows and their index entries along: the remaining entity's uniqueness
    /// constraint and indexed lookups no longer see them.
    @Test(arguments: backends) func removedSubentityLeavesNoIndexEntries(backend: Backend) throws {
        func model(withSpecial: Bool) throws -> ObjectModel {
            var entities = [EntityDescription(
                name: "Item", attributes: [AttributeDescription(name: "code", type: .string, isIndexed: true)],
                uniquenessConstraints: [["code"]])]
            if withSpecial { entities.append(EntityDescription(name: "Special", parent: "Item")) }
            return try ObjectModel(entities: entities)
        }
        let url = backend.url(in: dir, name: "tree")!
        do {
            let store = try MigrationFixtures.open(backend, url: url, model: try model(withSpecial: true))
            _ = try store.allocatePrimaryKeys(for: "Item", count: 2)
            try store.save(StoreChangeSet(inserts: [
                StoreRow(entityName: "Item", primaryKey: 1, values: ["code": "a"]),
                StoreRow(entityName: "Special", primaryKey: 2, values: ["code": "b"]),
            ]))
        }
        let store = try MigrationFixtures.open(backend, url: url, model: try model(withSpecial: false))
        #expect(try MigrationFixtures.rows(store, "Item").keys.sorted() == [1])
        let key = try store.allocatePrimaryKeys(for: "Item", count: 1).lowerBound
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Item", primaryKey: key, values: ["code": "b"])]))
        #expect(try MigrationFixtures.count(store, "Item", "code == 'b'") == 1)
        if let lmdb = store as? LMDBStore {
            // Every index holds exactly the two live rows' entries.
            let counts = try lmdb.environment.read { txn in
                try lmdb.databases.indexes(root: lmdb.schema.numbers["Item"]!).map { try txn.entryCount($0!) }
            }
            #expect(!counts.isEmpty && counts.allSatisfy { $0 == 2 }, "\(counts)")
        }
    }
}

extension MigrationTests {
    /// Two opens racing to migrate the same store: one migrates, the other finds it done; both open. (Five
    /// rounds per backend: the race is in the timing.)
    @Test(arguments: (0..<5).flatMap { _ in backends }) func concurrentOpensMigrateOnce(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            let i = e["Item"]!.attributes.firstIndex { $0.name == "note" }!
            e["Item"]!.attributes[i] = AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: "-")
        }
        let url = backend.url(in: dir, name: "m")!
        try MigrationFixtures.populate(backend, url: url)
        let results = Locked<[Result<Int, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let result = Result { try MigrationFixtures.count(MigrationFixtures.open(backend, url: url, model: v2), "Item", "note == '-'") }
            results.withLock { $0.append(result) }
        }
        #expect(try results.withLock { $0 }.map { try $0.get() } == [15, 15])
    }
}

extension MigrationTests {
    @Test(arguments: backends) func renameRelationshipThroughRenamingIdentifier(backend: Backend) throws {
        let v2 = try MigrationFixtures.model { e in
            e["Item"]!.relationships = [RelationshipDescription(name: "holder", destination: "Owner", inverse: "items", renamingIdentifier: "owner")]
            e["Owner"]!.relationships = [RelationshipDescription(name: "items", destination: "Item", inverse: "holder", isToMany: true)]
        }
        let store = try migrate(backend, to: v2)
        let items = try MigrationFixtures.rows(store, "Item")
        #expect((1...30).allSatisfy { items[Int64($0)]?.toOne["holder"]?.primaryKey == Int64($0 % 3 + 1) })
        // Lookups through the relationship's key (an index on LMDB) find the renamed links.
        #expect(try store.count(StoreFetchRequest(entityName: "Item", predicate: FetchPredicate(format: "holder == 2"))) == 10)
    }
}

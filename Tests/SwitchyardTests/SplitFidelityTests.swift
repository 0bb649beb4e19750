import Foundation
import Testing
@testable import Switchyard
import SwitchyardPostgreSQL

/// Issue #12: what a split keeps exactly — `Z_OPT`, `Z_PK`, `Z_MAX` — for every source/destination pair, on real
/// Core Data stores and on stores Switchyard writes; split outputs are valid split sources.
@Suite struct SplitFidelityTests {
    static let xcServer201 = "richardpiazza__XCServerCoreData/Tests/XCServerCoreData_2.0.1.sqlite"
    static let xcServer201Model =
        "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.1.xcdatamodel"

    /// Copies a fixture store with its sidecars into `temp` (fixtures are opened read-only, but never in place).
    static func copyFixture(_ relative: String, into temp: TemporaryDirectory) throws -> URL {
        let source = Fixtures.url(relative).path
        let url = temp.file((relative as NSString).lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: url.path + suffix)
        }
        return url
    }

    /// The output backends: SQLite, LMDB, and PostgreSQL unless `SWITCHYARD_SKIP_POSTGRES=1`.
    static let outputTypes: [StoreType] = [.sqlite, .lmdb] + (TestServer.isSkipped ? [] : [.postgreSQL])

    /// Where an output of `type` named `name` goes: a file in `temp`, or a schema of the test server.
    static func outputURL(_ type: StoreType, _ name: String, in temp: TemporaryDirectory) throws -> URL {
        switch type {
        case .postgreSQL:
            StoreCoordinator.registerPostgreSQL()
            return try temp.postgresURL(name)
        case .lmdb: return temp.file("\(name).lmdb")
        default: return temp.file("\(name).sqlite")
        }
    }

    /// Every row of every entity of `store`, by entity and primary key: its `Z_OPT`.
    static func versions(_ store: any PersistentStore) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for entity in store.entities where !entity.isAbstract {
            for row in try store.fetch(StoreFetchRequest(entityName: entity.name, includesSubentities: false)) {
                result["\(entity.name)/p\(row.primaryKey)"] = row.version
            }
        }
        return result
    }

    /// XCServerCoreData 2.0.1 holds 599 rows with `Z_OPT` > 1 (counted with sqlite3 over its Z tables). Every
    /// one keeps its version in an SQLite and in an LMDB output; `--verify` (content checksums, which include
    /// the version) passes. Before the fix, LMDB wrote every inserted row with version 1.
    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: Self.outputTypes)
    func coreDataVersionsSurviveASplit(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = try Self.copyFixture(Self.xcServer201, into: temp)
        let model = try ModelLoader.load(at: Fixtures.url(Self.xcServer201Model))
        let output = SplitDestination(
            configuration: "Default", url: try Self.outputURL(outputType, "Out", in: temp), type: outputType)
        let splitter = try StoreSplitter(source: url, targetModel: model, destinations: [output])
        let report = try splitter.run(try splitter.plan(), options: SplitOptions(batchSize: 50, verifyContent: true))
        #expect(report.contentVerified)

        let (source, _) = try StoreSplitter.openReadOnly(url, model: model)
        let (copy, _) = try StoreSplitter.openReadOnly(output.url, model: model)
        let before = try Self.versions(source), after = try Self.versions(copy)
        #expect(before.values.filter { $0 > 1 }.count == 599)
        #expect(after == before)
        #expect(try (copy as! BulkCopyStore).primaryKeyMaxima().filter { $0.value > 0 }
            == (try (source as! BulkCopyStore).primaryKeyMaxima()).filter { $0.value > 0 })

        // The output as a source in turn, into both backends: every pair keeps the versions.
        for againType in [StoreType.sqlite, .lmdb] {
            let again = SplitDestination(
                configuration: "Default", url: temp.file("Again-\(againType.rawValue).\(againType == .lmdb ? "lmdb" : "sqlite")"),
                type: againType)
            let resplit = try StoreSplitter(source: output.url, targetModel: model, destinations: [again])
            _ = try resplit.run(try resplit.plan(), options: SplitOptions(batchSize: 64, verifyContent: true))
            let (twice, _) = try StoreSplitter.openReadOnly(again.url, model: model)
            #expect(try Self.versions(twice) == before, "\(outputType) -> \(againType)")
        }
    }

    /// A row inserted with a version keeps it on every backend (the bulk copies insert rows read elsewhere).
    @Test(arguments: Backend.allCases)
    func insertedRowsKeepTheirVersion(backend: Backend) throws {
        let temp = TemporaryDirectory()
        let model = try LegacyMessenger.targetModel()
        let store = try backend.open(model, configuration: "Local", in: temp)
        let keys = try store.allocatePrimaryKeys(for: "Setting", count: 2)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Setting", primaryKey: keys.lowerBound, version: 7, values: ["key": .string("a")]),
            StoreRow(entityName: "Setting", primaryKey: keys.upperBound, values: ["key": .string("b")]),
        ]))
        let rows = try store.fetch(StoreFetchRequest(entityName: "Setting", sortKeys: [SortKey("key")]))
        #expect(rows.map(\.version) == [7, 1])
        // Optimistic locking continues from the kept version.
        try store.save(StoreChangeSet(updates: [
            RowUpdate(entityName: "Setting", primaryKey: keys.lowerBound, expectedVersion: 7, values: ["key": .string("c")])
        ]))
        #expect(try store.fetch(StoreFetchRequest(entityName: "Setting", sortKeys: [SortKey("key")])).map(\.version) == [1, 8])
    }

    /// Any store Switchyard writes is a valid split source: each output of a split (SQLite and LMDB), which
    /// holds one configuration's entities and records the whole model, splits again with `--verify`.
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func splitOutputsSplitAgain(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url)
        let target = try LegacyMessenger.targetModel()
        let first = LegacyMessenger.destinations(in: temp.url)
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: first)
        _ = try splitter.run(try splitter.plan(), options: SplitOptions(verifyContent: true))
        let expected = LegacyMessenger.counts(messages: 60)
        let again = temp.url.appendingPathComponent("again", isDirectory: true)
        try FileManager.default.createDirectory(at: again, withIntermediateDirectories: true)
        for destination in first {
            let ext = outputType == .lmdb ? "lmdb" : "sqlite"
            let output = SplitDestination(
                configuration: destination.configuration,
                url: again.appendingPathComponent("\(destination.configuration).\(ext)"), type: outputType)
            let resplit = try StoreSplitter(source: destination.url, targetModel: target, destinations: [output])
            let plan = try resplit.plan()
            let entities = try target.entities(inConfiguration: destination.configuration).map(\.name)
            #expect(Set(plan.entities.map(\.targetEntity)) == Set(entities), "\(destination.configuration)")
            let report = try resplit.run(plan, options: SplitOptions(batchSize: 11, verifyContent: true))
            #expect(report.contentVerified)
            #expect(report.rowsCopied == entities.map { expected[$0] ?? 0 }.reduce(0, +), "\(destination.configuration)")
            let (before, _) = try StoreSplitter.openReadOnly(destination.url, model: target)
            let (after, _) = try StoreSplitter.openReadOnly(output.url, model: target)
            #expect(try Self.versions(after) == (try Self.versions(before)))
        }
    }

    /// A store whose `Z_MAX` lies below its keys (hand-edited: Chat's set to 0 though chats go up to 6): the plan
    /// warns, the output's `Z_MAX` is the largest key, the report says it was raised, and the next object
    /// gets a new key. A `Z_MAX` above the keys (Message: 7 keys allocated past the last row) is copied as is.
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func zMaxBelowTheKeysIsRaised(sourceType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = temp.file(sourceType == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        let legacy = try LegacyMessenger.make(sourceType, at: url) as! BulkCopyStore
        let largest = try legacy.largestPrimaryKeys()
        let chats = try #require(largest["Chat"])
        #expect(chats == Int64(LegacyMessenger.counts(messages: 60)["Chat"]!))
        let messageMax = try #require(try legacy.primaryKeyMaxima()["Message"])
        #expect(messageMax > largest["Message"]!)
        try legacy.setPrimaryKeyMaxima(["Chat": 0])
        try legacy.closeFiles()

        let target = try LegacyMessenger.targetModel()
        for outputType in Self.outputTypes {
            let ext = outputType.rawValue.lowercased()
            let destinations = [
                SplitDestination(configuration: "Cloud", url: try Self.outputURL(outputType, "Cloud-\(ext)", in: temp), type: outputType),
                SplitDestination(configuration: "Local", url: temp.file("Local-\(ext).sqlite"), type: .sqlite),
                SplitDestination(configuration: "Cache", url: temp.file("Cache-\(ext).sqlite"), type: .sqlite),
            ]
            let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
            let plan = try splitter.plan()
            #expect(plan.warnings.contains { $0.contains("Z_MAX of Chat is 0") && $0.contains("raised to \(chats)") })
            #expect(!plan.warnings.contains { $0.contains("Z_MAX of Message") })
            let report = try splitter.run(plan, options: SplitOptions(verifyContent: true))
            #expect(report.outputs[0].raisedPrimaryKeyMaxima == ["Chat": 0])
            #expect(report.outputs[0].primaryKeyMaxima["Chat"] == chats)
            #expect(report.outputs[0].primaryKeyMaxima["Message"] == messageMax)
            #expect(report.warnings.contains { $0.contains("Z_MAX of Chat") })
            let cloud = try StoreCoordinator(model: target).addStore(StoreDescription(outputType, configuration: "Cloud", url: destinations[0].url))
            #expect(try cloud.allocatePrimaryKeys(for: "Chat", count: 1).lowerBound == chats + 1)
            #expect(try cloud.allocatePrimaryKeys(for: "Message", count: 1).lowerBound == messageMax + 1)
        }
    }
}

/// Issue #12 point 2 for the other bulk copy: an entity moved to another store (`loadStores(_, movingEntities:)`)
/// keeps each row's `Z_OPT` and its root's `Z_MAX`, between SQLite and LMDB in both directions.
@Suite struct EntityMoveFidelityTests {
    /// Version 1: Note in Local. Version 2: Note in Cache, and a new entity Pin in Local (a move happens when
    /// the model changed, as with any migration).
    static func model(noteIn configuration: String) throws -> ObjectModel {
        let moved = configuration == "Cache"
        return try ObjectModel(
            entities: [
                EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
                EntityDescription(name: "Badge", attributes: [AttributeDescription(name: "code", type: .string)]),
            ] + (moved ? [EntityDescription(name: "Pin", attributes: [AttributeDescription(name: "x", type: .integer64)])] : []),
            configurations: [
                ConfigurationDescription(name: "Local", entityNames: moved ? ["Pin"] : ["Note"]),
                ConfigurationDescription(name: "Cache", entityNames: moved ? ["Note", "Badge"] : ["Badge"]),
            ])
    }

    @Test(arguments: [(StoreType.sqlite, StoreType.lmdb), (.lmdb, .sqlite)])
    func movedRowsKeepVersionsAndZMax(from: StoreType, to: StoreType) async throws {
        let temp = TemporaryDirectory()
        func ext(_ type: StoreType) -> String { type == .lmdb ? "lmdb" : "sqlite" }
        let local = temp.file("Local.\(ext(from))"), cache = temp.file("Cache.\(ext(to))")
        let descriptions = [StoreDescription(from, configuration: "Local", url: local), StoreDescription(to, configuration: "Cache", url: cache)]
        do {
            let coordinator = StoreCoordinator(model: try Self.model(noteIn: "Local"))
            _ = try await coordinator.loadStores(descriptions).get()
            let context = ObjectContext(coordinator: coordinator)
            let notes = try (0..<5).map { i -> ManagedObject in
                let note = try context.insert("Note")
                try note.set("text", "n\(i)")
                return note
            }
            try context.save()
            for round in 0..<3 {
                for note in notes.prefix(round + 1) { try note.set("text", "edited \(round)") }
                try context.save()
            }
            // Keys handed out to objects deleted since: Z_MAX is above the last row.
            _ = try coordinator.stores(serving: "Note").first!.allocatePrimaryKeys(for: "Note", count: 10)
        }
        let coordinator = StoreCoordinator(model: try Self.model(noteIn: "Cache"))
        let stores = try await coordinator.loadStores(descriptions, movingEntities: true).get()
        let moved = stores[1]
        let versions = try moved.fetch(StoreFetchRequest(entityName: "Note", sortKeys: [SortKey("text")])).map(\.version)
        #expect(versions.sorted() == [1, 1, 2, 3, 4])
        #expect(try moved.allocatePrimaryKeys(for: "Note", count: 1).lowerBound == 16)
    }
}

import Foundation
import Testing
@testable import Switchyard

@Suite struct CoordinatorTests {
    let model: ObjectModel
    let dir = TemporaryDirectory()

    init() throws { model = try TestModels.library() }

    @Test func unknownConfigurationIsAnError() throws {
        let coordinator = StoreCoordinator(model: model)
        #expect {
            try coordinator.addStore(.sqlite, configuration: "Nope", at: dir.file("x.sqlite"))
        } throws: { error in
            guard case CoordinatorError.unknownConfiguration("Nope", let available)? = error as? CoordinatorError else { return false }
            return available.contains("Main") && "\(error)".contains("Nope")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.sqlite").path))
    }

    @Test func sameFileTwiceIsAnErrorNamingIt() throws {
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Notes", at: dir.file("n.sqlite"))
        // Same file through another spelling of the path.
        let other = dir.url.appendingPathComponent("sub/../n.sqlite")
        #expect {
            try coordinator.addStore(.sqlite, configuration: "Archive", at: other)
        } throws: { error in
            guard case CoordinatorError.storeAlreadyAdded? = error as? CoordinatorError else { return false }
            return "\(error)".contains("n.sqlite")
        }
        #expect(coordinator.stores.count == 1)
    }

    /// Coordinators released without removing their stores leave no record of them behind (`OpenStoreFiles`,
    /// which keeps one coordinator from deleting files another uses): a process that opens many stores over its
    /// life does not keep a path for each. Records are swept once 32 paths are held, so at most 31 remain.
    @Test func releasedCoordinatorsLeaveNoRecordOfTheirStores() throws {
        let urls = (0..<40).map { dir.file("released-\($0).sqlite") }
        for url in urls {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Notes", at: url)
            #expect(OpenStoreFiles.isRecorded(url))
        }
        let kept = StoreCoordinator(model: model)
        try kept.addStore(.sqlite, configuration: "Notes", at: dir.file("kept.sqlite"))
        #expect(urls.filter(OpenStoreFiles.isRecorded).count < 32)
        #expect(OpenStoreFiles.isRecorded(dir.file("kept.sqlite")))
        try kept.removeStore(kept.stores[0])
        #expect(!OpenStoreFiles.isRecorded(dir.file("kept.sqlite")))
    }

    @Test func fileStoreNeedsAURL() throws {
        let coordinator = StoreCoordinator(model: model)
        #expect(throws: CoordinatorError.missingURL(type: .sqlite, configuration: "Main")) {
            try coordinator.addStore(.sqlite, configuration: "Main")
        }
    }

    @Test(arguments: Backend.allCases)
    func entityWithoutStoreIsAnError(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        _ = try context.insert("Note")
        #expect {
            try context.save()
        } throws: { error in
            guard case CoordinatorError.noStoreForEntity("Note", let configurations)? = error as? CoordinatorError else { return false }
            return configurations == ["Notes", "Archive"]
        }
        #expect(throws: CoordinatorError.self) { try context.fetch(FetchRequest(entityName: "Note")) }
    }

    @Test(arguments: Backend.allCases)
    func routingAutomaticAmbiguousAndAssigned(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: model)
        let main = try backend.add(to: coordinator, configuration: "Main", in: dir)
        let notes = try backend.add(to: coordinator, configuration: "Notes", in: dir)
        let archive = try backend.add(to: coordinator, configuration: "Archive", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let author = try context.insert("Author")
        try author.set("name", "Le Guin")
        let note = try context.insert("Note")
        try note.set("text", "unassigned")
        #expect {
            try context.save()
        } throws: { error in
            guard case CoordinatorError.ambiguousStore(entity: "Note", _, let stores)? = error as? CoordinatorError else { return false }
            return stores.count == 2
        }
        // Nothing was written by the failed save.
        #expect(try main.count(StoreFetchRequest(entityName: "Author")) == 0)
        #expect(throws: CoordinatorError.self) { try context.assign(note, to: main) }
        try context.assign(note, to: archive)
        try context.save()
        #expect(author.objectID.storeIdentifier == main.identifier)
        #expect(note.objectID.storeIdentifier == archive.identifier)
        #expect(try notes.count(StoreFetchRequest(entityName: "Note")) == 0)
        #expect(try archive.count(StoreFetchRequest(entityName: "Note")) == 1)
    }

    @Test(arguments: Backend.allCases)
    func fetchMergesStoresUnderSortAndAffectedStoresNarrows(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: model)
        let notes = try backend.add(to: coordinator, configuration: "Notes", in: dir)
        let archive = try backend.add(to: coordinator, configuration: "Archive", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (rank, store) in [(5, notes), (1, archive), (4, archive), (2, notes), (3, notes)] {
            let n = try context.insert("Note")
            try n.set("rank", Int64(rank))
            try context.assign(n, to: store)
        }
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Note", sortKeys: [SortKey("rank")])
        #expect(try fresh.fetch(request).map { try $0.get("rank", as: Int.self) } == [1, 2, 3, 4, 5])
        request.fetchOffset = 1
        request.fetchLimit = 3
        #expect(try fresh.fetch(request).map { try $0.get("rank", as: Int.self) } == [2, 3, 4])
        #expect(try fresh.count(request) == 3)
        request = FetchRequest(entityName: "Note", sortKeys: [SortKey("rank", ascending: false)])
        request.setAffectedStores([archive])
        #expect(try fresh.fetch(request).map { try $0.get("rank", as: Int.self) } == [4, 1])
        #expect(try fresh.count(FetchRequest(entityName: "Note")) == 5)
    }

    @Test func objectIDPrintsAndParses() throws {
        let store = UUID()
        let id = ObjectID(store: store, entityName: "Message", primaryKey: 42)
        #expect(id.uriRepresentation == "x-coredata://\(store.uuidString)/Message/p42")
        #expect(try ObjectID(uri: id.uriRepresentation) == id)
        for bad in ["http://x/y/p1", "x-coredata://not-a-uuid/Message/p1", "x-coredata://\(store.uuidString)/Message/42",
                    "x-coredata://\(store.uuidString)/Message", "x-coredata://\(store.uuidString)/Message/p-1"] {
            #expect(throws: CoordinatorError.self) { try ObjectID(uri: bad) }
        }
    }

    @Test(arguments: Backend.allCases)
    func savedObjectIDsResolveAcrossContexts(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let author = try context.insert("Author")
        try author.set("name", "Butler")
        #expect(author.objectID.isTemporary)
        #expect(author.objectID.uriRepresentation.hasPrefix("x-coredata:///Author/t"))
        try context.save()
        #expect(!author.objectID.isTemporary)
        let uri = author.objectID.uriRepresentation
        let other = ObjectContext(coordinator: coordinator)
        let found = try other.existingObject(with: try ObjectID(uri: uri))
        #expect(try found.get("name", as: String.self) == "Butler")
    }

    @Test func loadStoresReportsProgress() async throws {
        let coordinator = StoreCoordinator(model: model)
        let events = Locked<[StoreLoadEvent]>([])
        let stores = try await coordinator.loadStores([
            StoreDescription(.sqlite, configuration: "Main", url: dir.file("m.sqlite")),
            StoreDescription(.memory, configuration: "Cache"),
        ]) { event in events.withLock { $0.append(event) } }.get()
        #expect(stores.count == 2)
        let seen = events.withLock { $0 }
        #expect(seen.first == .opening(path: dir.file("m.sqlite").path, configuration: "Main"))
        #expect(seen.last == .done(storeCount: 2))
        #expect(seen.contains(.loaded(path: "memory:Cache", configuration: "Cache")))
    }
}

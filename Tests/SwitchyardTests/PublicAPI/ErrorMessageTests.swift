import Foundation
import Switchyard
import Testing

/// Errors from the user's side (public API only): `localizedDescription` is the sentence `description` gives,
/// naming the file, store and configuration; a conflict names the object to refresh.
@Suite struct ErrorMessageTests {
    let dir = TemporaryDirectory()

    static func model() throws -> ObjectModel {
        try ObjectModel(
            entities: [
                EntityDescription(
                    name: "Note",
                    attributes: [AttributeDescription(name: "title", type: .string), AttributeDescription(name: "code", type: .string)],
                    uniquenessConstraints: [["code"]]),
            ],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Note"])])
    }

    func coordinator(_ backend: Backend) throws -> (StoreCoordinator, any PersistentStore) {
        let coordinator = StoreCoordinator(model: try Self.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir, name: "main")
        return (coordinator, store)
    }

    /// The error's localized description is its description, and is not Foundation's generic sentence.
    func expectReadable(_ error: any Error, naming parts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.localizedDescription == "\(error)", sourceLocation: sourceLocation)
        #expect(!error.localizedDescription.contains("could not be completed"), sourceLocation: sourceLocation)
        for part in parts {
            #expect(error.localizedDescription.contains(part), "\(error.localizedDescription) names \(part)", sourceLocation: sourceLocation)
        }
    }

    func caught(_ body: () throws -> Void) -> (any Error)? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func modelLoadingErrorNamesTheFile() throws {
        let bad = dir.file("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        try Data("<model><entity name=".utf8).write(to: bad.appendingPathComponent("contents"))
        let error = try #require(caught { _ = try ModelLoader.load(at: bad) })
        #expect(error is ModelError)
        expectReadable(error, naming: ["Broken.xcdatamodel"])
    }

    @Test func predicateParsingErrorIsReadable() throws {
        let error = try #require(caught { _ = try FetchPredicate(format: "title == 'unterminated") })
        #expect(error is QueryError)
        expectReadable(error, naming: [])
    }

    @Test func contextAndCoordinatorErrorsAreReadable() throws {
        let (coordinator, _) = try coordinator(.memory)
        let context = ObjectContext(coordinator: coordinator)
        let unknownEntity = try #require(caught { _ = try context.insert("Nope") })
        #expect(unknownEntity is ContextError)
        expectReadable(unknownEntity, naming: ["Nope"])
        let unknownKey = try #require(caught { try context.insert("Note").set("nosuch", "x") })
        expectReadable(unknownKey, naming: ["Note", "nosuch"])

        let unknownConfiguration = try #require(caught {
            try coordinator.addStore(.sqlite, configuration: "Elsewhere", at: dir.file("x.sqlite"))
        })
        #expect(unknownConfiguration is CoordinatorError)
        expectReadable(unknownConfiguration, naming: ["Elsewhere", "Main"])
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func aFileThatIsNotAStoreIsNamed(backend: Backend) throws {
        let url = try #require(backend.url(in: dir, name: "garbage"))
        if backend == .lmdb {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data(repeating: 7, count: 4096).write(to: url.appendingPathComponent("data.mdb"))
        } else {
            try Data(repeating: 7, count: 4096).write(to: url)
        }
        let coordinator = StoreCoordinator(model: try Self.model())
        let error = try #require(caught { try coordinator.addStore(backend.storeType, configuration: "Main", at: url) })
        #expect(error is StoreError)
        expectReadable(error, naming: [url.lastPathComponent])
    }

    @Test(arguments: Backend.allCases)
    func storeErrorsNameTheStoreAndConfiguration(backend: Backend) throws {
        let (coordinator, store) = try coordinator(backend)
        let context = ObjectContext(coordinator: coordinator)
        for title in ["a", "b"] {
            let note = try context.insert("Note")
            try note.set("title", title)
            try note.set("code", "same")
        }
        let error = try #require(caught { try context.save() })
        #expect(error is StoreError)
        expectReadable(error, naming: [store.displayPath, "configuration Main", "Note", "code"])
        #expect((error as? StoreError)?.configuration == "Main")
    }

    @Test func splitErrorNamesTheSource() throws {
        let missing = dir.file("Nowhere.sqlite")
        let error = try #require(caught {
            _ = try StoreSplitter(source: missing, targetModel: try Self.model(), destinations: [])
        })
        #expect(error is SplitError)
        expectReadable(error, naming: ["Nowhere.sqlite"])
    }

    /// Two contexts change the same object; the second save fails with a conflict that names that object,
    /// and refreshing exactly that object lets the save succeed (as `NSMergeConflict.sourceObject` does).
    @Test(arguments: Backend.allCases)
    func conflictNamesTheObjectToRefresh(backend: Backend) throws {
        let (coordinator, store) = try coordinator(backend)
        let setup = ObjectContext(coordinator: coordinator)
        for i in 0..<3 {
            let note = try setup.insert("Note")
            try note.set("title", "t\(i)")
            try note.set("code", "c\(i)")
        }
        try setup.save()
        let request = FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "code == 'c1'"))
        let mine = ObjectContext(coordinator: coordinator)
        let theirs = ObjectContext(coordinator: coordinator)
        let note = try #require(try mine.fetch(request).first)
        let other = try #require(try mine.fetch(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "code == 'c2'"))).first)
        let theirNote = try #require(try theirs.fetch(request).first)
        try theirNote.set("title", "theirs")
        try theirs.save()

        try note.set("title", "mine")
        try other.set("title", "mine too")
        let error = try #require(caught { try mine.save() })
        let conflict = try #require(error as? StoreError)
        #expect(conflict.objectID == note.objectID)
        guard case .conflict = conflict else {
            Issue.record("expected a conflict, got \(conflict)")
            return
        }
        expectReadable(error, naming: [store.displayPath, "configuration Main", note.objectID.description])

        try mine.refresh(try mine.existingObject(with: try #require(conflict.objectID)))
        try note.set("title", "mine after refresh")
        try mine.save()
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.fetch(request).first?.get("title", as: String.self) == "mine after refresh")
        #expect(try check.fetch(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "code == 'c2'")))
            .first?.get("title", as: String.self) == "mine too")

        // The store's own check (inside its transaction) names the same object.
        let stale = try #require(note.objectID.primaryKey)
        let storeError = try #require(caught {
            try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "Note", primaryKey: stale, expectedVersion: 1, values: ["title": "x"])]))
        })
        #expect((storeError as? StoreError)?.objectID == note.objectID)
        expectReadable(storeError, naming: [store.displayPath, "configuration Main"])
    }
}

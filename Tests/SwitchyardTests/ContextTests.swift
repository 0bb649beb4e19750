import Foundation
import Testing
@testable import Switchyard

@Suite struct ContextTests {
    let model: ObjectModel
    let dir = TemporaryDirectory()

    init() throws { model = try TestModels.library() }

    private func coordinator(_ backend: Backend) throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir)
        try backend.add(to: coordinator, configuration: "Notes", in: dir)
        try backend.add(to: coordinator, configuration: "Cache", in: dir)
        return coordinator
    }

    @Test(arguments: Backend.allCases)
    func insertFetchUpdateDeleteSave(backend: Backend) throws {
        let coordinator = try coordinator(backend)
        let context = ObjectContext(coordinator: coordinator)
        let author = try context.insert("Author")
        try author.set("name", "Le Guin")
        #expect(try author.get("active", as: Bool.self) == true)   // model default
        let book = try context.insert("Book")
        try book.set("title", "Earthsea")
        try book.set("pages", 200)
        try book.setRelatedObject(author, forKey: "author")
        #expect(try book.get("edition", as: Int.self) == 1)
        #expect(context.hasChanges)
        try context.save()
        #expect(!context.hasChanges)

        let reader = ObjectContext(coordinator: coordinator)
        let books = try reader.fetch(FetchRequest(entityName: "Book", predicate: try FetchPredicate(format: "author.name == %@", "Le Guin")))
        let fetched = try #require(books.first)
        #expect(try fetched.get("title", as: String.self) == "Earthsea")
        #expect(try fetched.relatedObject(forKey: "author")?.get("name", as: String.self) == "Le Guin")
        let fetchedAuthor = try #require(try fetched.relatedObject(forKey: "author"))
        #expect(try fetchedAuthor.relatedObjects(forKey: "publications").count == 1)
        // Identity: one instance per object per context.
        #expect(try reader.fetch(FetchRequest(entityName: "Author")).first === fetchedAuthor)

        try fetched.set("pages", 210)
        try reader.save()
        try context.refresh(book)
        #expect(try book.get("pages", as: Int.self) == 210)

        try reader.delete(fetched)
        try reader.save()
        #expect(try context.count(FetchRequest(entityName: "Book")) == 0)
        #expect(throws: ContextError.self) { try context.refresh(book) }
    }

    @Test(arguments: Backend.allCases)
    func fetchSeesUnsavedChanges(backend: Backend) throws {
        let context = ObjectContext(coordinator: try coordinator(backend))
        for (text, rank) in [("a", 3), ("b", 1), ("c", 2)] {
            let n = try context.insert("Note")
            try n.set("text", text)
            try n.set("rank", rank)
        }
        try context.save()
        let pending = try context.insert("Note")
        try pending.set("text", "new")
        try pending.set("rank", 0)
        let notes = try context.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("rank")]))
        try context.delete(notes[1])   // rank 1 ("b")
        try notes[3].set("rank", 10)    // "a" moves last... and out of the predicate below
        let request = FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "rank < 5"), sortKeys: [SortKey("rank")], fetchLimit: 2)
        #expect(try context.fetch(request).map { try $0.get("text", as: String.self) } == ["new", "c"])
        #expect(try context.count(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "rank < 5"))) == 2)
        context.rollback()
        #expect(try context.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("rank")])).map { try $0.get("text", as: String.self) } == ["b", "c", "a"])
    }

    @Test(arguments: Backend.allCases)
    func typedAccessErrors(backend: Backend) throws {
        let context = ObjectContext(coordinator: try coordinator(backend))
        let book = try context.insert("Book")
        #expect(throws: ContextError.unknownKey(entity: "Book", key: "nope")) { try book.set("nope", 1) }
        #expect(throws: ContextError.self) { try book.set("pages", "many") }
        #expect(throws: ContextError.self) { try book.set("edition", 70_000) }   // Integer 16
        try book.set("title", "T")
        #expect(throws: ContextError.self) { try book.get("title", as: Int.self) }
        #expect(throws: ContextError.unknownEntity("Nope")) { try context.insert("Nope") }
        #expect(throws: ContextError.abstractEntity("Publication")) { try context.insert("Publication") }
        // Required attribute missing at save.
        let author = try context.insert("Author")
        _ = author
        #expect {
            try context.save()
        } throws: { error in
            guard case ContextError.missingRequiredValue(entity: "Author", key: "name", _)? = error as? ContextError else { return false }
            return true
        }
    }

    @Test(arguments: Backend.allCases)
    func optimisticLockingConflictWritesNothing(backend: Backend) throws {
        let coordinator = try coordinator(backend)
        let setup = ObjectContext(coordinator: coordinator)
        let note = try setup.insert("Note")
        try note.set("text", "original")
        let author = try setup.insert("Author")
        try author.set("name", "A")
        try setup.save()

        let first = ObjectContext(coordinator: coordinator)
        let second = ObjectContext(coordinator: coordinator)
        let n1 = try first.existingObject(with: note.objectID)
        let n2 = try second.existingObject(with: note.objectID)
        let a2 = try second.existingObject(with: author.objectID)
        try n1.set("text", "first")
        try first.save()
        try n2.set("text", "second")
        try a2.set("name", "B")          // in another store: must not be written either
        _ = try second.insert("Note")     // nor this insert
        #expect {
            try second.save()
        } throws: { error in
            guard case StoreError.conflict(_, _, _, "Note", _, 1, 2)? = error as? StoreError else { return false }
            return true
        }
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.existingObject(with: note.objectID).get("text", as: String.self) == "first")
        #expect(try check.existingObject(with: author.objectID).get("name", as: String.self) == "A")
        #expect(try check.count(FetchRequest(entityName: "Note")) == 1)
        // After a refresh the second context can save on top of the first.
        try second.refresh(n2)
        try n2.set("text", "second")
        second.rollback()
        try n2.set("text", "second")
        try second.save()
        #expect(try ObjectContext(coordinator: coordinator).existingObject(with: note.objectID).get("text", as: String.self) == "second")
    }

    @Test(arguments: Backend.allCases)
    func fetchedPropertyCrossesStoresAndCachesUntilRefresh(backend: Backend) throws {
        let coordinator = try coordinator(backend)
        let context = ObjectContext(coordinator: coordinator)
        let author = try context.insert("Author")
        try author.set("name", "A")
        let book = try context.insert("Book")
        try book.set("title", "Dune")
        try book.set("code", "D-1")
        for stars in [5, 3] {
            let review = try context.insert("Review")
            try review.set("bookCode", "D-1")
            try review.set("stars", stars)
        }
        let other = try context.insert("Review")
        try other.set("bookCode", "X")
        try context.save()
        #expect(try book.fetchedProperty("reviews").count == 2)
        let writer = ObjectContext(coordinator: coordinator)
        let late = try writer.insert("Review")
        try late.set("bookCode", "D-1")
        try writer.save()
        #expect(try book.fetchedProperty("reviews").count == 2)   // cached
        try context.refresh(book)
        #expect(try book.fetchedProperty("reviews").count == 3)
    }

    @Test(arguments: Backend.allCases)
    func relationshipIntoAnotherStoreIsAnError(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: model)
        let first = try backend.add(to: coordinator, configuration: "Main", in: dir, name: "one")
        let second = try backend.add(to: coordinator, configuration: "Main", in: dir, name: "two")
        let context = ObjectContext(coordinator: coordinator)
        let author = try context.insert("Author")
        try author.set("name", "A")
        try context.assign(author, to: first)
        let book = try context.insert("Book")
        try book.set("title", "T")
        try context.assign(book, to: second)
        try book.setRelatedObject(author, forKey: "author")
        #expect {
            try context.save()
        } throws: { error in
            guard case ContextError.crossStoreRelationship? = error as? ContextError else { return false }
            return "\(error)".contains("fetched property")
        }
    }

    @Test(arguments: Backend.allCases)
    func eightTasksEachWithItsOwnContext(backend: Backend) async throws {
        let coordinator = try coordinator(backend)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let context = ObjectContext(coordinator: coordinator)
                    for i in 0..<20 {
                        let note = try context.insert("Note")
                        try note.set("text", "w\(worker)")
                        try note.set("rank", i)
                        if i % 5 == 4 { try context.save() }
                    }
                    try context.save()
                    let mine = try context.fetch(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "text == %@", "w\(worker)")))
                    for note in mine.prefix(5) { try note.set("rank", 100) }
                    try context.save()
                    return try context.count(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "text == %@ AND rank == 100", "w\(worker)")))
                }
            }
            for try await updated in group { #expect(updated == 5) }
        }
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.count(FetchRequest(entityName: "Note")) == 160)
        #expect(try check.count(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "rank == 100"))) == 40)
    }
}

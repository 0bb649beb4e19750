import Foundation
import Testing
@testable import Switchyard

/// Permanent keys of one save: each inheritance tree draws from its root's sequence (Book and Magazine share
/// Publication's), in insertion order within the tree, whatever the interleaving with other trees.
@Suite struct SaveKeyOrderTests {
    @Test(arguments: Backend.allCases)
    func interleavedInsertsOfSeveralTreesGetKeysInOrderPerRoot(backend: Backend) throws {
        let directory = TemporaryDirectory()
        let coordinator = StoreCoordinator(model: try TestModels.library())
        _ = try backend.add(to: coordinator, configuration: "Main", in: directory)
        let context = ObjectContext(coordinator: coordinator)
        var publications: [ManagedObject] = []
        var authors: [ManagedObject] = []
        for i in 0..<7 {
            let publication = try context.insert(i % 3 == 1 ? "Magazine" : "Book")
            try publication.set("title", "title \(i)")
            publications.append(publication)
            if i % 2 == 0 {
                let author = try context.insert("Author")
                try author.set("name", "author \(i)")
                authors.append(author)
            }
        }
        try context.save()
        for group in [publications, authors] {
            let keys = try group.map { try #require($0.objectID.primaryKey) }
            #expect(keys == Array(keys[0]..<keys[0] + Int64(keys.count)), "keys \(keys)")
        }
        // Read back in a fresh context: each ID names the object saved under it.
        let reader = ObjectContext(coordinator: coordinator)
        for (i, publication) in publications.enumerated() {
            let read = try reader.existingObject(with: publication.objectID)
            #expect(read.entity.name == publication.entity.name)
            #expect(try read.get("title", as: String.self) == "title \(i)")
        }
        for (n, author) in authors.enumerated() {
            #expect(try reader.existingObject(with: author.objectID).get("name", as: String.self) == "author \(n * 2)")
        }
        #expect(try reader.count(FetchRequest(entityName: "Publication")) == 7)
    }
}

import Foundation
import Testing
@testable import Switchyard

/// Delete rules applied at save, on every backend.
@Suite struct DeleteRuleTests {
    let dir = TemporaryDirectory()

    /// Folder 1-n Item; the folder's `items` relationship has `rule`, the item's `folder` nullifies.
    private func setup(_ backend: Backend, rule: DeleteRule) throws -> (StoreCoordinator, ObjectID, [ObjectID]) {
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "items", destination: "Item", inverse: "folder", isToMany: true, deleteRule: rule)]),
            EntityDescription(name: "Item", attributes: [AttributeDescription(name: "title", type: .string)],
                              relationships: [RelationshipDescription(name: "folder", destination: "Folder", inverse: "items")]),
        ])
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: "rules-\(rule.rawValue.replacingOccurrences(of: " ", with: ""))")
        let context = ObjectContext(coordinator: coordinator)
        let folder = try context.insert("Folder")
        try folder.set("name", "F")
        var items: [ManagedObject] = []
        for i in 0..<3 {
            let item = try context.insert("Item")
            try item.set("title", "i\(i)")
            try item.setRelatedObject(folder, forKey: "folder")
            items.append(item)
        }
        try context.save()
        return (coordinator, folder.objectID, items.map(\.objectID))
    }

    @Test(arguments: Backend.allCases)
    func nullifyClearsTheInverse(backend: Backend) throws {
        let (coordinator, folderID, itemIDs) = try setup(backend, rule: .nullify)
        let context = ObjectContext(coordinator: coordinator)
        try context.delete(try context.existingObject(with: folderID))
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.count(FetchRequest(entityName: "Folder")) == 0)
        for id in itemIDs { #expect(try check.existingObject(with: id).relatedObject(forKey: "folder") == nil) }
        #expect(try check.count(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "folder == nil"))) == 3)
    }

    @Test(arguments: Backend.allCases)
    func cascadeDeletesTheMembers(backend: Backend) throws {
        let (coordinator, folderID, _) = try setup(backend, rule: .cascade)
        let context = ObjectContext(coordinator: coordinator)
        try context.delete(try context.existingObject(with: folderID))
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.count(FetchRequest(entityName: "Folder")) == 0)
        #expect(try check.count(FetchRequest(entityName: "Item")) == 0)
    }

    @Test(arguments: Backend.allCases)
    func denyRefusesWhileMembersRemain(backend: Backend) throws {
        let (coordinator, folderID, itemIDs) = try setup(backend, rule: .deny)
        let context = ObjectContext(coordinator: coordinator)
        let folder = try context.existingObject(with: folderID)
        try context.delete(folder)
        #expect {
            try context.save()
        } throws: { error in
            guard case ContextError.deleteDenied(entity: "Folder", key: "items", _, count: 3)? = error as? ContextError else { return false }
            return true
        }
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Folder")) == 1)
        // Emptying the folder first lets the delete through.
        context.rollback()
        for id in itemIDs { try context.delete(try context.existingObject(with: id)) }
        try context.save()
        try context.delete(folder)
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Folder")) == 0)
    }

    @Test(arguments: Backend.allCases)
    func noActionLeavesTheMembers(backend: Backend) throws {
        let (coordinator, folderID, itemIDs) = try setup(backend, rule: .noAction)
        let context = ObjectContext(coordinator: coordinator)
        try context.delete(try context.existingObject(with: folderID))
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        #expect(try check.count(FetchRequest(entityName: "Item")) == 3)
        // The dangling reference reads as no object.
        #expect(try check.existingObject(with: itemIDs[0]).relatedObject(forKey: "folder") == nil)
    }
}

/// Inverse upkeep for one-to-one relationships and to-many count validation, on every backend.
@Suite struct RelationshipUpkeepTests {
    let dir = TemporaryDirectory()

    private func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [
                                RelationshipDescription(name: "badge", destination: "Badge", inverse: "holder"),
                                RelationshipDescription(name: "pets", destination: "Pet", inverse: "owner", isToMany: true, minCount: 0, maxCount: 2),
                              ]),
            EntityDescription(name: "Badge", attributes: [AttributeDescription(name: "code", type: .string)],
                              relationships: [RelationshipDescription(name: "holder", destination: "Person", inverse: "badge")]),
            EntityDescription(name: "Pet", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "pets")]),
        ])
    }

    @Test(arguments: Backend.allCases)
    func oneToOneKeepsBothSidesInStep(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: try model())
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: "one-to-one")
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert("Person")
        let bob = try context.insert("Person")
        let badge = try context.insert("Badge")
        try badge.set("code", "B1")
        try ann.setRelatedObject(badge, forKey: "badge")
        #expect(try badge.relatedObject(forKey: "holder") === ann)
        try context.save()
        // Giving the badge to Bob takes it from Ann, on both sides, and survives a save.
        try bob.setRelatedObject(badge, forKey: "badge")
        #expect(try ann.relatedObject(forKey: "badge") == nil)
        #expect(try badge.relatedObject(forKey: "holder") === bob)
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        let freshBadge = try check.existingObject(with: badge.objectID)
        #expect(try freshBadge.relatedObject(forKey: "holder")?.objectID == bob.objectID)
        #expect(try check.existingObject(with: ann.objectID).relatedObject(forKey: "badge") == nil)
    }

    @Test(arguments: Backend.allCases)
    func toManyMaximumIsValidatedAtSave(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: try model())
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: "counts")
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert("Person")
        for i in 0..<3 {
            let pet = try context.insert("Pet")
            try pet.set("name", "p\(i)")
            try pet.setRelatedObject(ann, forKey: "owner")
        }
        #expect(throws: ContextError.self) { try context.save() }
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Pet")) == 0)
        let extra = try #require(try ann.relatedObjects(forKey: "pets").last)
        try context.delete(extra)
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Pet")) == 2)
    }
}

/// Setting a to-many from its own side moves the inverse keys, on every backend.
@Suite struct ToManyAssignmentTests {
    let dir = TemporaryDirectory()

    @Test(arguments: Backend.allCases)
    func replacingMembersMovesInverseKeys(backend: Backend) throws {
        let coordinator = StoreCoordinator(model: try TestModels.library())
        try backend.add(to: coordinator, configuration: "Main", in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert("Author")
        try ann.set("name", "Ann")
        let bob = try context.insert("Author")
        try bob.set("name", "Bob")
        var books: [ManagedObject] = []
        for i in 0..<3 {
            let book = try context.insert("Book")
            try book.set("title", "b\(i)")
            books.append(book)
        }
        try ann.setRelatedObjects(books, forKey: "publications")
        try context.save()
        #expect(try ann.relatedObjects(forKey: "publications").count == 3)
        // Moving one book to Bob removes it from Ann; dropping one leaves it without an author.
        try bob.setRelatedObjects([books[0]], forKey: "publications")
        try ann.setRelatedObjects([books[1]], forKey: "publications")
        try context.save()
        let check = ObjectContext(coordinator: coordinator)
        let authorOf = { (book: ManagedObject) throws -> String? in
            try check.existingObject(with: book.objectID).relatedObject(forKey: "author")?.get("name", as: String.self)
        }
        #expect(try authorOf(books[0]) == "Bob")
        #expect(try authorOf(books[1]) == "Ann")
        #expect(try authorOf(books[2]) == nil)
        #expect(throws: ContextError.self) { try ann.setRelatedObjects([], forKey: "name") }
    }
}

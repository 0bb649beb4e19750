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

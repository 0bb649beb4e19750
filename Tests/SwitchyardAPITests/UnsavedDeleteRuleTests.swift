import Foundation
import Switchyard
import Testing

/// Core Data runs the delete rules of every deleted object, an unsaved insert included, when it processes
/// pending changes: what a Cascade reaches goes too, through unsaved objects as through saved ones. (Found by a
/// user-side exploration on 2026-12-02: an unsaved object's rules never ran.)
@Suite struct UnsavedDeleteRuleTests {
    /// Keeper -animals (Cascade)-> Animal (abstract) <- Cat; Animal -toys (Cascade)-> Toy -labels (Deny)-> Label.
    static func model() throws -> ObjectModel {
        let named = [AttributeDescription(name: "name", type: .string)]
        let entities = [
            EntityDescription(name: "Keeper", attributes: named, relationships: [
                RelationshipDescription(name: "animals", destination: "Animal", inverse: "keeper", isToMany: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Animal", isAbstract: true, attributes: named, relationships: [
                RelationshipDescription(name: "keeper", destination: "Keeper", inverse: "animals"),
                RelationshipDescription(name: "toys", destination: "Toy", inverse: "animal", isToMany: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Cat", parent: "Animal"),
            EntityDescription(name: "Toy", attributes: named, relationships: [
                RelationshipDescription(name: "animal", destination: "Animal", inverse: "toys"),
                RelationshipDescription(name: "labels", destination: "Label", inverse: "toy", isToMany: true, deleteRule: .deny),
            ]),
            EntityDescription(name: "Label", attributes: named, relationships: [
                RelationshipDescription(name: "toy", destination: "Toy", inverse: "labels"),
            ]),
        ]
        return try ObjectModel(
            entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    static func insert(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        let object = try context.insert(entity)
        try object.set("name", name)
        return object
    }

    static func names(_ context: ObjectContext, _ entity: String) throws -> [String] {
        try context.fetch(FetchRequest(entityName: entity)).map { try $0.get("name", as: String.self) ?? "" }.sorted()
    }

    /// An unsaved keeper deleted takes its unsaved cat with it, and the cat its saved toy; the cat never reaches
    /// the store, the toy leaves it. A fetch before the save already leaves the cat out.
    @Test(arguments: Backend.everyStore)
    func deletingAnUnsavedObjectRunsItsCascade(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let toy = try Self.insert(context, "Toy", "ball")
        let kept = try Self.insert(context, "Toy", "rope")
        try context.save()
        let keeper = try Self.insert(context, "Keeper", "kim")
        let cat = try Self.insert(context, "Cat", "tom")
        let other = try Self.insert(context, "Cat", "kit")
        try cat.setRelatedObject(keeper, forKey: "keeper")
        try toy.setRelatedObject(cat, forKey: "animal")
        try kept.setRelatedObject(other, forKey: "animal")

        try context.delete(keeper)
        #expect(cat.isDeleted && toy.isDeleted)
        #expect(!other.isDeleted && !kept.isDeleted)
        #expect(try Self.names(context, "Animal") == ["kit"])
        #expect(try Self.names(context, "Toy") == ["rope"])
        try context.save()

        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(fresh, "Keeper") == [])
        #expect(try Self.names(fresh, "Cat") == ["kit"])
        #expect(try Self.names(fresh, "Toy") == ["rope"])
    }

    /// A saved keeper's Cascade reaches an unsaved cat, and goes on through it to the cat's saved toy.
    @Test(arguments: Backend.everyStore)
    func aCascadeGoesOnThroughAnUnsavedObject(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let keeper = try Self.insert(context, "Keeper", "kim")
        let toy = try Self.insert(context, "Toy", "ball")
        try context.save()
        let cat = try Self.insert(context, "Cat", "tom")
        try cat.setRelatedObject(keeper, forKey: "keeper")
        try toy.setRelatedObject(cat, forKey: "animal")
        try context.delete(keeper)
        try context.save()
        #expect(toy.isDeleted)
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(fresh, "Toy") == [])
        #expect(try Self.names(fresh, "Animal") == [])
        #expect(try Self.names(fresh, "Keeper") == [])
    }

    /// A Deny beyond an unsaved object refuses the save, and everything the cascade did is undone: the unsaved
    /// cat is back in the context with its keeper, and its toy with the cat. Once the label goes, the save deletes
    /// them all.
    @Test(arguments: Backend.everyStore)
    func aDenyBeyondAnUnsavedObjectUndoesTheWholeCascade(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let keeper = try Self.insert(context, "Keeper", "kim")
        let toy = try Self.insert(context, "Toy", "ball")
        let label = try Self.insert(context, "Label", "red")
        try label.setRelatedObject(toy, forKey: "toy")
        try context.save()
        let cat = try Self.insert(context, "Cat", "tom")
        let kitten = try Self.insert(context, "Cat", "kit")
        try cat.setRelatedObject(keeper, forKey: "keeper")
        try kitten.setRelatedObject(keeper, forKey: "keeper")
        try toy.setRelatedObject(cat, forKey: "animal")
        try context.delete(keeper)
        #expect(throws: ContextError.self) { try context.save() }
        #expect(!cat.isDeleted && !kitten.isDeleted && !toy.isDeleted)
        // The unsaved cats are back in their order (a fetch lists unsaved objects in insertion order).
        #expect(try context.fetch(FetchRequest(entityName: "Cat")).map { try $0.get("name", as: String.self) ?? "" } == ["tom", "kit"])
        #expect(try cat.relatedObject(forKey: "keeper") === keeper)
        #expect(try toy.relatedObject(forKey: "animal") === cat)
        #expect(try keeper.relatedObjects(forKey: "animals").map { try $0.get("name", as: String.self) ?? "" } == ["tom", "kit"])
        #expect(try Self.names(ObjectContext(coordinator: coordinator), "Toy") == ["ball"])

        try context.delete(label)
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.names(fresh, "Keeper") == [])
        #expect(try Self.names(fresh, "Animal") == [])
        #expect(try Self.names(fresh, "Toy") == [])
        #expect(try Self.names(fresh, "Label") == [])
    }
}

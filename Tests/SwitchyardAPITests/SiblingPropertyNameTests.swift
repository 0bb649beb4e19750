import Foundation
import Switchyard
import Testing

/// Subentities of one entity may each declare a property of the same name (`Cat.owner` and `Dog.owner`, or a
/// `name` on each): Core Data keeps them apart, in columns it numbers (`ZOWNER`, `ZOWNER1`) in one table.
@Suite struct SiblingPropertyNameTests {
    /// Person -> cats (inverse `Cat.owner`) and dogs (inverse `Dog.owner`); `Employee` is a Person, so both
    /// to-ones keep their destination's entity too. `tag` on `tagged` (each a Pet subentity) when given.
    static func model(tagged: [String] = ["Cat", "Dog"], extra: String? = nil) throws -> ObjectModel {
        let person = EntityDescription(
            name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [
                RelationshipDescription(name: "cats", destination: "Cat", inverse: "owner", isToMany: true),
                RelationshipDescription(name: "dogs", destination: "Dog", inverse: "owner", isToMany: true),
            ])
        let employee = EntityDescription(name: "Employee", parent: "Person")
        let pet = EntityDescription(name: "Pet", attributes: [AttributeDescription(name: "name", type: .string)])
        func tag(_ entity: String) -> [AttributeDescription] {
            tagged.contains(entity) ? [AttributeDescription(name: "tag", type: .string)] : []
        }
        let cat = EntityDescription(
            name: "Cat", parent: "Pet", attributes: tag("Cat"),
            relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cats")])
        let dog = EntityDescription(
            name: "Dog", parent: "Pet", attributes: tag("Dog"),
            relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "dogs")])
        var entities = [person, employee, pet, cat, dog]
        if let extra { entities.append(EntityDescription(name: extra, parent: "Pet", attributes: tag(extra))) }
        return try ObjectModel(
            entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    /// Core Data finds a to-many's members through the inverse of exactly its destination: a cat whose `owner`
    /// is Ann is one of Ann's cats, never one of her dogs — before a save (the context's pending objects),
    /// after it, and in a fresh context. (Before 2026-12-02 a context counted Ann's unsaved cats among her dogs,
    /// and adding a dog then failed with "Person.dogs is Dog; got Cat".)
    @Test(arguments: Backend.everyStore)
    func toOnesOfOneNameOnSiblingsKeepTheirOwnMembers(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try context.insert("Employee")
        try ann.set("name", "ann")
        func pet(_ entity: String, _ name: String) throws -> ManagedObject {
            let pet = try context.insert(entity)
            try pet.set("name", name)
            return pet
        }
        try ann.addRelatedObject(try pet("Cat", "tom"), forKey: "cats")
        try pet("Dog", "rex").setRelatedObject(ann, forKey: "owner")
        try ann.addRelatedObject(try pet("Dog", "fido"), forKey: "dogs")
        try pet("Cat", "kit").setRelatedObject(ann, forKey: "owner")
        func names(_ owner: ManagedObject, _ key: String) throws -> [String] {
            try owner.relatedObjects(forKey: key).map { try $0.get("name", as: String.self) ?? "" }.sorted()
        }
        #expect(try names(ann, "cats") == ["kit", "tom"])
        #expect(try names(ann, "dogs") == ["fido", "rex"])
        try context.save()
        #expect(try names(ann, "cats") == ["kit", "tom"])
        #expect(try names(ann, "dogs") == ["fido", "rex"])

        let fresh = ObjectContext(coordinator: coordinator)
        let reread = try #require(try fresh.fetch(FetchRequest(entityName: "Person")).first)
        #expect(try names(reread, "cats") == ["kit", "tom"])
        #expect(try names(reread, "dogs") == ["fido", "rex"])
        #expect(try fresh.count(FetchRequest(entityName: "Dog", predicate: try FetchPredicate(format: "owner.name == %@", "ann"))) == 2)
        #expect(try fresh.count(FetchRequest(entityName: "Pet", predicate: try FetchPredicate(format: "name == %@", "kit"))) == 1)
        // An unsaved cat of Ann's in the fresh context joins her cats only.
        let newcomer = try fresh.insert("Cat")
        try newcomer.set("name", "zoe")
        try newcomer.setRelatedObject(reread, forKey: "owner")
        #expect(try names(reread, "cats") == ["kit", "tom", "zoe"])
        #expect(try names(reread, "dogs") == ["fido", "rex"])
    }

    /// A model version gives `tag` to `Ant`, which comes before `Cat` and `Dog` in the tree (or takes it away
    /// from it): Core Data's numbering of the `ZTAG` columns shifts, and each entity keeps its own values. Before
    /// 2026-12-02 an SQL store read the cats' tags as the ants' (and the dogs' as the cats').
    @Test(arguments: Backend.persistent, [true, false])
    func aRepeatedNameGainedOrLostEarlierInTheTreeKeepsEveryValue(backend: Backend, gained: Bool) throws {
        let without = try Self.model(tagged: ["Cat", "Dog"], extra: "Ant")
        let with = try Self.model(tagged: ["Ant", "Cat", "Dog"], extra: "Ant")
        let dir = try TempDir()
        let coordinator = try backend.coordinator(gained ? without : with, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for entity in ["Ant", "Cat", "Dog"] {
            for k in 0..<3 {
                let pet = try context.insert(entity)
                try pet.set("name", "\(entity)\(k)")
                if entity != "Ant" || !gained { try pet.set("tag", "\(entity.lowercased())-tag\(k)") }
            }
        }
        try context.save()
        if let store = coordinator.stores.first { try coordinator.removeStore(store) }

        let migrated = try backend.coordinator(gained ? with : without, in: dir)
        let reader = ObjectContext(coordinator: migrated)
        var tags: [String: String] = [:]
        for pet in try reader.fetch(FetchRequest(entityName: "Pet")) where pet.entity.name != "Ant" || gained {
            tags[try pet.get("name", as: String.self) ?? ""] = try pet.get("tag", as: String.self) ?? "nil"
        }
        var expected: [String: String] = [:]
        for entity in gained ? ["Ant", "Cat", "Dog"] : ["Cat", "Dog"] {
            for k in 0..<3 { expected["\(entity)\(k)"] = entity == "Ant" ? "nil" : "\(entity.lowercased())-tag\(k)" }
        }
        #expect(tags == expected)
        #expect(try reader.count(FetchRequest(entityName: "Dog", predicate: try FetchPredicate(format: "tag == %@", "dog-tag1"))) == 1)
        #expect(try reader.count(FetchRequest(entityName: "Cat", predicate: try FetchPredicate(format: "tag == %@", "dog-tag1"))) == 0)

        // Written again through the new layout, and read back by a fresh coordinator.
        let cat = try #require(try reader.fetch(FetchRequest(entityName: "Cat", predicate: try FetchPredicate(format: "name == %@", "Cat0"))).first)
        try cat.set("tag", "changed")
        if gained {
            let ant = try #require(try reader.fetch(FetchRequest(entityName: "Ant", predicate: try FetchPredicate(format: "name == %@", "Ant0"))).first)
            try ant.set("tag", "ant-new")
        }
        try reader.save()
        if let store = migrated.stores.first { try migrated.removeStore(store) }
        let reopened = ObjectContext(coordinator: try backend.coordinator(gained ? with : without, in: dir))
        var after: [String: String] = [:]
        for pet in try reopened.fetch(FetchRequest(entityName: "Pet")) where pet.entity.name != "Ant" || gained {
            after[try pet.get("name", as: String.self) ?? ""] = try pet.get("tag", as: String.self) ?? "nil"
        }
        expected["Cat0"] = "changed"
        if gained { expected["Ant0"] = "ant-new" }
        #expect(after == expected)
    }
}

import Foundation
import Switchyard
import Testing

/// Model changes a store cannot be migrated through without losing what it holds are refused when the store is
/// added, and the store is left as it was (a fourth user trial found each of these opened "migrated", the
/// data gone): a to-many gaining or losing its inverse (its members are stored elsewhere then, and were not
/// converted), and a store written with another model altogether (every row was dropped; Core Data fails
/// with "can't find model for source store").
@Suite struct MigrationRefusalTests {
    /// Person 1-n Pet in configuration `Main`: `pets` with or without its inverse `Pet.owner`.
    static func people(inverse: Bool) throws -> ObjectModel {
        let person = EntityDescription(
            name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "pets", destination: "Pet", inverse: inverse ? "owner" : nil, isToMany: true)])
        let pet = EntityDescription(
            name: "Pet", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: inverse ? [RelationshipDescription(name: "owner", destination: "Person", inverse: "pets")] : [])
        return try ObjectModel(
            entities: [person, pet], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Person", "Pet"])])
    }

    /// Saves `persons` people with two pets each.
    static func fill(_ coordinator: StoreCoordinator, persons: Int) throws {
        let context = ObjectContext(coordinator: coordinator)
        for p in 0..<persons {
            let person = try context.insert("Person")
            try person.set("name", "p\(p)")
            for k in 0..<2 {
                let pet = try context.insert("Pet")
                try pet.set("name", "p\(p)-pet\(k)")
                try person.addRelatedObject(pet, forKey: "pets")
            }
        }
        try context.save()
    }

    /// How many pets the people have, read through `model`.
    static func links(_ backend: Backend, in dir: TempDir, model: ObjectModel) throws -> Int {
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        return try context.fetch(FetchRequest(entityName: "Person")).reduce(0) { $0 + (try $1.relatedObjects(forKey: "pets").count) }
    }

    static func expectRefused(_ backend: Backend, in dir: TempDir, model: ObjectModel, saying words: String) {
        let coordinator = StoreCoordinator(model: model)
        let error = #expect(throws: StoreError.self) { try backend.add(to: coordinator, configuration: "Main", in: dir.url) }
        guard case .incompatibleModel? = error else {
            Issue.record("expected incompatibleModel, got \(String(describing: error))")
            return
        }
        #expect(error?.localizedDescription.contains(words) == true, "\(error?.localizedDescription ?? "")")
    }

    @Test(arguments: Backend.persistent, [false, true])
    func aToManyGainingOrLosingItsInverseIsRefusedAndKeepsItsMembers(backend: Backend, hadInverse: Bool) throws {
        let dir = try TempDir()
        let before = try Self.people(inverse: hadInverse)
        let coordinator = StoreCoordinator(model: before)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        try Self.fill(coordinator, persons: 3)
        if let store = coordinator.stores.first { try coordinator.removeStore(store) }
        Self.expectRefused(backend, in: dir, model: try Self.people(inverse: !hadInverse), saying: "Person.pets")
        // Nothing was changed: the old model still reads every member.
        #expect(try Self.links(backend, in: dir, model: before) == 6)
    }

    @Test(arguments: Backend.persistent)
    func aStoreOfAnotherModelIsRefusedAndKeptWhole(backend: Backend) throws {
        let dir = try TempDir()
        let shop = StoreCoordinator(model: try Shop.model())
        try backend.add(to: shop, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: shop)
        for i in 0..<5 { try Shop.order(context, "o\(i)", qty: Int64(i)) }
        try context.save()
        if let store = shop.stores.first { try shop.removeStore(store) }
        Self.expectRefused(backend, in: dir, model: try Self.people(inverse: true), saying: "written with another model")
        let again = StoreCoordinator(model: try Shop.model())
        try backend.add(to: again, configuration: "Main", in: dir.url)
        #expect(try ObjectContext(coordinator: again).count(FetchRequest(entityName: "Order")) == 5)
    }
}

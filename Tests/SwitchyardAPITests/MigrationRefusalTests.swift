import Foundation
import Switchyard
import Testing

/// Model changes a store cannot be migrated through without losing what it holds are refused when the store is
/// added, and the store is left as it was (a fourth user trial found each of these opened "migrated", the
/// data gone): a to-many whose inverse is replaced, or becomes a to-one kept on its own, and a store written with
/// another model altogether (every row was dropped; Core Data fails with "can't find model for source store").
/// (`InverseMigrationTests`: a new to-one inverse, or one removed with the to-one, migrates.)
@Suite struct MigrationRefusalTests {
    /// Person 1-n Pet in configuration `Main`: `pets` (ordered or not) with or without its inverse `Pet.owner`,
    /// or (`detachedOwner`) without inverse beside a to-one `Pet.owner` that is no inverse of anything.
    static func people(inverse: Bool, ordered: Bool = false, detachedOwner: Bool = false) throws -> ObjectModel {
        let person = EntityDescription(
            name: "Person", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(
                name: "pets", destination: "Pet", inverse: inverse ? "owner" : nil, isToMany: true, isOrdered: ordered)])
        let pet = EntityDescription(
            name: "Pet", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: inverse || detachedOwner
                ? [RelationshipDescription(name: "owner", destination: "Person", inverse: inverse ? "pets" : nil)] : [])
        return try ObjectModel(
            entities: [person, pet], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Person", "Pet"])])
    }

    /// Saves `persons` people with two pets each (in an ordered `pets`, the second inserted first).
    static func fill(_ coordinator: StoreCoordinator, persons: Int) throws {
        let context = ObjectContext(coordinator: coordinator)
        for p in 0..<persons {
            let person = try context.insert("Person")
            try person.set("name", "p\(p)")
            for k in 0..<2 {
                let pet = try context.insert("Pet")
                try pet.set("name", "p\(p)-pet\(k)")
                if person.entity.relationship(named: "pets")?.isOrdered == true {
                    try person.insertRelatedObject(pet, at: 0, forKey: "pets")
                } else {
                    try person.addRelatedObject(pet, forKey: "pets")
                }
            }
        }
        try context.save()
    }

    /// Each person's pets by name (in relationship order when ordered, else sorted), and each pet's owner
    /// where the model has `Pet.owner`, read through `model`.
    static func members(_ backend: Backend, in dir: TempDir, model: ObjectModel) throws -> (pets: [String: [String]], owners: [String: String]) {
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let ordered = model.entity(named: "Person")?.relationship(named: "pets")?.isOrdered == true
        var pets: [String: [String]] = [:]
        for person in try context.fetch(FetchRequest(entityName: "Person")) {
            let names = try person.relatedObjects(forKey: "pets").map { try $0.get("name", as: String.self) ?? "" }
            pets[try person.get("name", as: String.self) ?? ""] = ordered ? names : names.sorted()
        }
        var owners: [String: String] = [:]
        if model.entity(named: "Pet")?.relationship(named: "owner") != nil {
            for pet in try context.fetch(FetchRequest(entityName: "Pet")) {
                if let owner = try pet.relatedObject(forKey: "owner") {
                    owners[try pet.get("name", as: String.self) ?? ""] = try owner.get("name", as: String.self)
                }
            }
        }
        if let store = coordinator.stores.first { try coordinator.removeStore(store) }
        return (pets, owners)
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

    /// The inverse replaced rather than added or removed: `Pet.owner` stays as a to-one of its own while
    /// `pets` loses it (both would need the members), or a to-one that was no inverse becomes one (its keys
    /// and the to-many's members could disagree). Refused, and the store keeps its members.
    @Test(arguments: Backend.persistent, [false, true])
    func aToManyWhoseInverseIsReplacedIsRefusedAndKeepsItsMembers(backend: Backend, hadInverse: Bool) throws {
        let dir = try TempDir()
        let before = try Self.people(inverse: hadInverse, detachedOwner: !hadInverse)
        let coordinator = StoreCoordinator(model: before)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        try Self.fill(coordinator, persons: 3)
        if let store = coordinator.stores.first { try coordinator.removeStore(store) }
        Self.expectRefused(backend, in: dir, model: try Self.people(inverse: !hadInverse, detachedOwner: hadInverse), saying: "Person.pets")
        // Nothing was changed: the old model still reads every member.
        #expect(try Self.members(backend, in: dir, model: before).pets.values.map(\.count).reduce(0, +) == 6)
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

import Foundation
import Testing
@testable import Switchyard

/// The context's object table against a plain dictionary: registering, replacing and removing objects in a
/// random order, with saved objects of two inheritance trees whose primary keys coincide (Author 1 and Book 1)
/// and unsaved objects under temporary keys.
@Suite struct ObjectRegistryTests {
    @Test(arguments: [1, 2, 3])
    func randomRegistrationsMatchADictionary(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let coordinator = StoreCoordinator(model: try TestModels.library())
        _ = try Backend.memory.add(to: coordinator, configuration: "Main", in: directory)
        let context = ObjectContext(coordinator: coordinator)
        var objects: [ManagedObject] = []
        for i in 0..<300 {
            let object = try context.insert(i % 2 == 0 ? "Author" : "Book")
            try object.set(i % 2 == 0 ? "name" : "title", "o\(i)")
            objects.append(object)
        }
        try context.save()
        for i in 0..<200 { objects.append(try context.insert(i % 2 == 0 ? "Author" : "Book")) }
        let saved = objects.compactMap(\.objectID.primaryKey)
        #expect(saved.count == 300 && Set(saved).count == 150, "Author and Book keys coincide")

        var random = SeededGenerator(seed: seed)
        var registry = ObjectRegistry()
        var reference: [ObjectID: ManagedObject] = [:]
        for step in 0..<4_000 {
            let object = objects[Int.random(in: 0..<objects.count, using: &random)]
            if Bool.random(using: &random) {
                registry[object.objectID] = object
                reference[object.objectID] = object
            } else {
                registry[object.objectID] = nil
                reference[object.objectID] = nil
            }
            if step % 97 == 0 { registry.reserveCapacity(Int.random(in: 0..<600, using: &random)) }
            guard step % 50 == 0 || step > 3_900 else { continue }
            #expect(registry.count == reference.count)
            for candidate in objects {
                #expect(registry[candidate.objectID] === reference[candidate.objectID], "step \(step): \(candidate.objectID)")
            }
            #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
        }
    }
}

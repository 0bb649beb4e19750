import Foundation
import Testing
@testable import Switchyard

/// The context's object table against a plain dictionary: registering, replacing and removing objects in a
/// random order, through the subscript and through `find` + `register(_:at:)`, with saved objects whose primary
/// keys coincide — of two inheritance trees (Author 1 and Book 1) and of two stores (Author 1 in each) — and
/// unsaved objects under temporary keys.
@Suite struct ObjectRegistryTests {
    @Test(arguments: [1, 2, 3])
    func randomRegistrationsMatchADictionary(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let coordinator = StoreCoordinator(model: try TestModels.library())
        let stores = [
            try Backend.memory.add(to: coordinator, configuration: "Main", in: directory),
            try Backend.memory.add(to: coordinator, configuration: "Main", in: directory),
        ]
        let context = ObjectContext(coordinator: coordinator)
        var objects: [ManagedObject] = []
        for i in 0..<600 {
            let object = try context.insert(i % 2 == 0 ? "Author" : "Book")
            try object.set(i % 2 == 0 ? "name" : "title", "o\(i)")
            try context.assign(object, to: stores[i / 300])
            objects.append(object)
        }
        try context.save()
        for i in 0..<200 { objects.append(try context.insert(i % 2 == 0 ? "Author" : "Book")) }
        let saved = objects.compactMap(\.objectID.primaryKey)
        #expect(saved.count == 600 && Set(saved).count == 150, "Author and Book keys coincide, in both stores")
        #expect(Set(objects.compactMap(\.objectID.storeIdentifier)).count == 2)

        var random = SeededGenerator(seed: seed)
        var registry = ObjectRegistry()
        var reference: [ObjectID: ManagedObject] = [:]
        for step in 0..<4_000 {
            let object = objects[Int.random(in: 0..<objects.count, using: &random)]
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                registry[object.objectID] = object
                reference[object.objectID] = object
            case 1:
                // A fetch's path: look up, and register where nothing was found.
                switch registry.find(object.objectID) {
                case .registered(let found):
                    #expect(found === reference[object.objectID], "step \(step): find gave another object")
                case .vacant(let vacancy):
                    #expect(reference[object.objectID] == nil, "step \(step): find missed a registered object")
                    registry.register(object, at: vacancy)
                    reference[object.objectID] = object
                }
            default:
                registry[object.objectID] = nil
                reference[object.objectID] = nil
            }
            if step % 97 == 0 { registry.reserveCapacity(Int.random(in: 0..<1_000, using: &random)) }
            guard step % 50 == 0 || step > 3_900 else { continue }
            #expect(registry.count == reference.count)
            for candidate in objects {
                #expect(registry[candidate.objectID] === reference[candidate.objectID], "step \(step): \(candidate.objectID)")
            }
            #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
        }
    }
}

import Foundation
import Switchyard
import Testing

/// `PersistentStore.fetchReferences` must hand over the references of exactly the rows `fetch(_:each:)` hands
/// over, in the same order, on every backend, whichever path a store takes: SQLite selects only `Z_PK` and
/// `Z_ENT`; LMDB walks the table reading only what the predicate compares (the general evaluator for what it
/// cannot read), and reads rows for an index lookup or sort keys; memory and PostgreSQL map the fetched rows.
/// Seeded random predicates (from `CountPredicateParityTests`, over an indexed attribute too), sort keys, limits,
/// offsets, an entity with a subentity, and requests with and without subentities.
struct FetchReferencesParityTests {
    static func model() throws -> ObjectModel {
        let sample = EntityDescription(
            name: "Sample", attributes: CountPredicateParityTests.attributes, indexes: [IndexDescription(name: "bySText", properties: ["s"])])
        let special = EntityDescription(
            name: "Special", parent: "Sample", attributes: [AttributeDescription(name: "extra", type: .integer64)])
        return try ObjectModel(
            entities: [sample, special], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Sample", "Special"])])
    }

    static func fill(_ context: ObjectContext, seed: UInt64) throws {
        var g = CountPredicateParityTests.Generator(state: seed)
        for n in 0..<300 {
            let o = try context.insert(g.chance(20) ? "Special" : "Sample")
            try CountPredicateParityTests.setValues(of: o, &g)
            if o.entity.name == "Special" { try o.set("extra", Int64(n)) }
        }
        try context.save()
        // Some deleted rows, so keys have gaps.
        let deleting = ObjectContext(coordinator: context.coordinator)
        for object in try deleting.fetch(FetchRequest(entityName: "Sample", predicate: try FetchPredicate(format: "kind == 2 AND i == 0"))) {
            try deleting.delete(object)
        }
        try deleting.save()
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func referencesAreTheFetchedRowsInOrder(seed: UInt64) throws {
        let model = try Self.model()
        let dir = try TempDir()
        var stores: [(Backend, any PersistentStore)] = []
        for backend in Backend.everyStore {
            let coordinator = StoreCoordinator(model: model)
            try backend.add(to: coordinator, configuration: "Main", in: dir.url)
            try Self.fill(ObjectContext(coordinator: coordinator), seed: seed)
            stores.append((backend, coordinator.stores[0]))
        }
        var g = CountPredicateParityTests.Generator(state: seed &* 104_729)
        var nonTrivial = 0
        for round in 0..<300 {
            var request = StoreFetchRequest(
                entityName: g.chance(20) ? "Special" : "Sample",
                predicate: g.chance(15) ? nil : CountPredicateParityTests.predicate(&g, depth: 3),
                includesSubentities: !g.chance(25))
            if g.chance(25) { request.sortKeys = [SortKey(["i", "d", "s", "kind"][g.int(4)], ascending: g.chance(50))] }
            if g.chance(20) { request.fetchLimit = g.int(40) }
            if g.chance(20) { request.fetchOffset = g.int(60) }
            let comparable = request.fetchLimit == nil && request.fetchOffset == 0
            var first: Set<RowReference>?
            for (backend, store) in stores {
                var fetched: [RowReference] = []
                try store.fetch(request) { fetched.append(RowReference(entityName: $0.entityName, primaryKey: $0.primaryKey)) }
                var references: [RowReference] = []
                try store.fetchReferences(request) { references.append($0) }
                #expect(references == fetched, "seed \(seed), round \(round), \(backend): \(request)")
                // Without a limit or offset the backends select the same rows (sort-key ties may order them
                // differently).
                guard comparable else { continue }
                if let first {
                    #expect(Set(references) == first, "seed \(seed), round \(round), \(backend) against \(stores[0].0): \(request)")
                } else {
                    first = Set(references)
                    if !references.isEmpty, references.count < 240 { nonTrivial += 1 }
                }
            }
        }
        #expect(nonTrivial > 100)
    }

    /// An error thrown by the caller's closure comes out unchanged, and stops the walk.
    @Test(arguments: Backend.everyStore)
    func aCallersErrorStopsTheWalkAndComesOutAsItIs(_ backend: Backend) throws {
        struct Stop: Error {}
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        try Self.fill(ObjectContext(coordinator: coordinator), seed: 9)
        var seen = 0
        #expect(throws: Stop.self) {
            try coordinator.stores[0].fetchReferences(StoreFetchRequest(entityName: "Sample")) { _ in
                seen += 1
                if seen == 5 { throw Stop() }
            }
        }
        #expect(seen == 5)
    }
}

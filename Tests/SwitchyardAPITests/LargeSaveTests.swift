import Foundation
import Switchyard
import Testing

/// A save of many new objects at once (larger than the SQLite store's batch that it encodes before taking the
/// write lock) behaves like a small one: all or nothing, uniqueness enforced, every value read back as set.
struct LargeSaveTests {
    static let count = 12_345

    static func model() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "code", type: .string, isOptional: false),
                AttributeDescription(name: "rank", type: .integer64, isOptional: false),
                AttributeDescription(name: "note", type: .string),
            ],
            uniquenessConstraints: [["code"]])
        return try ObjectModel(entities: [item], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item"])])
    }

    @Test(arguments: Backend.everyStore)
    func aLargeSaveIsAllOrNothing(backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        var last: ManagedObject?
        for i in 0..<Self.count {
            let o = try context.insert("Item")
            try o.set("code", "c\(i)")
            try o.set("rank", Int64(i))
            if i % 2 == 0 { try o.set("note", "n\(i)") }
            last = o
        }
        // The last object repeats the first one's code: the whole save must fail and write nothing.
        try last!.set("code", "c0")
        #expect {
            try context.save()
        } throws: { error in
            guard case let .uniquenessViolation(_, _, entity, properties, values) = error as? StoreError else { return false }
            return entity == "Item" && properties == ["code"] && values.count == 1 && values[0].contains("c0")
        }
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Item")) == 0)
        // Nor is anything left in an index (a lookup by the constrained attribute reads its index where there is one).
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(
            entityName: "Item", predicate: try FetchPredicate(format: "code == %@", "c5"))) == 0)

        try last!.set("code", "c\(Self.count - 1)")
        try context.save()
        let reader = ObjectContext(coordinator: coordinator)
        let items = try reader.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("rank")]))
        #expect(items.count == Self.count)
        var mismatches = 0
        for (i, item) in items.enumerated() {
            let note: String? = i % 2 == 0 ? "n\(i)" : nil
            if try item.get("code", as: String.self) != "c\(i)" || item.get("rank", as: Int64.self) != Int64(i)
                || item.get("note", as: String.self) != note
            {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
        // Lookups by the constrained attribute find each object once: the codes arrived out of their text order
        // ("c10" before "c2"), as names do.
        var lookupMisses: [Int] = []
        for i in Swift.stride(from: 0, to: Self.count, by: 617) {
            let found = try reader.fetch(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "code == %@", "c\(i)")))
            if try found.count != 1 || found[0].get("rank", as: Int64.self) != Int64(i) { lookupMisses.append(i) }
        }
        #expect(lookupMisses.isEmpty)
        // The saved objects' state is what the store holds: changing one and saving again works (Z_OPT 1 -> 2).
        try last!.set("rank", Int64(-1))
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "rank == -1"))) == 1)
    }
}

import Foundation
import Switchyard
import Testing

/// Saving an object that changed a few attributes writes those and keeps everything else, as Core Data's
/// `UPDATE ... SET` of the changed columns does: the other values (set, nil, or not yet written), the to-one,
/// the index over another attribute, and the version the next save checks. LMDB patches the stored row
/// rather than rewriting it from a decoded copy when no index reads a changed value; this is the user's view
/// of both ways, on every backend.
@Suite struct PartialUpdateTests {
    static func coordinator(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        let card = EntityDescription(
            name: "Card",
            attributes: [
                AttributeDescription(name: "title", type: .string, isIndexed: true),
                AttributeDescription(name: "count", type: .integer64),
                AttributeDescription(name: "score", type: .double),
                AttributeDescription(name: "note", type: .string),
                AttributeDescription(name: "due", type: .date),
                AttributeDescription(name: "blob", type: .binary),
                AttributeDescription(name: "done", type: .boolean),
            ],
            relationships: [RelationshipDescription(name: "deck", destination: "Deck", inverse: "cards")])
        let deck = EntityDescription(
            name: "Deck", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "cards", destination: "Card", inverse: "deck", isToMany: true)])
        let model = try ObjectModel(
            entities: [card, deck], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Card", "Deck"])])
        return try backend.coordinator(model, in: dir)
    }

    /// Every attribute of every card by title, as a fresh context reads it, plus its deck's name.
    static func snapshot(_ coordinator: StoreCoordinator) throws -> [String: [String: String]] {
        let context = ObjectContext(coordinator: coordinator)
        var result: [String: [String: String]] = [:]
        for card in try context.fetch(FetchRequest(entityName: "Card")) {
            var values: [String: String] = [:]
            for name in ["title", "count", "score", "note", "due", "blob", "done"] {
                values[name] = "\(try card.value(forKey: name))"
            }
            values["deck"] = try card.relatedObject(forKey: "deck").map { try $0.get("name", as: String.self) ?? "?" } ?? "none"
            result[try card.get("title", as: String.self)!] = values
        }
        return result
    }

    @Test(arguments: Backend.everyStore)
    func changedAttributesAreWrittenAndEverythingElseIsKept(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        do {
            let context = ObjectContext(coordinator: coordinator)
            let deck = try context.insert("Deck")
            try deck.set("name", "Spanish")
            for i in 0..<4 {
                let card = try context.insert("Card")
                try card.set("title", "c\(i)")
                try card.set("count", Int64(i))
                try card.set("score", i == 1 ? nil : Double(i) + 0.5)
                try card.set("note", i == 2 ? nil : "note \(i)")
                try card.set("due", Date(timeIntervalSinceReferenceDate: Double(i) * 86_400))
                try card.set("blob", Data([UInt8(i), 0, 255]))
                try card.set("done", i == 3 ? nil : i % 2 == 0)
                try card.setRelatedObject(i == 0 ? nil : deck, forKey: "deck")
            }
            try context.save()
        }
        var expected = try Self.snapshot(coordinator)
        #expect(expected.count == 4)

        let context = ObjectContext(coordinator: coordinator)
        let cards = Dictionary(uniqueKeysWithValues: try context.fetch(FetchRequest(entityName: "Card")).map { (try $0.get("title", as: String.self)!, $0) })
        // c0: one attribute in the middle of the row.
        try cards["c0"]!.set("score", 99.25)
        expected["c0"]!["score"] = "\(AttributeValue.double(99.25))"
        // c1: a nil attribute gets a value (a position the stored row lacks), a set one becomes nil, the last one changes.
        try cards["c1"]!.set("score", -1.0)
        try cards["c1"]!.set("note", String?.none)
        try cards["c1"]!.set("done", true)
        expected["c1"]!["score"] = "\(AttributeValue.double(-1))"
        expected["c1"]!["note"] = "\(AttributeValue.null)"
        expected["c1"]!["done"] = "\(AttributeValue.bool(true))"
        // c2: the indexed attribute with another one.
        try cards["c2"]!.set("title", "c2-renamed")
        try cards["c2"]!.set("blob", Data())
        expected["c2-renamed"] = expected.removeValue(forKey: "c2")!
        expected["c2-renamed"]!["title"] = "\(AttributeValue.string("c2-renamed"))"
        expected["c2-renamed"]!["blob"] = "\(AttributeValue.binary(Data()))"
        // c3: the first attribute after the title, and a long text that changes the row's length.
        let long = String(repeating: "x", count: 5_000)
        try cards["c3"]!.set("count", Int64.min)
        try cards["c3"]!.set("note", long)
        expected["c3"]!["count"] = "\(AttributeValue.integer(Int64.min))"
        expected["c3"]!["note"] = "\(AttributeValue.string(long))"
        try context.save()

        #expect(try Self.snapshot(coordinator) == expected)
        let check = ObjectContext(coordinator: coordinator)
        func count(_ format: String, _ title: String? = nil) throws -> Int {
            let predicate = try title.map { try FetchPredicate(format: format, $0) } ?? FetchPredicate(format: format)
            return try check.count(FetchRequest(entityName: "Card", predicate: predicate))
        }
        #expect(try count("title == %@", "c2") == 0, "the index no longer finds the old title")
        #expect(try count("title == %@", "c2-renamed") == 1)
        #expect(try count("title == %@", "c0") == 1, "an update of another attribute keeps the row in the index")
        #expect(try count("score > 99") == 1)
        #expect(try count("note == nil") == 2)
        #expect(try count("deck.name == %@", "Spanish") == 3)

        // The version moved on: contexts still holding the state before the next save conflict, as Core Data's
        // optimistic locking does, whether their change is to an unindexed attribute (LMDB patches the row) or to
        // the indexed one (LMDB rewrites it).
        // (The contexts are kept: an object holds its context weakly, as in Core Data.)
        let staleContexts = [ObjectContext(coordinator: coordinator), ObjectContext(coordinator: coordinator)]
        func stale(_ context: ObjectContext) throws -> [String: ManagedObject] {
            Dictionary(uniqueKeysWithValues: try context.fetch(FetchRequest(entityName: "Card")).map { (try $0.get("title", as: String.self)!, $0) })
        }
        let unindexed = try stale(staleContexts[0]), indexed = try stale(staleContexts[1])
        try cards["c0"]!.set("count", Int64(41))
        try cards["c2"]!.set("count", Int64(42))
        try context.save()
        try unindexed["c0"]!.set("done", false)
        try indexed["c2-renamed"]!.set("title", "c2-again")
        for (object, changed) in [(unindexed["c0"]!, "done"), (indexed["c2-renamed"]!, "title")] {
            do {
                try #require(object.context).save()
                Issue.record("a stale change of \(changed) was saved")
            } catch let error as StoreError {
                guard case .conflict(_, _, _, _, _, let expected, let actual) = error else {
                    Issue.record("a stale change of \(changed): \(error) is not a conflict")
                    continue
                }
                #expect(actual == expected + 1, "a stale change of \(changed): \(error)")
            }
        }
        let final = try Self.snapshot(coordinator)
        #expect(final["c0"]?["done"] == expected["c0"]?["done"], "the stale change wrote nothing")
        #expect(final["c2-renamed"] != nil && final["c2-again"] == nil, "the stale rename wrote nothing")
    }

    /// One object saved again and again while the objects fetched with it stay untouched: each save is what a
    /// fresh context reads, the object reads its own latest values, a value cleared and set again round-trips,
    /// and the neighbours (fetched in the same batch, so sharing its storage until it changes) keep theirs.
    @Test(arguments: Backend.everyStore)
    func repeatedSavesOfOneObjectLeaveTheOthersFetchedWithItAlone(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        do {
            let context = ObjectContext(coordinator: coordinator)
            for i in 0..<20 {
                let card = try context.insert("Card")
                try card.set("title", "c\(i)")
                try card.set("count", Int64(i))
                try card.set("note", "note \(i)")
            }
            try context.save()
        }
        let before = try Self.snapshot(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        let cards = try context.fetch(FetchRequest(entityName: "Card", sortKeys: [SortKey("count")]))
        try #require(cards.count == 20)
        let target = cards[7]
        for round in 1...5 {
            try target.set("count", Int64(1_000 * round))
            try target.set("note", round == 3 ? nil : "round \(round)")
            try context.save()
            #expect(try target.get("count", as: Int64.self) == Int64(1_000 * round))
            let stored = try Self.snapshot(coordinator)["c7"]
            #expect(stored?["count"] == "\(AttributeValue.integer(Int64(1_000 * round)))", "round \(round)")
            #expect(stored?["note"] == (round == 3 ? "\(AttributeValue.null)" : "\(AttributeValue.string("round \(round)"))"), "round \(round)")
        }
        for (i, card) in cards.enumerated() where i != 7 {
            #expect(try card.get("count", as: Int64.self) == Int64(i), "the neighbour c\(i) changed in memory")
            #expect(try card.get("note", as: String.self) == "note \(i)")
            #expect(!card.hasChanges)
        }
        var after = try Self.snapshot(coordinator)
        after["c7"] = before["c7"]
        #expect(after == before, "only c7 changed in the store")
        // The version moved on with every save: the object saves again without a conflict.
        try target.set("score", 1.5)
        try context.save()
        #expect(try Self.snapshot(coordinator)["c7"]?["score"] == "\(AttributeValue.double(1.5))")
    }
}

/// Entities wider than one 64-bit change mask: changes on both sides of position 64 are written and nothing
/// else moves. `Wide` has no transient attribute, so a context hands its changes to the store by position;
/// `WideT` has one among the others, whose change stays with the object and never reaches a store, as in Core
/// Data (its updates go by name).
@Suite struct WideEntityUpdateTests {
    static let width = 70
    static let transient = 66

    static func coordinator(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        func entity(_ name: String, transient: Int?) -> EntityDescription {
            EntityDescription(name: name, attributes: (0..<width).map { i in
                AttributeDescription(name: "a\(i)", type: .integer64, isTransient: transient.map { $0 == i } ?? false, isIndexed: i == 1)
            })
        }
        let model = try ObjectModel(
            entities: [entity("Wide", transient: nil), entity("WideT", transient: transient)],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Wide", "WideT"])])
        return try backend.coordinator(model, in: dir)
    }

    /// Every attribute of every row of `entity` by `a0`, as a fresh context reads it (nil as -1).
    static func stored(_ coordinator: StoreCoordinator, _ entity: String) throws -> [Int64: [Int64]] {
        let context = ObjectContext(coordinator: coordinator)
        var result: [Int64: [Int64]] = [:]
        for object in try context.fetch(FetchRequest(entityName: entity)) {
            result[try object.get("a0", as: Int64.self)!] = try (0..<width).map { try object.get("a\($0)", as: Int64.self) ?? -1 }
        }
        return result
    }

    @Test(arguments: Backend.everyStore)
    func changesBeyondSixtyFourAttributesAreWrittenAndTransientOnesAreNot(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        for entity in ["Wide", "WideT"] {
            let hasTransient = entity == "WideT"
            do {
                let context = ObjectContext(coordinator: coordinator)
                for row in 0..<3 {
                    let object = try context.insert(entity)
                    for i in 0..<Self.width where !(hasTransient && i == Self.transient) { try object.set("a\(i)", Int64(row * 1_000 + i)) }
                }
                try context.save()
            }
            var expected = try Self.stored(coordinator, entity)
            #expect(expected.count == 3, "\(entity)")
            if hasTransient { #expect(expected[1_000]?[Self.transient] == -1, "a transient attribute is never stored") }

            let context = ObjectContext(coordinator: coordinator)
            let objects = Dictionary(uniqueKeysWithValues: try context.fetch(FetchRequest(entityName: entity)).map { (try $0.get("a0", as: Int64.self)!, $0) })
            // Row 1: below and above position 64, the last one, one cleared (and the transient one).
            let row = try #require(objects[1_000])
            for (i, value) in [(2, Int64(7)), (63, 8), (64, 9), (65, nil), (69, 10)] as [(Int, Int64?)] {
                try row.set("a\(i)", value)
                expected[1_000]![i] = value ?? -1
            }
            if hasTransient { try row.set("a\(Self.transient)", Int64(12_345)) }
            // Row 2: only beyond 64.
            try objects[2_000]!.set("a67", Int64(-5))
            expected[2_000]![67] = -5
            try context.save()

            #expect(try Self.stored(coordinator, entity) == expected, "\(entity)")
            if hasTransient { #expect(try row.get("a\(Self.transient)", as: Int64.self) == 12_345, "the transient value stays with the object") }
            let check = ObjectContext(coordinator: coordinator)
            #expect(try check.count(FetchRequest(entityName: entity, predicate: FetchPredicate(format: "a69 == 10"))) == 1, "\(entity)")
            #expect(try check.count(FetchRequest(entityName: entity, predicate: FetchPredicate(format: "a65 == nil"))) == 1, "\(entity)")
            #expect(try check.count(FetchRequest(entityName: entity, predicate: FetchPredicate(format: "a1 == 1001"))) == 1, "the index still finds the row")
            // The version moved on: another save of the same object is no conflict.
            try row.set("a68", Int64(11))
            try context.save()
            #expect(try Self.stored(coordinator, entity)[1_000]?[68] == 11, "\(entity)")
        }
    }
}

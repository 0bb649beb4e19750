import Foundation
import Switchyard
import Testing

/// Counting with a predicate must give the same number on every backend, whichever path a store takes to
/// answer it (SQL on SQLite; on LMDB, comparisons read straight from the encoded rows, with the general
/// evaluator for what they cannot read; the evaluator on memory), and the same as fetching and counting.
/// Seeded random predicates over every kind of scalar attribute, with nulls, mixed numeric kinds, text against
/// numbers, `BETWEEN`, `IN` with nulls, literal `nil` tests, and AND / OR / NOT.
struct CountPredicateParityTests {
    /// The sample entity's attributes: a scalar of every kind, all optional but `kind`.
    static let attributes = [
        AttributeDescription(name: "i", type: .integer64),
        AttributeDescription(name: "small", type: .integer16),
        AttributeDescription(name: "d", type: .double),
        AttributeDescription(name: "b", type: .boolean),
        AttributeDescription(name: "t", type: .date),
        AttributeDescription(name: "s", type: .string),
        AttributeDescription(name: "dec", type: .decimal),
        AttributeDescription(name: "kind", type: .integer32, isOptional: false, defaultValue: .integer(0)),
    ]

    static func model() throws -> ObjectModel {
        let sample = EntityDescription(name: "Sample", attributes: attributes)
        return try ObjectModel(entities: [sample], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Sample"])])
    }

    /// A small deterministic generator (SplitMix64), so a failure names a seed that reproduces it.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    }

    static let strings = ["", "a", "ab", "b", "B", "é", "zz", "10", "abc"]

    static func constant(_ g: inout Generator) -> AttributeValue {
        switch g.int(7) {
        case 0: return .null
        case 1: return .integer(Int64(g.int(9)) - 4)
        case 2: return .double(Double(g.int(17)) / 2 - 4)
        case 3: return .bool(g.chance(50))
        case 4: return .date(Date(timeIntervalSinceReferenceDate: Double(g.int(9)) - 4))
        case 5: return .string(strings[g.int(strings.count)])
        default: return .integer(Int64(g.int(3)))
        }
    }

    static func predicate(_ g: inout Generator, depth: Int) -> FetchPredicate {
        let keys = ["i", "small", "d", "b", "t", "s", "kind", "dec"]
        if depth > 0, g.chance(45) {
            switch g.int(3) {
            case 0: return .and((0..<(1 + g.int(3))).map { _ in predicate(&g, depth: depth - 1) })
            case 1: return .or((0..<(1 + g.int(3))).map { _ in predicate(&g, depth: depth - 1) })
            default: return .not(predicate(&g, depth: depth - 1))
            }
        }
        // The decimal attribute appears rarely: its rows take the general path.
        var key = keys[g.int(keys.count - 1)]
        if g.chance(5) { key = "dec" }
        let path = PredicateOperand.keyPath([key])
        switch g.int(10) {
        case 0:
            let list = (0..<g.int(5)).map { _ in PredicateOperand.constant(constant(&g)) }
            return .comparison(Comparison(path, .in, .list(list)))
        case 1:
            return .comparison(Comparison(path, .between, .list([.constant(constant(&g)), .constant(constant(&g))])))
        case 2:
            return .comparison(Comparison(path, g.chance(50) ? .equal : .notEqual, .constant(.null)))
        case 3:
            return .constant(g.chance(50))
        default:
            let ops: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
            let op = ops[g.int(ops.count)]
            let value = PredicateOperand.constant(constant(&g))
            return .comparison(g.chance(25) ? Comparison(value, op, path) : Comparison(path, op, value))
        }
    }

    static func fill(_ context: ObjectContext, seed: UInt64) throws {
        var g = Generator(state: seed)
        for _ in 0..<240 { try setValues(of: try context.insert("Sample"), &g) }
        try context.save()
    }

    /// Random values for `attributes`, each but `kind` left nil now and then.
    static func setValues(of o: ManagedObject, _ g: inout Generator) throws {
        if !g.chance(20) { try o.set("i", Int64(g.int(9)) - 4) }
        if !g.chance(20) { try o.set("small", Int16(g.int(5)) - 2) }
        if !g.chance(20) { try o.set("d", Double(g.int(17)) / 2 - 4) }
        if !g.chance(20) { try o.set("b", g.chance(50)) }
        if !g.chance(20) { try o.set("t", Date(timeIntervalSinceReferenceDate: Double(g.int(9)) - 4)) }
        if !g.chance(20) { try o.set("s", strings[g.int(strings.count)]) }
        if g.chance(10) { try o.set("dec", Decimal(g.int(9)) - 4) }
        try o.set("kind", Int32(g.int(3)))
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func countsAgreeAcrossBackendsAndWithFetch(seed: UInt64) throws {
        let model = try Self.model()
        let dir = try TempDir()
        var contexts: [(Backend, ObjectContext)] = []
        for backend in Backend.everyStore {
            let coordinator = StoreCoordinator(model: model)
            try backend.add(to: coordinator, configuration: "Main", in: dir.url)
            try Self.fill(ObjectContext(coordinator: coordinator), seed: seed)
            contexts.append((backend, ObjectContext(coordinator: coordinator)))
        }
        var g = Generator(state: seed &* 7919)
        var nonTrivial = 0
        for _ in 0..<400 {
            let predicate = Self.predicate(&g, depth: 3)
            let request = FetchRequest(entityName: "Sample", predicate: predicate)
            let reference = try contexts[2].1.fetch(request).count
            if reference > 0, reference < 240 { nonTrivial += 1 }
            for (backend, context) in contexts {
                let count = try context.count(request)
                #expect(count == reference, "seed \(seed), \(backend): count \(count), memory fetch \(reference) for \(predicate.format)")
                if backend != .memory {
                    let fetched = try context.fetch(request).count
                    #expect(fetched == reference, "seed \(seed), \(backend): fetch \(fetched), memory fetch \(reference) for \(predicate.format)")
                }
            }
        }
        // The generator must mostly produce predicates that split the rows, or the comparison says little.
        #expect(nonTrivial > 150)
    }

    /// A count whose attribute comes after values of every kind and size in a row (strings of 0, 127, 128 and
    /// 20,000 bytes, integers from Int64.min to Int64.max, decimals, UUIDs, data, URIs, dates, booleans, nil):
    /// LMDB reads it from the encoded row past all of those, and must count what SQLite, memory and
    /// PostgreSQL count, and what a fetch finds.
    @Test(arguments: Backend.everyStore)
    func aCountReadsPastValuesOfEveryKindAndSize(_ backend: Backend) throws {
        let entity = EntityDescription(
            name: "Wide",
            attributes: [
                AttributeDescription(name: "text", type: .string),
                AttributeDescription(name: "big", type: .integer64),
                AttributeDescription(name: "dec", type: .decimal),
                AttributeDescription(name: "id", type: .uuid),
                AttributeDescription(name: "blob", type: .binary),
                AttributeDescription(name: "link", type: .uri),
                AttributeDescription(name: "when", type: .date),
                AttributeDescription(name: "flag", type: .boolean),
                AttributeDescription(name: "ratio", type: .double),
                AttributeDescription(name: "rank", type: .integer64),
            ])
        let model = try ObjectModel(entities: [entity], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Wide"])])
        let dir = try TempDir()
        let coordinator = try backend.coordinator(model, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let texts = ["", String(repeating: "a", count: 127), String(repeating: "b", count: 128), String(repeating: "é", count: 10_000), nil]
        let bigs: [Int64?] = [0, -1, 127, 128, -64, Int64.min, Int64.max, 1 << 56, nil]
        var expected: [Int64: Int] = [:]
        var ranks: [Int64?] = []
        for i in 0..<180 {
            let object = try context.insert("Wide")
            try object.set("text", texts[i % texts.count])
            try object.set("big", bigs[i % bigs.count])
            try object.set("dec", i % 4 == 0 ? nil : Decimal(string: "\(i).\(String(repeating: "7", count: i % 13))"))
            try object.set("id", i % 3 == 0 ? nil : UUID())
            try object.set("blob", i % 5 == 0 ? nil : Data(repeating: UInt8(i % 256), count: (i * 37) % 300))
            try object.set("link", i % 6 == 0 ? nil : URL(string: "https://example.com/\(i)"))
            try object.set("when", i % 7 == 0 ? nil : Date(timeIntervalSince1970: Double(i) * 1_000.5))
            try object.set("flag", i % 8 == 0 ? nil : i % 2 == 0)
            try object.set("ratio", i % 9 == 0 ? nil : Double(i) / 7)
            let rank: Int64? = i % 10 == 0 ? nil : Int64(i % 23) - 5
            try object.set("rank", rank)
            ranks.append(rank)
        }
        try context.save()
        for threshold: Int64 in [-6, -5, 0, 7, 17, 18] {
            expected[threshold] = ranks.filter { $0.map { $0 >= threshold } ?? false }.count
        }
        let reader = ObjectContext(coordinator: coordinator)
        for (threshold, count) in expected {
            let request = FetchRequest(entityName: "Wide", predicate: try FetchPredicate(format: "rank >= %lld", threshold))
            #expect(try reader.count(request) == count, "rank >= \(threshold)")
            #expect(try reader.fetch(request).count == count, "rank >= \(threshold), fetched")
        }
        let flagged = try reader.count(FetchRequest(entityName: "Wide", predicate: try FetchPredicate(format: "flag == YES AND ratio > 10")))
        let flaggedExpected = (0..<180).filter { (i: Int) -> Bool in
            let flagSet = i % 8 != 0 && i % 2 == 0
            let ratioAbove = i % 9 != 0 && Double(i) / 7 > 10
            return flagSet && ratioAbove
        }.count
        #expect(flagged == flaggedExpected)
    }
}

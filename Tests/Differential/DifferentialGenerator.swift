import Foundation

/// Generates a random, reproducible sequence of steps from a seed.
public struct DifferentialGenerator {
    var rng: SplitMix64
    var nextUID: Int64 = 1
    var owners: [Int64] = []
    var items: [Int64] = []
    var tags: [Int64] = []

    static let titles = ["alpha", "Alpha", "béta", "Beta", "gamma", "", "delta x", "ÉCHO", "echo"]
    static let names = ["Ann", "bob", "Émile", "zoe", "ann"]
    static let labels = ["red", "Red", "green", "blue", "réd"]
    static let notes = ["n1", "N1", "note", "", "é"]
    static let prices = [0.5, 1.0, 2.25, -3.0, 10.0, 0.0, 9_007_199_254_740_992.0, -9_007_199_254_740_994.0]
    /// Integers a Double cannot hold, and their neighbours: compared with doubles, every store must be exact.
    static let bigIntegers: [Int64] = [9_007_199_254_740_993, 9_007_199_254_740_992, -9_007_199_254_740_993, .max]
    static let bigDoubles = [9_007_199_254_740_992.0, -9_007_199_254_740_994.0, 0x1p63, -0x1p63, 2.5]

    public init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    public mutating func sequence(length: Int) -> [DifferentialOp] {
        (0..<length).map { _ in next() }
    }

    private mutating func pick<T>(_ values: [T]) -> T { values[Int(rng.next() % UInt64(values.count))] }
    private mutating func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &rng) }
    private mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    private mutating func uid(_ pool: [Int64]) -> Int64 { pool.isEmpty ? 0 : pick(pool) }

    mutating func next() -> DifferentialOp {
        let roll = Int(rng.next() % 100)
        switch roll {
        case 0..<6:
            let u = nextUID; nextUID += 1; owners.append(u)
            return .insertOwner(uid: u, name: pick(Self.names), score: chance(0.3) ? nil : int(0...5))
        case 6..<16:
            let u = nextUID; nextUID += 1; items.append(u)
            return .insertItem(
                uid: u, special: chance(0.3), title: pick(Self.titles), qty: int(0...9), price: pick(Self.prices),
                note: chance(0.4) ? nil : pick(Self.notes), level: int(0...3))
        case 16..<20:
            let u = nextUID; nextUID += 1; tags.append(u)
            return .insertTag(uid: u, label: pick(Self.labels))
        case 20..<24: return .setString(uid: uid(items), key: "title", value: pick(Self.titles))
        case 24..<27: return .setString(uid: uid(items), key: "note", value: chance(0.4) ? nil : pick(Self.notes))
        case 27..<30: return .setInteger(uid: uid(items), key: "qty", value: chance(0.1) ? pick(Self.bigIntegers) : int(0...9))
        case 30..<32: return .setPrice(uid: uid(items), value: pick(Self.prices))
        case 32..<34: return .setString(uid: uid(owners), key: "name", value: pick(Self.names))
        case 34..<36: return .setInteger(uid: uid(owners), key: "score", value: chance(0.3) ? nil : int(0...5))
        case 36..<37: return .setString(uid: uid(tags), key: "label", value: pick(Self.labels))
        case 37..<38: return .setInteger(uid: uid(items), key: "level", value: int(0...3))
        case 38..<44: return .setOwner(item: uid(items), owner: chance(0.15) ? nil : uid(owners))
        case 44..<49: return .tag(item: uid(items), tag: uid(tags))
        case 49..<51: return .untag(item: uid(items), tag: uid(tags))
        case 51..<55: return .enqueue(owner: uid(owners), item: uid(items), index: Int(int(0...4)))
        case 55..<56: return .dequeue(owner: uid(owners), item: uid(items))
        case 56..<58: return .moveInQueue(owner: uid(owners), from: Int(int(0...3)), to: Int(int(0...3)))
        case 58..<62: return .delete(uid: pick([uid(items), uid(items), uid(owners), uid(tags)]))
        case 62..<70: return .save
        case 70..<72: return .rollback
        case 72..<74: return .refreshUnchanged(uid: pick([uid(items), uid(owners)]))
        case 74..<76: return .checkRelationships
        case 76..<79: return .pin(tag: uid(tags), item: uid(items))
        case 79..<80: return .unpin(tag: uid(tags), item: uid(items))
        default: return .fetch(fetchSpec())
        }
    }

    // MARK: - Fetches

    mutating func fetchSpec() -> FetchSpec {
        let entity = pick(["Item", "Item", "Item", "Special", "Owner", "Owner", "Tag"])
        let predicate: PredicateSpec? = chance(0.15) ? nil : predicate(for: entity, depth: 0)
        var sort: [SortSpec] = []
        let keys: [String]
        switch entity {
        case "Owner": keys = ["name", "score"]
        case "Tag": keys = ["label"]
        case "Special": keys = ["title", "qty", "price", "note", "level", "owner.name"]
        default: keys = ["title", "qty", "price", "note", "owner.name"]
        }
        for _ in 0..<Int(int(0...2)) { sort.append(SortSpec(key: pick(keys), ascending: chance(0.5))) }
        let total = chance(0.7)
        if total { sort.append(SortSpec(key: "uid", ascending: chance(0.5))) }
        let limited = chance(0.4)
        var spec = FetchSpec(
            entity: entity, includesSubentities: entity != "Item" || chance(0.85), predicate: predicate, sort: sort,
            limit: limited ? Int(int(0...5)) : nil, offset: chance(0.3) ? Int(int(0...3)) : 0, countOnly: chance(0.15))
        // Some reads walk with forEach in small batches (several batches over the sequence's few objects).
        if chance(0.25) { spec.walkBatchSize = Int(int(1...4)) }
        return spec
    }

    mutating func predicate(for entity: String, depth: Int) -> PredicateSpec {
        if depth < 2, chance(0.3) {
            let parts = (0..<Int(int(2...3))).map { _ in predicate(for: entity, depth: depth + 1) }
            return chance(0.5) ? .and(parts) : .or(parts)
        }
        if depth < 2, chance(0.1) { return .not(predicate(for: entity, depth: depth + 1)) }
        switch entity {
        case "Owner": return ownerTerm()
        case "Tag": return tagTerm()
        default: return itemTerm(special: entity == "Special")
        }
    }

    mutating func stringOp() -> (String, String) {
        (pick(["==", "!=", "BEGINSWITH", "CONTAINS", "ENDSWITH", "<", ">="]), pick(["", "", "[c]", "[cd]", "[d]"]))
    }

    mutating func intOp() -> String { pick(["==", "!=", "<", "<=", ">", ">="]) }

    mutating func itemTerm(special: Bool) -> PredicateSpec {
        let roll = Int(int(0...(special ? 15 : 14)))
        switch roll {
        case 0, 1:
            let (op, options) = stringOp()
            return .compare(key: "title", op: op, options: options, value: .string(pick(Self.titles)))
        case 2:
            let (op, options) = stringOp()
            return .compare(key: "note", op: op, options: options, value: .string(pick(Self.notes)))
        case 3: return .compare(key: "qty", op: intOp(), options: "", value: chance(0.15) ? .double(pick(Self.bigDoubles)) : .integer(int(0...9)))
        case 4: return .compare(key: "price", op: intOp(), options: "", value: chance(0.15) ? .integer(pick(Self.bigIntegers)) : .double(pick(Self.prices)))
        case 5: let a = int(0...9), b = int(0...9); return .between(key: "qty", low: min(a, b), high: max(a, b))
        // Now and then a list longer than SQLPredicateCompiler binds element by element (16).
        case 6:
            let long = chance(0.2)
            return .inList(key: pick(["qty", "uid"]), values: (0..<Int(long ? int(17...40) : int(0...4))).map { _ in long ? int(0...60) : int(0...9) })
        case 7: return .isNil(key: pick(["note", "owner", "queuedBy", "owner.score"]), negated: chance(0.5))
        case 8:
            let (op, options) = stringOp()
            return .compare(key: "owner.name", op: op, options: options, value: .string(pick(Self.names)))
        case 9: return .objectIs(key: pick(["owner", "queuedBy"]), uid: uid(owners), negated: chance(0.3))
        case 10: return .objectIn(key: pick(["owner", "SELF"]), uids: [uid(owners), uid(items)].filter { _ in chance(0.7) } + [uid(owners)])
        case 11:
            let (op, options) = stringOp()
            return .aggregate(modifier: pick(["ANY", "ANY", "ALL", "NONE"]), path: "tags", key: "label", op: op, options: options, value: .string(pick(Self.labels)))
        case 12: return .count(path: "tags", op: intOp(), value: int(0...3))
        case 13: return .compare(key: "owner.score", op: intOp(), options: "", value: .integer(int(0...5)))
        case 14: return .compare(key: "uid", op: intOp(), options: "", value: .integer(int(0...Int64(max(1, nextUID)))))
        default: return .compare(key: "level", op: intOp(), options: "", value: .integer(int(0...3)))
        }
    }

    mutating func ownerTerm() -> PredicateSpec {
        switch Int(int(0...8)) {
        case 0, 1:
            let (op, options) = stringOp()
            return .compare(key: "name", op: op, options: options, value: .string(pick(Self.names)))
        case 8:
            // Across two to-many relationships: every / some / no tag of any of the owner's items.
            let (op, options) = stringOp()
            return .aggregate(modifier: pick(["ANY", "ALL", "NONE"]), path: "items.tags", key: "label", op: op, options: options, value: .string(pick(Self.labels)))
        case 2: return .compare(key: "score", op: intOp(), options: "", value: .integer(int(0...5)))
        case 3: return .isNil(key: "score", negated: chance(0.5))
        case 4: return .aggregate(modifier: pick(["ANY", "ALL", "NONE"]), path: "items", key: "qty", op: intOp(), options: "", value: .integer(int(0...9)))
        case 5: return .count(path: pick(["items", "queue"]), op: intOp(), value: int(0...3))
        case 6:
            let (op, options) = stringOp()
            return .aggregate(modifier: "ANY", path: "queue", key: "title", op: op, options: options, value: .string(pick(Self.titles)))
        default: return .objectIs(key: "SELF", uid: uid(owners), negated: chance(0.3))
        }
    }

    mutating func tagTerm() -> PredicateSpec {
        switch Int(int(0...6)) {
        case 0:
            let (op, options) = stringOp()
            return .compare(key: "label", op: op, options: options, value: .string(pick(Self.labels)))
        case 5:
            // Through a to-one that may be nil: an item without an owner fails ALL (SQL's LEFT JOIN NULL).
            let (op, options) = stringOp()
            return .aggregate(modifier: pick(["ANY", "ALL", "NONE"]), path: "items", key: "owner.name", op: op, options: options, value: .string(pick(Self.names)))
        case 1: return .aggregate(modifier: pick(["ANY", "NONE"]), path: "items", key: "qty", op: intOp(), options: "", value: .integer(int(0...9)))
        case 2: return .count(path: "items", op: intOp(), value: int(0...3))
        case 3: return .count(path: "pinned", op: intOp(), value: int(0...3))
        case 4:
            let (op, options) = stringOp()
            return .aggregate(modifier: pick(["ANY", "ALL", "NONE"]), path: "pinned", key: "title", op: op, options: options, value: .string(pick(Self.titles)))
        default:
            let (op, options) = stringOp()
            return .aggregate(modifier: "ANY", path: "items", key: "title", op: op, options: options, value: .string(pick(Self.titles)))
        }
    }
}

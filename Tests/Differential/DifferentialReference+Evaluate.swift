import Foundation

/// SQL's three truth values, as the library documents its predicates.
enum Truth3 { case t, f, u }

extension DifferentialReference {
    func matches(_ spec: PredicateSpec?, _ uid: Int64) -> Bool {
        guard let spec else { return true }
        return truth(spec, uid) == .t
    }

    func truth(_ spec: PredicateSpec, _ uid: Int64) -> Truth3 {
        switch spec {
        case let .compare(key, op, options, literal):
            return compare(value(uid, key), op, options, literal)
        case let .between(key, low, high):
            guard case .int(let v) = value(uid, key) else { return .u }
            return v >= low && v <= high ? .t : .f
        case let .inList(key, values):
            guard case .int(let v) = value(uid, key) else { return values.isEmpty ? .f : .u }
            return values.contains(v) ? .t : .f
        case let .isNil(key, negated):
            let isNull = value(uid, key) == .null
            return isNull != negated ? .t : .f
        case let .objectIs(key, argument, negated):
            guard case .int(let target) = value(uid, key) else { return .u }
            let equal = target == argument && fits(argument, key: key, from: uid)
            return equal != negated ? .t : .f
        case let .objectIn(key, arguments):
            guard case .int(let target) = value(uid, key) else { return .u }
            return arguments.contains { $0 == target && fits($0, key: key, from: uid) } ? .t : .f
        case let .aggregate(modifier, path, key, op, options, literal):
            let results = members(uid, path).map { compare(value($0, key), op, options, literal) == .t }
            switch modifier {
            case "ALL": return results.allSatisfy { $0 } ? .t : .f
            case "NONE": return results.contains(true) ? .f : .t
            default: return results.contains(true) ? .t : .f
            }
        case let .count(path, op, n):
            return compare(.int(Int64(members(uid, path).count)), op, "", .integer(n))
        case .and(let parts):
            var result = Truth3.t
            for part in parts {
                switch truth(part, uid) {
                case .f: return .f
                case .u: result = .u
                case .t: break
                }
            }
            return result
        case .or(let parts):
            var result = Truth3.f
            for part in parts {
                switch truth(part, uid) {
                case .t: return .t
                case .u: result = .u
                case .f: break
                }
            }
            return result
        case .not(let inner):
            switch truth(inner, uid) {
            case .t: return .f
            case .f: return .t
            case .u: return .u
            }
        }
    }

    /// Whether an object argument is of the entity the key path leads to (an Owner where an Item is meant
    /// matches nothing).
    func fits(_ argument: Int64, key: String, from uid: Int64) -> Bool {
        guard let entity = entityOf[argument] else { return false }
        switch key {
        case "owner", "queuedBy": return entity == "Owner"
        default:
            let own = state.objects[uid]?.entity ?? ""
            if own == "Special" || own == "Item" { return entity == "Item" || entity == "Special" }
            return entity == own
        }
    }

    static func fold(_ s: String, _ options: String) -> String {
        var fold: String.CompareOptions = []
        if options.contains("c") { fold.insert(.caseInsensitive) }
        if options.contains("d") { fold.insert(.diacriticInsensitive) }
        return fold.isEmpty ? s : s.folding(options: fold, locale: nil)
    }

    func compare(_ left: Value, _ op: String, _ options: String, _ literal: PredicateSpec.Literal) -> Truth3 {
        switch (left, literal) {
        case (.null, _): return .u
        case (.string(let l0), .string(let r0)):
            let l = Array(Self.fold(l0, options).utf8), r = Array(Self.fold(r0, options).utf8)
            switch op {
            case "==": return l == r ? .t : .f
            case "!=": return l != r ? .t : .f
            case "BEGINSWITH": return l.starts(with: r) ? .t : .f
            case "ENDSWITH": return l.reversed().starts(with: r.reversed()) ? .t : .f
            case "CONTAINS":
                if r.isEmpty { return .t }
                guard l.count >= r.count else { return .f }
                for i in 0...(l.count - r.count) where Array(l[i..<(i + r.count)]) == r { return .t }
                return .f
            case "<": return l.lexicographicallyPrecedes(r) ? .t : .f
            case ">=": return !l.lexicographicallyPrecedes(r) ? .t : .f
            default: fatalError("string operator \(op)")
            }
        default:
            let right: Value
            switch literal {
            case .integer(let i): right = .int(i)
            case .double(let d): right = .double(d)
            case .string: fatalError("mixed kinds \(left) \(literal)")
            }
            let c = Self.numberOrder(left, right)
            switch op {
            case "==": return c == 0 ? .t : .f
            case "!=": return c != 0 ? .t : .f
            case "<": return c < 0 ? .t : .f
            case "<=": return c <= 0 ? .t : .f
            case ">": return c > 0 ? .t : .f
            case ">=": return c >= 0 ? .t : .f
            default: fatalError("number operator \(op)")
            }
        }
    }

    /// Two numbers by their exact values: an integer and a double as the mathematical numbers they are (an
    /// integer beyond 2^53 is not the double it would round to), worked out through the double's floor.
    static func numberOrder(_ a: Value, _ b: Value) -> Int {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x == y ? 0 : (x < y ? -1 : 1) }
        func exact(_ i: Int64, _ d: Double) -> Int {
            let floor = d.rounded(.down)
            if floor < -0x1p63 { return 1 }
            if floor >= 0x1p63 { return -1 }
            let f = Int64(floor)
            if i != f { return sign(i, f) }
            return d > floor ? -1 : 0
        }
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.double(let x), .double(let y)): return sign(x, y)
        case (.int(let i), .double(let d)): return exact(i, d)
        case (.double(let d), .int(let i)): return -exact(i, d)
        default: fatalError("not numbers: \(a) \(b)")
        }
    }

    // MARK: - Fetch

    /// The uids a fetch returns: live objects of the entity that match, sorted, then offset and limit.
    func fetch(_ spec: FetchSpec) -> [Int64] {
        let kinds: Set<String> = spec.entity == "Item" && spec.includesSubentities ? ["Item", "Special"] : [spec.entity]
        var result = state.objects.filter { kinds.contains($0.value.entity) && !state.deleted.contains($0.key) }.map(\.key)
        result = result.filter { matches(spec.predicate, $0) }
        result.sort { a, b in
            for key in spec.sort {
                let c = Self.order(value(a, key.key), value(b, key.key))
                if c != 0 { return key.ascending ? c < 0 : c > 0 }
            }
            return a < b
        }
        // A limit of 0 means no limit, as in Core Data.
        let start = min(spec.offset, result.count)
        let end = spec.limit.flatMap { $0 == 0 ? nil : min(start + $0, result.count) } ?? result.count
        return Array(result[start..<end])
    }

    /// NULL first, numbers by value, strings by UTF-8 bytes.
    static func order(_ a: Value, _ b: Value) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.string(let x), .string(let y)):
            if x.utf8.elementsEqual(y.utf8) { return 0 }
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1
        default:
            return numberOrder(a, b)
        }
    }
}

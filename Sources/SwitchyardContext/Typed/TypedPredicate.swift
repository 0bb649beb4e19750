import Foundation
import SwitchyardQuery

// MARK: - TypedPredicate

/// A predicate written against the key paths of an `EntityObject` type, compiled to the same `FetchPredicate`
/// (and so the same SQL and in-memory evaluation) as a format string.
///
/// ```swift
/// try context.fetch(Message.self, where: \.text == "hi" && \.sentAt > cutoff)
/// try context.fetch(Message.self, where: .beginsWith(\.link, "https://") || \.chat == chat)
/// try context.fetch(Chat.self, where: .any(\.messages, \.text == "hi"))
/// ```
///
/// A combination NSPredicate's per-comparison `ANY`/`ALL`/`NONE` cannot say (see `any(_:_:)`) is kept as a
/// problem: typed fetches, counts, walks and observations given such a predicate throw
/// `QueryError.unsupported` naming it, rather than run something that matches other rows.
public struct TypedPredicate<Root: EntityObject>: Sendable {
    private let stored: FetchPredicate
    /// Why this predicate cannot be run, when it cannot.
    package let problem: String?

    /// The predicate as the stores run it; `FALSE` when it combines quantifiers in a way no per-comparison
    /// modifier can say (the typed fetch methods throw for such a predicate instead of running it).
    public var predicate: FetchPredicate { problem == nil ? stored : .constant(false) }

    /// Wraps a predicate built another way (a format string, say) over the same entity.
    public init(_ predicate: FetchPredicate) {
        self.stored = predicate
        self.problem = nil
    }

    private init(_ predicate: FetchPredicate, problem: String?) {
        self.stored = predicate
        self.problem = problem
    }

    /// The predicate to run, or `QueryError.unsupported` saying why it cannot be.
    @usableFromInline
    package func checked() throws -> FetchPredicate {
        if let problem { throw QueryError.unsupported(problem) }
        return stored
    }

    /// `inner` quantified over to-many `name`, or a predicate carrying the reason it cannot be.
    private static func quantified<Destination>(
        _ name: String, _ quantifier: ComparisonModifier, _ inner: TypedPredicate<Destination>
    ) -> Self {
        if let problem = inner.problem { return Self(.constant(false), problem: problem) }
        if let result = inner.stored.quantified(over: name, by: quantifier) { return Self(result) }
        return Self(.constant(false), problem: """
            \(quantifier.rawValue) over '\(name)' of (\(inner.stored.format)) cannot be expressed: a quantifier applies to \
            each comparison on its own (as in NSPredicate, without SUBQUERY), so it holds only for a single comparison, \
            ANY or NONE over OR, ALL over AND, and ANY inside ANY, ANY inside NONE, NONE or ALL inside ALL, without @count or \
            a key path on the right; \
            write the test as such, or fetch the members and test them in Swift
            """)
    }

    package static func compare(
        _ keyPath: PartialKeyPath<Root>, _ op: ComparisonOperator, _ value: PredicateOperand, options: ComparisonOptions = []
    ) -> Self {
        guard let operand = KeyPathNameCache.operand(of: keyPath) else { return Self(.constant(false), problem: Root.unlisted(keyPath)) }
        return Self(.comparison(Comparison(operand, op, value, options: options)))
    }

    /// `build` given the model name of `keyPath`, or a predicate carrying the problem of a key path the type does
    /// not list (typed fetches then throw it rather than stop the program).
    private static func on(_ keyPath: PartialKeyPath<Root>, _ build: (String) -> Self) -> Self {
        guard let name = KeyPathNameCache.name(of: keyPath) else { return Self(.constant(false), problem: Root.unlisted(keyPath)) }
        return build(name)
    }

    /// `key BEGINSWITH value`, with `[c]`/`[d]` as `options` say.
    public static func beginsWith(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(keyPath, .beginsWith, .constant(.string(value)), options: options)
    }

    /// `key BEGINSWITH value` on an optional attribute (nil never matches).
    public static func beginsWith(_ keyPath: KeyPath<Root, String?>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(keyPath, .beginsWith, .constant(.string(value)), options: options)
    }

    /// `key ENDSWITH value`.
    public static func endsWith(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(keyPath, .endsWith, .constant(.string(value)), options: options)
    }

    /// `key ENDSWITH value` on an optional attribute (nil never matches).
    public static func endsWith(_ keyPath: KeyPath<Root, String?>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(keyPath, .endsWith, .constant(.string(value)), options: options)
    }

    /// `key CONTAINS value`.
    public static func contains(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(keyPath, .contains, .constant(.string(value)), options: options)
    }

    /// `key CONTAINS value` on an optional attribute.
    public static func contains(_ keyPath: KeyPath<Root, String?>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(keyPath, .contains, .constant(.string(value)), options: options)
    }

    /// `key ==[options] value` (case- or diacritic-insensitive equality).
    public static func equals(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions) -> Self {
        compare(keyPath, .equal, .constant(.string(value)), options: options)
    }

    /// `key ==[options] value` on an optional attribute (nil never matches).
    /// ```swift
    /// let lounges = try context.fetch(VIPCustomer.self, where: .equals(\.perk, "LOUNGE", options: .caseInsensitive))
    /// ```
    public static func equals(_ keyPath: KeyPath<Root, String?>, _ value: String, options: ComparisonOptions) -> Self {
        compare(keyPath, .equal, .constant(.string(value)), options: options)
    }

    /// `key IN {values}`.
    public static func `in`<Value: AttributeConvertible>(_ keyPath: KeyPath<Root, Value>, _ values: [Value]) -> Self {
        compare(keyPath, .in, .list(values.map { .constant($0.attributeValue) }))
    }

    /// `key IN {values}` on an optional attribute: an object whose value is nil matches only when `values`
    /// holds nil (`[nil, 3]`), as in NSPredicate.
    public static func `in`<Value: AttributeConvertible>(_ keyPath: KeyPath<Root, Value?>, _ values: [Value?]) -> Self {
        let members = values.compactMap { $0 }.map { PredicateOperand.constant($0.attributeValue) }
        let listed = compare(keyPath, .in, .list(members))
        return values.contains(where: { $0 == nil }) ? listed || compare(keyPath, .equal, .constant(.null)) : listed
    }

    /// `relationship IN %@` with objects.
    public static func `in`<Destination: EntityObject>(_ keyPath: KeyPath<Root, Destination?>, _ objects: [Destination]) -> Self {
        compare(keyPath, .in, .list(objects.map { .object($0.objectID) }))
    }

    /// `key BETWEEN {low, high}`.
    public static func between<Value: AttributeConvertible>(_ keyPath: KeyPath<Root, Value>, _ low: Value, _ high: Value) -> Self {
        compare(keyPath, .between, .list([.constant(low.attributeValue), .constant(high.attributeValue)]))
    }

    /// `key BETWEEN {low, high}` on an optional attribute: an object whose value is nil never matches.
    public static func between<Value: AttributeConvertible>(_ keyPath: KeyPath<Root, Value?>, _ low: Value, _ high: Value) -> Self {
        compare(keyPath, .between, .list([.constant(low.attributeValue), .constant(high.attributeValue)]))
    }

    /// `toOne.<inner>`: `inner` evaluated on the object at the end of a to-one relationship (nil never matches).
    public static func through<Destination: EntityObject>(_ keyPath: KeyPath<Root, Destination?>, _ inner: TypedPredicate<Destination>) -> Self {
        on(keyPath) { Self(inner.stored.prefixing($0), problem: inner.problem) }
    }

    /// `ANY toMany.<comparison>`: some member matches `comparison`.
    ///
    /// As in NSPredicate, the quantifier goes on each comparison, so `comparison` is a single comparison or an
    /// OR of them (`ANY a OR ANY b` is the same test); an AND or NOT inside, which would need all its terms to
    /// hold for one member, cannot be said this way and makes typed fetches throw `QueryError.unsupported`.
    public static func any<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ comparison: TypedPredicate<Destination>) -> Self {
        on(keyPath) { quantified($0, .any, comparison) }
    }

    /// `ALL toMany.<comparison>`: every member matches (true for none). `comparison` is a single comparison or
    /// an AND of them (see `any(_:_:)`).
    public static func all<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ comparison: TypedPredicate<Destination>) -> Self {
        on(keyPath) { quantified($0, .all, comparison) }
    }

    /// `NONE toMany.<comparison>`: no member matches. `comparison` is a single comparison or an OR of them
    /// (`NONE (a OR b)` is written `NONE a AND NONE b`; see `any(_:_:)`).
    public static func none<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ comparison: TypedPredicate<Destination>) -> Self {
        on(keyPath) { quantified($0, .none, comparison) }
    }

    /// `toMany.@count op n`.
    public static func count<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ op: ComparisonOperator, _ n: Int) -> Self {
        on(keyPath) { Self(.comparison(Comparison(.keyPath([$0, "@count"]), op, .constant(.integer(Int64(n)))))) }
    }

    /// Both predicates hold (`AND`).
    public static func && (lhs: Self, rhs: Self) -> Self { Self(.and([lhs.stored, rhs.stored]), problem: lhs.problem ?? rhs.problem) }
    /// Either predicate holds (`OR`).
    public static func || (lhs: Self, rhs: Self) -> Self { Self(.or([lhs.stored, rhs.stored]), problem: lhs.problem ?? rhs.problem) }
    /// The predicate does not hold (`NOT`; SQL's three-valued logic, as every store evaluates it).
    public static prefix func ! (operand: Self) -> Self { Self(.not(operand.stored), problem: operand.problem) }
}

extension FetchPredicate {
    /// The predicate with `name` in front of every key path (a to-one step: modifiers stay as they are).
    package func prefixing(_ name: String) -> FetchPredicate {
        switch self {
        case .constant: return self
        case .and(let parts): return .and(parts.map { $0.prefixing(name) })
        case .or(let parts): return .or(parts.map { $0.prefixing(name) })
        case .not(let inner): return .not(inner.prefixing(name))
        case .comparison(var c):
            if case .keyPath(let path) = c.left { c.left = .keyPath([name] + path) }
            if case .keyPath(let path) = c.right { c.right = .keyPath([name] + path) }
            return .comparison(c)
        }
    }

    /// `quantifier` over the members of to-many `name` applied to this predicate (written against a member),
    /// said with per-comparison modifiers, or nil when it cannot be. Exact in SQL's three-valued logic, where a
    /// member counts only when its test is definitely true: ANY distributes over OR, ALL over AND, NONE over OR
    /// (into an AND); nested quantifiers flatten when the pair allows (ANY of ANY, NONE of ANY, ALL of NONE,
    /// ALL of ALL, each "some pair", "no pair" or "every pair" of the flattened path). NOT, a constant, AND
    /// under ANY/NONE, OR under ALL, an aggregate (`@count`: one total in memory, one per member in SQL) and a
    /// key path on the right-hand side (read from the member in SQL, from the root in memory) need a
    /// per-member subquery.
    package func quantified(over name: String, by quantifier: ComparisonModifier) -> FetchPredicate? {
        switch self {
        case .comparison(var c):
            guard case .keyPath(let path) = c.left, !path.contains(where: { $0.hasPrefix("@") }) else { return nil }
            if case .keyPath = c.right { return nil }
            switch (quantifier, c.modifier) {
            case (_, .direct): c.modifier = quantifier
            case (.any, .any), (.all, .all): break
            case (.none, .any), (.all, .none): c.modifier = .none
            default: return nil
            }
            c.left = .keyPath([name] + path)
            return .comparison(c)
        case .or(let parts) where quantifier == .any || quantifier == .none, .and(let parts) where quantifier == .all:
            // Each part on its own: ANY of an OR is an OR of ANYs, NONE of an OR an AND of NONEs, ALL of an AND
            // an AND of ALLs.
            let result = parts.compactMap { $0.quantified(over: name, by: quantifier) }
            guard result.count == parts.count else { return nil }
            return quantifier == .any ? .or(result) : .and(result)
        default:
            return nil
        }
    }
}

// MARK: - Comparison operators on key paths

/// `\.key == value`.
public func == <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .equal, .constant(rhs.attributeValue))
}
/// `\.key == value` on an optional attribute; `== nil` is `IS NULL`.
public func == <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value?>, rhs: Value?) -> TypedPredicate<Root> {
    .compare(lhs, .equal, .constant(rhs?.attributeValue ?? .null))
}
/// `\.key != value`.
public func != <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .notEqual, .constant(rhs.attributeValue))
}
/// `\.key != value` on an optional attribute; `!= nil` is `IS NOT NULL`.
public func != <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value?>, rhs: Value?) -> TypedPredicate<Root> {
    .compare(lhs, .notEqual, .constant(rhs?.attributeValue ?? .null))
}
/// `\.toOne == object` (the object's ID: it matches only in the store that holds it); `== nil` for none.
public func == <Root: EntityObject, Destination: EntityObject>(lhs: KeyPath<Root, Destination?>, rhs: Destination?) -> TypedPredicate<Root> {
    .compare(lhs, .equal, rhs.map { .object($0.objectID) } ?? .constant(.null))
}
/// `\.toOne != object`.
public func != <Root: EntityObject, Destination: EntityObject>(lhs: KeyPath<Root, Destination?>, rhs: Destination?) -> TypedPredicate<Root> {
    .compare(lhs, .notEqual, rhs.map { .object($0.objectID) } ?? .constant(.null))
}
/// `\.key < value`.
public func < <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .less, .constant(rhs.attributeValue))
}
/// `\.key <= value`.
public func <= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .lessOrEqual, .constant(rhs.attributeValue))
}
/// `\.key > value`.
public func > <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .greater, .constant(rhs.attributeValue))
}
/// `\.key >= value`.
public func >= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .greaterOrEqual, .constant(rhs.attributeValue))
}
/// `\.key < value` on an optional attribute (nil never matches).
public func < <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .less, .constant(rhs.attributeValue))
}
/// `\.key > value` on an optional attribute (nil never matches).
public func > <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .greater, .constant(rhs.attributeValue))
}
/// `\.key <= value` on an optional attribute (nil never matches).
public func <= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .lessOrEqual, .constant(rhs.attributeValue))
}
/// `\.key >= value` on an optional attribute (nil never matches).
public func >= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(lhs, .greaterOrEqual, .constant(rhs.attributeValue))
}

// MARK: - TypedSortKey

/// A sort key written against a key path: `.ascending(\.sentAt)`, `.descending(\.title)`.
public struct TypedSortKey<Root: EntityObject>: Sendable {
    /// The string-keyed sort key this typed key stands for.
    public let sortKey: SortKey
    /// Why the key cannot be used (a key path the type does not list): typed fetches throw it.
    package let problem: String?

    private init(_ path: [SortStep], ascending: Bool) {
        var names: [String] = []
        var problem: String?
        for step in path {
            guard let name = step.name else {
                problem = step.problem
                break
            }
            names.append(name)
        }
        sortKey = SortKey(problem == nil ? names.joined(separator: ".") : "SELF", ascending: ascending)
        self.problem = problem
    }

    /// The string-keyed sort keys, or `QueryError.unsupported` naming a key path its type does not list.
    ///
    /// A loop, not `keys.map(\.sortKey)`: a key path literal in a generic context is instantiated by
    /// `swift_getKeyPath` at every call, which callgrind put at 18,000 instructions each, over a third of a
    /// typed indexed lookup.
    @usableFromInline
    package static func checked(_ keys: [Self]) throws -> [SortKey] {
        var sortKeys: [SortKey] = []
        sortKeys.reserveCapacity(keys.count)
        for key in keys {
            if let problem = key.problem { throw QueryError.unsupported(problem) }
            sortKeys.append(key.sortKey)
        }
        return sortKeys
    }

    /// Smallest first (nil first, as in Core Data's SQLite store).
    public static func ascending(_ keyPath: PartialKeyPath<Root>) -> Self { Self([.init(keyPath)], ascending: true) }
    /// Largest first.
    public static func descending(_ keyPath: PartialKeyPath<Root>) -> Self { Self([.init(keyPath)], ascending: false) }

    /// By a property of the object at the end of a to-one, smallest first; objects without one sort as nil
    /// (first). `.ascending(\.customer, \.name)` is `SortKey("customer.name")`.
    public static func ascending<Destination: EntityObject>(_ toOne: KeyPath<Root, Destination?>, _ keyPath: PartialKeyPath<Destination>) -> Self {
        Self([.init(toOne), .init(keyPath)], ascending: true)
    }

    /// By a property of the object at the end of a to-one, largest first (objects without one last).
    public static func descending<Destination: EntityObject>(_ toOne: KeyPath<Root, Destination?>, _ keyPath: PartialKeyPath<Destination>) -> Self {
        Self([.init(toOne), .init(keyPath)], ascending: false)
    }
}

/// One step of a typed sort key: the model name of a key path on some entity type, or why there is none.
private struct SortStep {
    let name: String?
    let problem: String?

    init<E: EntityObject>(_ keyPath: PartialKeyPath<E>) {
        name = KeyPathNameCache.name(of: keyPath)
        problem = name == nil ? E.unlisted(keyPath) : nil
    }
}

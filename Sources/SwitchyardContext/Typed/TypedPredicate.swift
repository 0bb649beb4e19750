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
public struct TypedPredicate<Root: EntityObject>: Sendable {
    /// The predicate as the stores run it.
    public let predicate: FetchPredicate

    /// Wraps a predicate built another way (a format string, say) over the same entity.
    public init(_ predicate: FetchPredicate) { self.predicate = predicate }

    package static func compare(_ name: String, _ op: ComparisonOperator, _ value: PredicateOperand, options: ComparisonOptions = []) -> Self {
        Self(.comparison(Comparison(.keyPath([name]), op, value, options: options)))
    }

    /// `key BEGINSWITH value`, with `[c]`/`[d]` as `options` say.
    public static func beginsWith(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(Root.name(of: keyPath), .beginsWith, .constant(.string(value)), options: options)
    }

    /// `key BEGINSWITH value` on an optional attribute (nil never matches).
    public static func beginsWith(_ keyPath: KeyPath<Root, String?>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(Root.name(of: keyPath), .beginsWith, .constant(.string(value)), options: options)
    }

    /// `key ENDSWITH value`.
    public static func endsWith(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(Root.name(of: keyPath), .endsWith, .constant(.string(value)), options: options)
    }

    /// `key CONTAINS value`.
    public static func contains(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(Root.name(of: keyPath), .contains, .constant(.string(value)), options: options)
    }

    /// `key CONTAINS value` on an optional attribute.
    public static func contains(_ keyPath: KeyPath<Root, String?>, _ value: String, options: ComparisonOptions = []) -> Self {
        compare(Root.name(of: keyPath), .contains, .constant(.string(value)), options: options)
    }

    /// `key ==[options] value` (case- or diacritic-insensitive equality).
    public static func equals(_ keyPath: KeyPath<Root, String>, _ value: String, options: ComparisonOptions) -> Self {
        compare(Root.name(of: keyPath), .equal, .constant(.string(value)), options: options)
    }

    /// `key IN {values}`.
    public static func `in`<Value: AttributeConvertible>(_ keyPath: KeyPath<Root, Value>, _ values: [Value]) -> Self {
        compare(Root.name(of: keyPath), .in, .list(values.map { .constant($0.attributeValue) }))
    }

    /// `relationship IN %@` with objects.
    public static func `in`<Destination: EntityObject>(_ keyPath: KeyPath<Root, Destination?>, _ objects: [Destination]) -> Self {
        compare(Root.name(of: keyPath), .in, .list(objects.map { .object($0.objectID) }))
    }

    /// `key BETWEEN {low, high}`.
    public static func between<Value: AttributeConvertible>(_ keyPath: KeyPath<Root, Value>, _ low: Value, _ high: Value) -> Self {
        compare(Root.name(of: keyPath), .between, .list([.constant(low.attributeValue), .constant(high.attributeValue)]))
    }

    /// `toOne.<inner>`: `inner` evaluated on the object at the end of a to-one relationship (nil never matches).
    public static func through<Destination: EntityObject>(_ keyPath: KeyPath<Root, Destination?>, _ inner: TypedPredicate<Destination>) -> Self {
        Self(inner.predicate.prefixing(Root.name(of: keyPath), modifier: nil))
    }

    /// `ANY toMany.<comparison>`: some member matches `comparison` (a single comparison).
    public static func any<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ comparison: TypedPredicate<Destination>) -> Self {
        Self(comparison.predicate.prefixing(Root.name(of: keyPath), modifier: .any))
    }

    /// `ALL toMany.<comparison>`: every member matches (true for none).
    public static func all<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ comparison: TypedPredicate<Destination>) -> Self {
        Self(comparison.predicate.prefixing(Root.name(of: keyPath), modifier: .all))
    }

    /// `NONE toMany.<comparison>`: no member matches.
    public static func none<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ comparison: TypedPredicate<Destination>) -> Self {
        Self(comparison.predicate.prefixing(Root.name(of: keyPath), modifier: ComparisonModifier.none))
    }

    /// `toMany.@count op n`.
    public static func count<Destination: EntityObject>(_ keyPath: KeyPath<Root, [Destination]>, _ op: ComparisonOperator, _ n: Int) -> Self {
        Self(.comparison(Comparison(.keyPath([Root.name(of: keyPath), "@count"]), op, .constant(.integer(Int64(n))))))
    }

    /// Both predicates hold (`AND`).
    public static func && (lhs: Self, rhs: Self) -> Self { Self(.and([lhs.predicate, rhs.predicate])) }
    /// Either predicate holds (`OR`).
    public static func || (lhs: Self, rhs: Self) -> Self { Self(.or([lhs.predicate, rhs.predicate])) }
    /// The predicate does not hold (`NOT`; SQL's three-valued logic, as every store evaluates it).
    public static prefix func ! (operand: Self) -> Self { Self(.not(operand.predicate)) }
}

extension FetchPredicate {
    /// The predicate with `name` in front of every key path, and `modifier` on each comparison (a
    /// modifier applies to single comparisons only, as in NSPredicate).
    package func prefixing(_ name: String, modifier: ComparisonModifier?) -> FetchPredicate {
        switch self {
        case .constant: return self
        case .and(let parts): return .and(parts.map { $0.prefixing(name, modifier: modifier) })
        case .or(let parts): return .or(parts.map { $0.prefixing(name, modifier: modifier) })
        case .not(let inner): return .not(inner.prefixing(name, modifier: modifier))
        case .comparison(var c):
            if case .keyPath(let path) = c.left { c.left = .keyPath([name] + path) }
            if case .keyPath(let path) = c.right { c.right = .keyPath([name] + path) }
            if let modifier { c.modifier = modifier }
            return .comparison(c)
        }
    }
}

// MARK: - Comparison operators on key paths

/// `\.key == value`.
public func == <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .equal, .constant(rhs.attributeValue))
}
/// `\.key == value` on an optional attribute; `== nil` is `IS NULL`.
public func == <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value?>, rhs: Value?) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .equal, .constant(rhs?.attributeValue ?? .null))
}
/// `\.key != value`.
public func != <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .notEqual, .constant(rhs.attributeValue))
}
/// `\.key != value` on an optional attribute; `!= nil` is `IS NOT NULL`.
public func != <Root: EntityObject, Value: AttributeConvertible>(lhs: KeyPath<Root, Value?>, rhs: Value?) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .notEqual, .constant(rhs?.attributeValue ?? .null))
}
/// `\.toOne == object` (the object's ID: it matches only in the store that holds it); `== nil` for none.
public func == <Root: EntityObject, Destination: EntityObject>(lhs: KeyPath<Root, Destination?>, rhs: Destination?) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .equal, rhs.map { .object($0.objectID) } ?? .constant(.null))
}
/// `\.toOne != object`.
public func != <Root: EntityObject, Destination: EntityObject>(lhs: KeyPath<Root, Destination?>, rhs: Destination?) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .notEqual, rhs.map { .object($0.objectID) } ?? .constant(.null))
}
/// `\.key < value`.
public func < <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .less, .constant(rhs.attributeValue))
}
/// `\.key <= value`.
public func <= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .lessOrEqual, .constant(rhs.attributeValue))
}
/// `\.key > value`.
public func > <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .greater, .constant(rhs.attributeValue))
}
/// `\.key >= value`.
public func >= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .greaterOrEqual, .constant(rhs.attributeValue))
}
/// `\.key < value` on an optional attribute (nil never matches).
public func < <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .less, .constant(rhs.attributeValue))
}
/// `\.key > value` on an optional attribute (nil never matches).
public func > <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .greater, .constant(rhs.attributeValue))
}
/// `\.key <= value` on an optional attribute (nil never matches).
public func <= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .lessOrEqual, .constant(rhs.attributeValue))
}
/// `\.key >= value` on an optional attribute (nil never matches).
public func >= <Root: EntityObject, Value: AttributeConvertible & Comparable>(lhs: KeyPath<Root, Value?>, rhs: Value) -> TypedPredicate<Root> {
    .compare(Root.name(of: lhs), .greaterOrEqual, .constant(rhs.attributeValue))
}

// MARK: - TypedSortKey

/// A sort key written against a key path: `.ascending(\.sentAt)`, `.descending(\.title)`.
public struct TypedSortKey<Root: EntityObject>: Sendable {
    /// The string-keyed sort key this typed key stands for.
    public let sortKey: SortKey

    /// Smallest first (nil first, as in Core Data's SQLite store).
    public static func ascending(_ keyPath: PartialKeyPath<Root>) -> Self { Self(sortKey: SortKey(Root.name(of: keyPath), ascending: true)) }
    /// Largest first.
    public static func descending(_ keyPath: PartialKeyPath<Root>) -> Self { Self(sortKey: SortKey(Root.name(of: keyPath), ascending: false)) }
}

import Foundation
import SwitchyardModel

// MARK: - PredicateArgument

/// A value for a `%@`, `%d`, `%f` or `%K` in a predicate format string.
///
/// Literals convert on their own, and the static functions name the rest:
/// ```swift
/// let p = try FetchPredicate(format: "age > %d AND name == %@ AND %K IN %@", 30, "Ann", PredicateArgument.keyPath("tag"), [1, 2])
/// let q = try FetchPredicate(format: "sentAt < %@ AND id == %@", .date(cutoff), .uuid(id))
/// ```
public enum PredicateArgument: Sendable, Hashable {
    /// One value, for `%@`, `%d`, `%i`, `%ld`, `%lld`, `%f`, `%lf` (a string value also serves `%K`).
    case value(AttributeValue)
    /// A key path for `%K`, dotted: `"chat.title"`.
    case keyPath(String)
    /// A collection for `%@`, which becomes an aggregate `{a, b, c}`.
    case list([AttributeValue])
    /// An object for `%@` (`chat == %@`): it stands for its `ObjectID` — store, entity and key — so it matches
    /// only rows of the store that holds it (a managed object passes as this).
    case object(ObjectID)
    /// A collection of objects for `IN %@`.
    case objects([ObjectID])
}

// MARK: - Initializers

extension PredicateArgument {
    /// Wraps any attribute value.
    public init(_ value: AttributeValue) { self = .value(value) }
    /// A string value (or, for `%K`, a key path).
    public init(_ string: String) { self = .value(.string(string)) }
    /// An integer; one outside Int64's range becomes a double rather than trapping.
    public init<I: BinaryInteger>(_ integer: I) {
        if let exact = Int64(exactly: integer) {
            self = .value(.integer(exact))
        } else {
            self = .value(.double(Double(integer)))
        }
    }
    /// A double.
    public init(_ double: Double) { self = .value(.double(double)) }
    /// A decimal.
    public init(_ decimal: Decimal) { self = .value(.decimal(decimal)) }
    /// A boolean (compares as 0/1).
    public init(_ bool: Bool) { self = .value(.bool(bool)) }
    /// A date (compares as seconds since 2001-01-01).
    public init(_ date: Date) { self = .value(.date(date)) }
    /// A UUID (compares by its 16 bytes).
    public init(_ uuid: UUID) { self = .value(.uuid(uuid)) }
    /// Binary data.
    public init(_ data: Data) { self = .value(.binary(data)) }
    /// A URI.
    public init(_ url: URL) { self = .value(.uri(url)) }
    /// A collection, for `IN %@` or `BETWEEN %@`.
    public init(_ list: [AttributeValue]) { self = .list(list) }
}

// MARK: - Static constructors

extension PredicateArgument {
    /// A string value, spelled for variadic argument lists: `.string(name)`.
    public static func string(_ s: String) -> PredicateArgument { .value(.string(s)) }
    /// An integer value: `.integer(count)`.
    public static func integer<I: BinaryInteger>(_ i: I) -> PredicateArgument { PredicateArgument(i) }
    /// A double value: `.double(x)`.
    public static func double(_ d: Double) -> PredicateArgument { .value(.double(d)) }
    /// A decimal value: `.decimal(x)`.
    public static func decimal(_ d: Decimal) -> PredicateArgument { .value(.decimal(d)) }
    /// A boolean value: `.bool(flag)`.
    public static func bool(_ b: Bool) -> PredicateArgument { .value(.bool(b)) }
    /// A date value: `.date(cutoff)`.
    public static func date(_ d: Date) -> PredicateArgument { .value(.date(d)) }
    /// A UUID value: `.uuid(id)`.
    public static func uuid(_ u: UUID) -> PredicateArgument { .value(.uuid(u)) }
    /// A binary value: `.data(bytes)`.
    public static func data(_ d: Data) -> PredicateArgument { .value(.binary(d)) }
    /// A URI value: `.url(link)`.
    public static func url(_ u: URL) -> PredicateArgument { .value(.uri(u)) }
    /// The null value, for `%@` (`x == %@` with `.null` is `x == nil`).
    public static var null: PredicateArgument { .value(.null) }
}

// MARK: - Literals

extension PredicateArgument: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral
{
    /// `30` as an argument.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// `2.5` as an argument.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// `"Ann"` as an argument (a string value; `%K` also takes it as a key path).
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// `true` as an argument.
    public init(booleanLiteral value: Bool) { self = .value(.bool(value)) }
    /// `nil` as an argument.
    public init(nilLiteral: ()) { self = .value(.null) }
    /// `[1, 2, 3]` as an argument: a list for `IN %@`.
    public init(arrayLiteral elements: AttributeValue...) { self = .list(elements) }
}

// MARK: - Description

extension PredicateArgument: CustomStringConvertible {
    /// The argument as it would read in a format string.
    public var description: String {
        switch self {
        case .value(let v): return PredicateOperand.constant(v).format
        case .keyPath(let k): return "%K(\(k))"
        case .list(let vs): return PredicateOperand.list(vs.map { .constant($0) }).format
        case .object(let id): return PredicateOperand.object(id).format
        case .objects(let ids): return PredicateOperand.list(ids.map { .object($0) }).format
        }
    }
}

// MARK: - PredicateArgumentConvertible

/// A Swift value that can stand for a `%@`, `%d`, `%f` or `%K` argument, so variables pass as they are:
/// `try FetchPredicate(format: "name == %@ AND age > %d", name, age)`.
public protocol PredicateArgumentConvertible {
    /// The argument this value stands for.
    var predicateArgument: PredicateArgument { get }
}

extension PredicateArgument: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { self }
}

extension AttributeValue: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .value(self) }
}

extension String: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.string(self)) } }
extension Int: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.integer(Int64(self))) } }
extension Int16: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.integer(Int64(self))) } }
extension Int32: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.integer(Int64(self))) } }
extension Int64: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.integer(self)) } }
extension Double: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.double(self)) } }
extension Float: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.double(Double(self))) } }
extension Decimal: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.decimal(self)) } }
extension Bool: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.bool(self)) } }
extension Date: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.date(self)) } }
extension UUID: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.uuid(self)) } }
extension Data: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.binary(self)) } }
extension URL: PredicateArgumentConvertible { public var predicateArgument: PredicateArgument { .value(.uri(self)) } }

extension Array: PredicateArgumentConvertible where Element: PredicateArgumentConvertible {
    /// A collection argument (`IN %@`): objects when every element is an object, otherwise values (nested
    /// lists, key paths and objects among values flatten to nil elements).
    public var predicateArgument: PredicateArgument {
        let arguments = map(\.predicateArgument)
        let ids = arguments.compactMap { argument -> ObjectID? in
            if case .object(let id) = argument { return id }
            return nil
        }
        if !isEmpty, ids.count == count { return .objects(ids) }
        return .list(arguments.map { element in
            if case .value(let v) = element { return v }
            return .null
        })
    }
}

// MARK: - Leading-dot arguments

/// Lets `.null`, `.date(d)` and friends stand in a variadic argument list (spell `PredicateArgument.keyPath(_:)`
/// and `.list(_:)` in full: they are also enum cases).
extension PredicateArgumentConvertible where Self == PredicateArgument {
    /// A text argument.
    public static func string(_ s: String) -> PredicateArgument { PredicateArgument.string(s) }
    /// An integer argument.
    public static func integer<I: BinaryInteger>(_ i: I) -> PredicateArgument { PredicateArgument.integer(i) }
    /// A floating-point argument.
    public static func double(_ d: Double) -> PredicateArgument { PredicateArgument.double(d) }
    /// A decimal argument.
    public static func decimal(_ d: Decimal) -> PredicateArgument { PredicateArgument.decimal(d) }
    /// A Boolean argument.
    public static func bool(_ b: Bool) -> PredicateArgument { PredicateArgument.bool(b) }
    /// A date argument.
    public static func date(_ d: Date) -> PredicateArgument { PredicateArgument.date(d) }
    /// A UUID argument.
    public static func uuid(_ u: UUID) -> PredicateArgument { PredicateArgument.uuid(u) }
    /// A bytes argument.
    public static func data(_ d: Data) -> PredicateArgument { PredicateArgument.data(d) }
    /// A URL argument.
    public static func url(_ u: URL) -> PredicateArgument { PredicateArgument.url(u) }
    /// `nil`.
    public static var null: PredicateArgument { PredicateArgument.value(.null) }
}

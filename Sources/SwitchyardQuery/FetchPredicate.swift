// MARK: - FetchPredicate
import SwitchyardModel

/// A parsed predicate: the syntax tree of NSPredicate's format language.
///
/// Build one with `FetchPredicate(format:_:)` (see `PredicateParser`) or in code:
/// ```swift
/// let p: FetchPredicate = .comparison(.init(.keyPath(["title"]), .beginsWith, .constant("Re:"), options: .caseInsensitive))
/// ```
public indirect enum FetchPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// Every predicate holds (an empty list is true).
    case and([FetchPredicate])
    /// At least one predicate holds (an empty list is false).
    case or([FetchPredicate])
    /// The predicate does not hold.
    case not(FetchPredicate)
    /// A comparison between two operands.
    case comparison(Comparison)
}

// MARK: - Comparison

/// One comparison: `left op right`, with string options and an optional ANY/ALL/NONE modifier for to-many paths.
public struct Comparison: Sendable, Hashable {
    /// The left operand (normally a key path).
    public var left: PredicateOperand
    /// The operator.
    public var op: ComparisonOperator
    /// The right operand (normally a constant).
    public var right: PredicateOperand
    /// String options (`[c]`, `[d]`, `[cd]`).
    public var options: ComparisonOptions
    /// The aggregate modifier for a to-many key path (`ANY`, `ALL`, `NONE`).
    public var modifier: ComparisonModifier

    /// A comparison `left op right` with options and modifier.
    public init(
        _ left: PredicateOperand, _ op: ComparisonOperator, _ right: PredicateOperand, options: ComparisonOptions = [],
        modifier: ComparisonModifier = .direct
    ) {
        self.left = left
        self.op = op
        self.right = right
        self.options = options
        self.modifier = modifier
    }
}

/// The comparison operators of NSPredicate's format language.
public enum ComparisonOperator: String, Sendable, Hashable {
    /// `==`
    case equal = "=="
    /// `!=`
    case notEqual = "!="
    /// `<`
    case less = "<"
    /// `<=`
    case lessOrEqual = "<="
    /// `>`
    case greater = ">"
    /// `>=`
    case greaterOrEqual = ">="
    /// Right side is a two-element list `{low, high}`, inclusive.
    case between = "BETWEEN"
    /// Right side is a list (or a to-many key path).
    case `in` = "IN"
    /// `BEGINSWITH`: the text starts with the operand.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: the text ends with the operand.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: the text contains the operand (or a collection the value).
    case contains = "CONTAINS"
    /// `*` and `?` wildcards.
    case like = "LIKE"
}

/// `[c]`, `[d]`, `[cd]`.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: letters compare without case.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: letters compare without diacritics.
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// How a comparison whose left side is a to-many path combines the per-element results.
public enum ComparisonModifier: String, Sendable, Hashable {
    /// No modifier: the key path names one value.
    case direct = ""
    /// `ANY`: some member matches.
    case any = "ANY"
    /// `ALL`: every member matches (true for no members).
    case all = "ALL"
    /// `NONE`: no member matches.
    case none = "NONE"
}

// MARK: - PredicateOperand

/// An operand of a comparison.
public indirect enum PredicateOperand: Sendable, Hashable {
    /// A key path, one component per element: `["chat", "title"]`. The last component may be `@count`
    /// (count of a to-many), and `SELF` is the empty path.
    case keyPath([String])
    /// A literal or a substituted argument.
    case constant(AttributeValue)
    /// `{a, b, c}` or a collection argument.
    case list([PredicateOperand])
    /// `$NAME` or `$NAME.key.path`, replaced by `FetchPredicate.substituting(_:)` before a store sees it.
    case variable(String, keyPath: [String])
    /// An object argument (`chat == %@`): it matches the object with this ID only, in the store that holds it.
    /// Each store binds it to its own key for the object (see `FetchPredicate.bindingObjects`).
    case object(ObjectID)
}

// MARK: - SortKey

/// Sort order for a fetch: a key (an attribute name) and a direction.
///
/// ```swift
/// let newestFirst = SortKey("sentAt", ascending: false)
/// ```
public struct SortKey: Sendable, Hashable {
    /// The attribute (or key path) to sort by.
    public var key: String
    /// Ascending (NULL first) or descending (NULL last).
    public var ascending: Bool

    /// Sorts by `key`, ascending unless told otherwise.
    public init(_ key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

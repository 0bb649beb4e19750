// MARK: - PredicateSubject
import SwitchyardModel

/// What the in-memory evaluator reads from an object: the values found at a key path.
///
/// A store that evaluates predicates in memory (memory, LMDB) makes its rows conform; following a to-one
/// relationship yields one value, a to-many yields many.
package protocol PredicateSubject {
    /// The value(s) at `keyPath` (no `@count`: the evaluator counts a `.many` itself). A relationship at the end
    /// of the path yields the destination's primary key(s) as `.integer`; a nil to-one yields `.single(.null)`.
    func predicateValues(at keyPath: [String]) throws -> PredicateValue
}

/// The result of reading a key path: one value, or several when the path crosses a to-many relationship.
package enum PredicateValue: Sendable, Hashable {
    case single(AttributeValue)
    case many([AttributeValue])
}

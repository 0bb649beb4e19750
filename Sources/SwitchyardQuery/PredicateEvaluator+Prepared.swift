import Foundation
import SwitchyardModel

// MARK: - Prepared predicates

extension PredicateEvaluator {
    /// A predicate prepared once for evaluation over many rows: every `key IN {constants}` (without `[c]`/`[d]`)
    /// becomes a hash lookup (`StoreEqualityIndex`, confirmed with `storeEqual`) instead of rebuilding and
    /// scanning the list for each row, so filtering n rows with an m-element list costs O(n + m), not O(n·m).
    /// Results are exactly `evaluate(predicate, on:)`'s.
    package struct Prepared: Sendable {
        package let predicate: FetchPredicate
        package let node: PreparedNode?

        package init(_ predicate: FetchPredicate) {
            self.predicate = predicate
            self.node = PreparedNode.build(predicate)
        }
    }

    /// True when the prepared predicate selects `subject`.
    package static func evaluate(_ prepared: Prepared, on subject: some PredicateSubject) throws -> Bool {
        try truth(of: prepared.predicate, on: subject, prepared: prepared.node) == .true
    }

    /// `comparison` (an `IN` against constants) through its prepared membership set: the same three-valued
    /// result as scanning the list, per left-hand value, with `ANY`/`ALL`/`NONE` over a to-many left side.
    package static func truth(of comparison: Comparison, on subject: some PredicateSubject, membership: MembershipSet) throws -> Truth {
        switch try operand(comparison.left, on: subject) {
        case .single(let value):
            return membership.truth(value)
        case .many(let elements):
            var anyTrue = false, allTrue = true
            for element in elements {
                let result = membership.truth(element) == .true
                anyTrue = anyTrue || result
                allTrue = allTrue && result
                if anyTrue, !allTrue { break }
            }
            switch comparison.modifier {
            case .direct, .any: return Truth(anyTrue)
            case .all: return Truth(allTrue)
            case .none: return Truth(!anyTrue)
            }
        }
    }
}

/// The prepared form of one predicate node: the membership set of an `IN`, or the children of a compound
/// predicate (nil where nothing was prepared).
package indirect enum PreparedNode: Sendable {
    case membership(MembershipSet)
    case compound([PreparedNode?])

    /// Lists shorter than this are scanned: hashing them costs more than it saves.
    package static let minimumListCount = 8

    package func child(_ i: Int) -> PreparedNode? {
        guard case .compound(let children) = self, i < children.count else { return nil }
        return children[i]
    }

    package static func build(_ predicate: FetchPredicate) -> PreparedNode? {
        switch predicate {
        case .constant:
            return nil
        case .and(let parts), .or(let parts):
            let children = parts.map(build)
            return children.allSatisfy({ $0 == nil }) ? nil : .compound(children)
        case .not(let inner):
            return build(inner).map { .compound([$0]) }
        case .comparison(let c):
            guard c.op == .in, c.options.isEmpty, case .list(let elements) = c.right,
                elements.count >= minimumListCount
            else { return nil }
            var values: [AttributeValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard case .constant(let value) = element else { return nil }
                values.append(value)
            }
            return .membership(MembershipSet(values))
        }
    }
}

/// The right-hand list of an `IN`, hashed, with SQL `IN` semantics.
package struct MembershipSet: Sendable {
    private var values = StoreEqualityIndex()
    private var isEmpty = true
    private var hasNull = false

    package init(_ list: [AttributeValue]) {
        for value in list {
            isEmpty = false
            if value.isNull { hasNull = true } else { _ = values.insert(value) }
        }
    }

    /// `needle IN list`: false for an empty list, unknown for a null needle, true on a match, otherwise
    /// unknown if the list holds a null, else false (as `PredicateEvaluator` scans it).
    package func truth(_ needle: AttributeValue) -> Truth {
        if isEmpty { return .false }
        if needle.isNull { return .unknown }
        if values.slot(of: needle) != nil { return .true }
        return hasNull ? .unknown : .false
    }
}

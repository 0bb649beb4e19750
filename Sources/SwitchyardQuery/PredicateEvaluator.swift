import Foundation
import SwitchyardModel

// MARK: - PredicateEvaluator

/// Evaluates predicates and sort orders in memory (memory and LMDB stores, fetched-property filtering).
///
/// The SQLite store compiles the same AST to SQL, and both paths must select the same rows, so these rules
/// follow what that SQL does:
/// - **Three-valued logic.** A comparison with a null operand is *unknown*; AND, OR and NOT combine
///   true/false/unknown as SQL does, and only a *true* result selects the row. So on a null `a`, both
///   `a < 5` and `NOT (a < 5)` are false, as in SQLite.
/// - **`nil` literals.** `x == nil` / `x != nil` (either side the literal `nil`, after substitution) are
///   `IS NULL` / `IS NOT NULL`: never unknown. Without a literal nil, `==`/`!=` with a null operand are
///   unknown, like SQL `=`/`<>` (so `name != "x"` does not select a row whose name is null).
/// - **Values.** `==`/`!=` use `AttributeValue.storeEqual` and ordering uses `AttributeValue.order`:
///   numbers (integer, double, decimal, bool as 0/1, date as seconds since 2001) compare by value, strings
///   by UTF-8 bytes, UUIDs and data by bytes; different storage classes order NULL < number < text < blob
///   and are never equal. SQLite's column-affinity conversions (a text `'30'` against an integer column)
///   are not modelled: compare like with like.
/// - **Strings.** `==`/`!=` without options are byte-exact. With `[c]`/`[d]`, and always for `BEGINSWITH`,
///   `ENDSWITH`, `CONTAINS` and `LIKE`, both sides go through `StringMatching.matches`, which the SQLite
///   store calls as a SQL function. A string operator on a non-string value throws `.unsupported`.
/// - **Collections.** `IN` is membership with SQL `IN` semantics (`x IN {}` is false; no match and a null
///   element is unknown; a single right-hand value is a one-element list). `BETWEEN {lo, hi}` is
///   `x >= lo AND x <= hi`. `CONTAINS` whose left side is a to-many path or an aggregate, with no modifier,
///   is membership: `tags CONTAINS 3`.
/// - **To-many left sides.** `ANY`/`SOME` is true when some element's comparison is true, `NONE` when none
///   is, `ALL` when every element's is (an unknown element fails `ALL`); `ALL` and `NONE` are vacuously true
///   on an empty collection. These are definite, as SQL `EXISTS (…)` subqueries are: the SQL form of
///   `ALL` is `NOT EXISTS (… WHERE (cond) IS NOT 1)`. With no modifier a to-many left side is an implicit
///   `ANY`, as NSPredicate treats it. `path.@count` is the number of elements (0 for a null to-one).
package enum PredicateEvaluator {
    /// True when `predicate` selects `subject` (unknown counts as false).
    public static func evaluate(_ predicate: FetchPredicate, on subject: some PredicateSubject) throws -> Bool {
        try truth(of: predicate, on: subject) == .true
    }

    /// The three-valued result of `predicate` on `subject`, before unknown collapses to false. `prepared`
    /// mirrors `predicate` (see `Prepared`); nil evaluates everything from the predicate itself.
    package static func truth(of predicate: FetchPredicate, on subject: some PredicateSubject, prepared: PreparedNode? = nil) throws -> Truth {
        switch predicate {
        case .constant(let value):
            return Truth(value)
        case .and(let parts):
            var result = Truth.true
            for (i, part) in parts.enumerated() {
                result = try result && truth(of: part, on: subject, prepared: prepared?.child(i))
                if result == .false { return .false }
            }
            return result
        case .or(let parts):
            var result = Truth.false
            for (i, part) in parts.enumerated() {
                result = try result || truth(of: part, on: subject, prepared: prepared?.child(i))
                if result == .true { return .true }
            }
            return result
        case .not(let inner):
            return !(try truth(of: inner, on: subject, prepared: prepared?.child(0)))
        case .comparison(let comparison):
            if case .membership(let set) = prepared {
                return try truth(of: comparison, on: subject, membership: set)
            }
            return try truth(of: comparison, on: subject)
        }
    }

    // MARK: - Sorting

    /// Orders two subjects by `sort` (first descriptor first) with `AttributeValue.order`, so in-memory
    /// sorting matches SQLite's `ORDER BY` (NULLs first when ascending, last when descending). A key may be
    /// dotted through to-one relationships or end in `@count`; a to-many key throws `.unsupported`.
    public static func compare(
        _ a: some PredicateSubject, _ b: some PredicateSubject, by sort: [SortKey]
    ) throws -> ComparisonResult {
        for descriptor in sort {
            let path = descriptor.key.split(separator: ".").map(String.init)
            let result = AttributeValue.order(try sortValue(a, path), try sortValue(b, path))
            guard result != .orderedSame else { continue }
            if descriptor.ascending { return result }
            return result == .orderedAscending ? .orderedDescending : .orderedAscending
        }
        return .orderedSame
    }

    /// The positions `0..<count` in the order `sort` gives, ties by `tie`: what `compare(_:_:by:)` gives, with
    /// each item's sort values read once (`value(item, sortKeyIndex)`) rather than twice per comparison.
    /// Reading a value by name (or following a key path) costs more than comparing it, and a sort compares
    /// each item about log2(count) times. Every key is read for every item, also keys after the first that
    /// only break ties (a comparator read those only on a tie), so a later key through a relationship reads it
    /// for every item.
    package static func order(
        of count: Int, by sort: [SortKey], value: (Int, Int) throws -> AttributeValue, tie: (Int, Int) -> Bool
    ) rethrows -> [Int] {
        let width = sort.count
        guard count > 1 else { return Array(0..<count) }
        var values: [AttributeValue] = []
        values.reserveCapacity(count * width)
        for item in 0..<count {
            for k in 0..<width { values.append(try value(item, k)) }
        }
        let ascending = sort.map(\.ascending)
        return values.withUnsafeBufferPointer { values in
            Array(0..<count).sorted { i, j in
                for k in 0..<width {
                    let result = AttributeValue.order(values[i * width + k], values[j * width + k])
                    if result != .orderedSame { return (result == .orderedAscending) == ascending[k] }
                }
                return tie(i, j)
            }
        }
    }

    /// The key paths of `sort`, split once for `sortValue(_:_:)`.
    package static func paths(of sort: [SortKey]) -> [[String]] {
        sort.map { $0.key.split(separator: ".").map(String.init) }
    }

    /// The value `subject` is sorted by for `path`; a to-many path cannot be sorted by.
    package static func sortValue(_ subject: some PredicateSubject, _ path: [String]) throws -> AttributeValue {
        switch try operand(.keyPath(path), on: subject) {
        case .single(let value): return value
        case .many: throw QueryError.unsupported("cannot sort by the to-many key path '\(path.joined(separator: "."))'")
        }
    }

    // MARK: - Comparisons

    private static func truth(of comparison: Comparison, on subject: some PredicateSubject) throws -> Truth {
        let left = try operand(comparison.left, on: subject)
        let right = try operand(comparison.right, on: subject)
        let isNullTest = comparison.left == .constant(.null) || comparison.right == .constant(.null)

        // `tags CONTAINS 3`: collection membership, not a substring test on each element.
        if comparison.op == .contains, comparison.modifier == .direct, case .many(let haystack) = left {
            guard case .single(let needle) = right else {
                throw QueryError.unsupported("CONTAINS of a collection in a collection: \(comparison.format)")
            }
            return membership(needle, in: haystack, comparison.options)
        }
        switch left {
        case .single(let value):
            return try compare(value, comparison, right, isNullTest: isNullTest)
        case .many(let elements):
            // Each element's result counts only when definitely true, as in an SQL EXISTS subquery.
            var anyTrue = false, allTrue = true
            for element in elements {
                let result = try compare(element, comparison, right, isNullTest: isNullTest) == .true
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

    /// One left-hand value against the right-hand operand.
    private static func compare(
        _ left: AttributeValue, _ comparison: Comparison, _ right: Operand, isNullTest: Bool
    ) throws -> Truth {
        switch (comparison.op, right) {
        case (.in, .many(let haystack)):
            return membership(left, in: haystack, comparison.options)
        case (.in, .single(let value)):
            return membership(left, in: [value], comparison.options)
        case (.between, .many(let bounds)) where bounds.count == 2:
            return try compare(left, .greaterOrEqual, bounds[0], comparison.options)
                && compare(left, .lessOrEqual, bounds[1], comparison.options)
        case (.between, _):
            throw QueryError.unsupported("BETWEEN needs two bounds {low, high}: \(comparison.format)")
        case (_, .many):
            throw QueryError.unsupported(
                "\(comparison.op.rawValue) against a collection (use IN, or ANY on the left): \(comparison.format)")
        case (let op, .single(let value)):
            if isNullTest, op == .equal || op == .notEqual {
                // IS NULL / IS NOT NULL: definite even when the other side is null.
                let same = AttributeValue.storeEqual(left, value)
                return Truth(op == .equal ? same : !same)
            }
            return try compare(left, op, value, comparison.options)
        }
    }

    /// A scalar comparison; a null operand makes it unknown.
    private static func compare(
        _ left: AttributeValue, _ op: ComparisonOperator, _ right: AttributeValue, _ options: ComparisonOptions
    ) throws -> Truth {
        if left.isNull || right.isNull { return .unknown }
        let (left, right) = uuidAligned(left, right)
        switch op {
        case .equal:
            return Truth(equal(left, right, options))
        case .notEqual:
            return Truth(!equal(left, right, options))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            if !options.isEmpty, let l = left.stringValue, let r = right.stringValue {
                return Truth(StringMatching.matches(op, l, r, options: options))
            }
            let order = AttributeValue.order(left, right)
            switch op {
            case .less: return Truth(order == .orderedAscending)
            case .lessOrEqual: return Truth(order != .orderedDescending)
            case .greater: return Truth(order == .orderedDescending)
            default: return Truth(order != .orderedAscending)
            }
        case .beginsWith, .endsWith, .contains, .like:
            guard let l = left.stringValue, let r = right.stringValue else {
                throw QueryError.unsupported(
                    "\(op.rawValue) compares strings, not \(left.kindName) and \(right.kindName)")
            }
            return Truth(StringMatching.matches(op, l, r, options: options))
        case .in, .between:
            throw QueryError.unsupported("\(op.rawValue) needs a collection on the right")
        }
    }

    /// A UUID compared with a string that spells a UUID compares as two UUIDs, as SQLite binds such a string
    /// against a UUID column.
    private static func uuidAligned(_ left: AttributeValue, _ right: AttributeValue) -> (AttributeValue, AttributeValue) {
        switch (left, right) {
        case (.uuid, .string(let s)): return AttributeValue.uuid(fromString: s).map { (left, .uuid($0)) } ?? (left, right)
        case (.string(let s), .uuid): return AttributeValue.uuid(fromString: s).map { (.uuid($0), right) } ?? (left, right)
        default: return (left, right)
        }
    }

    /// Equality of two non-null values: byte-exact (`storeEqual`), or through `StringMatching` when both are
    /// strings and `[c]`/`[d]` are given.
    private static func equal(_ left: AttributeValue, _ right: AttributeValue, _ options: ComparisonOptions) -> Bool {
        let (left, right) = uuidAligned(left, right)
        if !options.isEmpty, let l = left.stringValue, let r = right.stringValue {
            return StringMatching.matches(.equal, l, r, options: options)
        }
        return AttributeValue.storeEqual(left, right)
    }

    /// SQL `needle IN (haystack)`: false for an empty list, unknown for a null needle, true on a match,
    /// otherwise unknown if the list holds a null, else false.
    private static func membership(
        _ needle: AttributeValue, in haystack: [AttributeValue], _ options: ComparisonOptions
    ) -> Truth {
        if haystack.isEmpty { return .false }
        if needle.isNull { return .unknown }
        var sawNull = false
        for element in haystack {
            if element.isNull {
                sawNull = true
            } else if equal(needle, element, options) {
                return .true
            }
        }
        return sawNull ? .unknown : .false
    }

    // MARK: - Operands

    /// An evaluated expression: one value, or several (a to-many path or an aggregate).
    package enum Operand {
        case single(AttributeValue)
        case many([AttributeValue])
    }

    package static func operand(_ expression: PredicateOperand, on subject: some PredicateSubject) throws -> Operand {
        switch expression {
        case .constant(let value):
            return .single(value)
        case .keyPath(let path):
            if let index = path.firstIndex(of: "@count") {
                guard index == path.count - 1 else {
                    throw QueryError.unsupported("@count must end a key path: \(path.joined(separator: "."))")
                }
                switch try subject.predicateValues(at: Array(path.dropLast())) {
                case .many(let values): return .single(.integer(Int64(values.count)))
                case .single(.null): return .single(.integer(0))
                case .single(let value):
                    throw QueryError.unsupported("@count of the \(value.kindName) at \(path.joined(separator: "."))")
                }
            }
            switch try subject.predicateValues(at: path) {
            case .single(let value): return .single(value)
            case .many(let values): return .many(values)
            }
        case .list(let elements):
            var values: [AttributeValue] = []
            for element in elements {
                guard case .single(let value) = try operand(element, on: subject) else {
                    throw QueryError.unsupported("a collection inside an aggregate: \(expression.format)")
                }
                values.append(value)
            }
            return .many(values)
        case .variable(let name, let keyPath):
            throw QueryError.unboundVariable(name: ([name] + keyPath).joined(separator: "."))
        case .object(let id):
            throw QueryError.unsupported("the object \(id) was not bound to a store (FetchPredicate.bindingObjects)")
        }
    }
}

// MARK: - Truth

/// SQL's three truth values.
@usableFromInline package enum Truth: Sendable, Hashable {
    case `true`, `false`, unknown

    @inlinable package init(_ value: Bool) { self = value ? .true : .false }

    @inlinable package static func && (lhs: Truth, rhs: @autoclosure () throws -> Truth) rethrows -> Truth {
        if lhs == .false { return .false }
        let r = try rhs()
        if r == .false { return .false }
        return lhs == .true && r == .true ? .true : .unknown
    }

    @inlinable package static func || (lhs: Truth, rhs: @autoclosure () throws -> Truth) rethrows -> Truth {
        if lhs == .true { return .true }
        let r = try rhs()
        if r == .true { return .true }
        return lhs == .false && r == .false ? .false : .unknown
    }

    @inlinable package static prefix func ! (value: Truth) -> Truth {
        switch value {
        case .true: return .false
        case .false: return .true
        case .unknown: return .unknown
        }
    }
}

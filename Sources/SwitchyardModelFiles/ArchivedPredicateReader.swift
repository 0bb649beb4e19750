import Foundation
import SwitchyardQuery

// MARK: - ArchivedPredicateReader

/// Turns archived NSPredicate / NSExpression objects (fetched properties' predicates, derived attributes'
/// expressions) into `FetchPredicate` format text.
///
/// What the archive holds, worked out from a real model cache whose source code is public:
/// - `NSComparisonPredicate`: `NSLeftExpression`, `NSRightExpression`, `NSPredicateOperator` — an operator
///   object with `NSOperatorType` (NSPredicateOperatorType: 0 `<`, 1 `<=`, 2 `>`, 3 `>=`, 4 `==`, 5 `!=`,
///   6 MATCHES, 7 LIKE, 8 BEGINSWITH, 9 ENDSWITH, 10 IN, 99 CONTAINS, 100 BETWEEN), `NSModifier` (0 direct,
///   1 ALL, 2 ANY), options in `NSOptions` or `NSFlags` (1 `[c]`, 2 `[d]`) and, on equality, `NSNegate`;
/// - `NSCompoundPredicate`: `NSCompoundPredicateType` (0 NOT, 1 AND, 2 OR) and `NSSubpredicates`;
/// - `NSTruePredicate` / `NSFalsePredicate`;
/// - expressions: `NSSelfExpression`; `NSConstantValueExpression` (`NSConstantValue`); `NSVariableExpression`
///   (`NSVariable`); `NSKeyPathExpression`, a function expression whose `NSOperand` is SELF or a variable and
///   whose `NSArguments` hold one `NSKeyPathSpecifierExpression` (`NSKeyPath`, dotted) — so
///   `$FETCH_SOURCE.uuid` is `valueForKeyPath:` applied to the variable `FETCH_SOURCE` with key path `uuid`;
///   `NSFunctionExpression` (`NSSelectorName`, `NSArguments`; `pages.@count` is archived as `count:` of the key
///   path); `NSAggregateExpression` (`NSCollection`).
///
/// What has no `FetchPredicate` equivalent (MATCHES, custom selectors, subqueries, most functions) is printed
/// best-effort in NSPredicate's own syntax instead, so an odd predicate never fails the model.
package struct ArchivedPredicateReader {
    package let archive: KeyedArchive
    /// Objects this reader may still visit. Subpredicates are references, so a few bytes can describe a
    /// predicate whose tree (or printout) is exponentially large; the work is bounded instead.
    private let budget = Budget(remaining: 2_000)

    /// Predicates and expressions nest no deeper than this; archived objects can refer to each other in a
    /// cycle, and nothing legitimate comes close.
    package static let maxDepth = 64

    /// A countdown shared by every step of one reader (a class so the struct's methods can stay non-mutating).
    private final class Budget {
        var remaining: Int
        init(remaining: Int) { self.remaining = remaining }
    }

    package init(archive: KeyedArchive) {
        self.archive = archive
    }

    /// Why a predicate or expression has no `FetchPredicate` form.
    package struct Unconvertible: Error, CustomStringConvertible, LocalizedError {
        package let reason: String
        package var description: String { "predicate has no FetchPredicate form: \(reason)" }
        package var errorDescription: String? { description }
    }

    // MARK: - Entry points

    /// The predicate's format: `FetchPredicate(...).format` where it converts, otherwise best-effort text.
    package func format(_ value: ArchiveValue) -> String {
        if let predicate = try? predicate(value, depth: 0) { return predicate.format }
        return predicateText(value, depth: 0)
    }

    /// A derived attribute's expression as Xcode writes it (`pages.@count`, `name`, `now()`).
    package func derivationText(_ value: ArchiveValue) -> String {
        expressionText(value, depth: 0)
    }

    // MARK: - Conversion

    private func object(_ value: ArchiveValue, depth: Int) throws(Unconvertible) -> ArchivedObject {
        guard depth < Self.maxDepth else { throw Unconvertible(reason: "nested deeper than \(Self.maxDepth) levels") }
        budget.remaining -= 1
        guard budget.remaining >= 0 else { throw Unconvertible(reason: "the predicate is too large") }
        guard case .object(let uid, let className) = value else {
            throw Unconvertible(reason: "\(value) is not a predicate or expression object")
        }
        do {
            return try archive.object(uid)
        } catch {
            throw Unconvertible(reason: "the \(className) with UID \(uid) cannot be read: \(error)")
        }
    }

    package func predicate(_ value: ArchiveValue, depth: Int) throws(Unconvertible) -> FetchPredicate {
        let object = try object(value, depth: depth)
        if object.isKind(of: "NSTruePredicate") { return .constant(true) }
        if object.isKind(of: "NSFalsePredicate") { return .constant(false) }
        if object.isKind(of: "NSCompoundPredicate") {
            var parts: [FetchPredicate] = []
            for sub in object["NSSubpredicates"]?.elements ?? [] { parts.append(try predicate(sub, depth: depth + 1)) }
            switch object["NSCompoundPredicateType"]?.integerValue {
            case 0:
                guard parts.count == 1 else { throw Unconvertible(reason: "NOT with \(parts.count) subpredicates") }
                return .not(parts[0])
            case 1: return .and(parts)
            case 2: return .or(parts)
            default: throw Unconvertible(reason: "unknown compound predicate type")
            }
        }
        guard object.isKind(of: "NSComparisonPredicate") else {
            throw Unconvertible(reason: "\(object.className) has no FetchPredicate equivalent")
        }
        let left = try operand(object["NSLeftExpression"] ?? .null, depth: depth + 1)
        let right = try operand(object["NSRightExpression"] ?? .null, depth: depth + 1)
        let op = try self.object(object["NSPredicateOperator"] ?? .null, depth: depth + 1)
        let type = op["NSOperatorType"]?.integerValue ?? -1
        guard var comparison = Self.operators[type] else {
            throw Unconvertible(reason: "operator type \(type) (\(op.className)) has no FetchPredicate equivalent")
        }
        let negate = op["NSNegate"]?.boolValue ?? false
        if negate && (comparison == .equal || comparison == .notEqual) {
            comparison = comparison == .equal ? .notEqual : .equal
        }
        let rawOptions = op["NSOptions"]?.integerValue ?? op["NSFlags"]?.integerValue ?? 0
        var options: ComparisonOptions = []
        if rawOptions & 1 != 0 { options.insert(.caseInsensitive) }
        if rawOptions & 2 != 0 { options.insert(.diacriticInsensitive) }
        let modifier: ComparisonModifier
        switch op["NSModifier"]?.integerValue ?? 0 {
        case 0: modifier = .direct
        case 1: modifier = .all
        case 2: modifier = .any
        case let other: throw Unconvertible(reason: "unknown comparison modifier \(other)")
        }
        let result = FetchPredicate.comparison(Comparison(left, comparison, right, options: options, modifier: modifier))
        // Only equality has a negated spelling; elsewhere the flag means NOT around the comparison.
        return negate && comparison != .equal && comparison != .notEqual ? .not(result) : result
    }

    /// NSPredicateOperatorType -> ours (MATCHES 6 and custom selectors 11 have no equivalent).
    private static let operators: [Int64: ComparisonOperator] = [
        0: .less, 1: .lessOrEqual, 2: .greater, 3: .greaterOrEqual, 4: .equal, 5: .notEqual, 7: .like,
        8: .beginsWith, 9: .endsWith, 10: .in, 99: .contains, 100: .between,
    ]

    package func operand(_ value: ArchiveValue, depth: Int) throws(Unconvertible) -> PredicateOperand {
        let object = try object(value, depth: depth)
        if object.isKind(of: "NSSelfExpression") { return .keyPath([]) }
        if object.isKind(of: "NSVariableExpression") {
            guard let name = object["NSVariable"]?.stringValue else { throw Unconvertible(reason: "a variable without a name") }
            return .variable(name, keyPath: [])
        }
        if object.isKind(of: "NSConstantValueExpression") {
            return try constant(object["NSConstantValue"] ?? .null, depth: depth + 1)
        }
        if object.isKind(of: "NSKeyPathSpecifierExpression"), let path = object["NSKeyPath"]?.stringValue {
            return .keyPath(Self.components(path))
        }
        if object.isKind(of: "NSAggregateExpression") {
            var items: [PredicateOperand] = []
            for item in object["NSCollection"]?.elements ?? [] { items.append(try operand(item, depth: depth + 1)) }
            return .list(items)
        }
        if object.isKind(of: "NSKeyPathExpression") {
            let arguments = object["NSArguments"]?.elements ?? []
            guard arguments.count == 1, case .keyPath(let path) = try operand(arguments[0], depth: depth + 1) else {
                throw Unconvertible(reason: "a key path expression without one key path argument")
            }
            switch try operand(object["NSOperand"] ?? .null, depth: depth + 1) {
            case .keyPath(let base): return .keyPath(base + path)
            case .variable(let name, let base): return .variable(name, keyPath: base + path)
            default: throw Unconvertible(reason: "a key path applied to a constant")
            }
        }
        if object.isKind(of: "NSFunctionExpression"), object["NSSelectorName"]?.stringValue == "count:" {
            let arguments = object["NSArguments"]?.elements ?? []
            if arguments.count == 1, case .keyPath(let path) = try operand(arguments[0], depth: depth + 1), !path.isEmpty {
                return .keyPath(path + ["@count"])
            }
        }
        throw Unconvertible(reason: "\(object.className) has no FetchPredicate equivalent")
    }

    private func constant(_ value: ArchiveValue, depth: Int) throws(Unconvertible) -> PredicateOperand {
        guard depth < Self.maxDepth else { throw Unconvertible(reason: "nested deeper than \(Self.maxDepth) levels") }
        switch value {
        case .null: return .constant(.null)
        case .bool(let b): return .constant(.bool(b))
        case .integer(let i): return .constant(.integer(i))
        case .real(let d): return .constant(.double(d))
        case .string(let s): return .constant(.string(s))
        case .data(let d): return .constant(.binary(d))
        case .date(let d): return .constant(.date(d))
        case .uuid(let u): return .constant(.uuid(u))
        case .array(let items), .set(let items):
            var operands: [PredicateOperand] = []
            for item in items { operands.append(try constant(item, depth: depth + 1)) }
            return .list(operands)
        case .dictionary, .object: throw Unconvertible(reason: "a constant of a class with no literal form")
        }
    }

    private static func components(_ path: String) -> [String] {
        path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    // MARK: - Best-effort text

    /// NSPredicate-style text for any predicate, converted parts printed by `FetchPredicate`.
    private func predicateText(_ value: ArchiveValue, depth: Int) -> String {
        if let converted = try? predicate(value, depth: depth) { return converted.format }
        guard let object = try? object(value, depth: depth) else { return "<unreadable predicate>" }
        if object.isKind(of: "NSCompoundPredicate") {
            let parts = (object["NSSubpredicates"]?.elements ?? []).map { "(\(predicateText($0, depth: depth + 1)))" }
            switch object["NSCompoundPredicateType"]?.integerValue {
            case 0: return "NOT " + parts.joined(separator: " ")
            case 1: return parts.joined(separator: " AND ")
            default: return parts.joined(separator: " OR ")
            }
        }
        guard object.isKind(of: "NSComparisonPredicate") else { return "<\(object.className)>" }
        let op = try? self.object(object["NSPredicateOperator"] ?? .null, depth: depth + 1)
        let type = op?["NSOperatorType"]?.integerValue ?? -1
        var symbol: String
        switch type {
        case 6: symbol = "MATCHES"
        case 11: symbol = op?["NSSelectorName"]?.stringValue ?? "<custom selector>"
        default: symbol = Self.operators[type]?.rawValue ?? "<operator \(type)>"
        }
        let flags = op?["NSOptions"]?.integerValue ?? op?["NSFlags"]?.integerValue ?? 0
        if flags & 3 != 0 { symbol += "[" + (flags & 1 != 0 ? "c" : "") + (flags & 2 != 0 ? "d" : "") + "]" }
        let modifier = [1: "ALL ", 2: "ANY "][op?["NSModifier"]?.integerValue ?? 0] ?? ""
        let left = expressionText(object["NSLeftExpression"] ?? .null, depth: depth + 1)
        let right = expressionText(object["NSRightExpression"] ?? .null, depth: depth + 1)
        return "\(modifier)\(left) \(symbol) \(right)"
    }

    /// NSExpression-style text for any expression: converted ones as `PredicateOperand.format`, functions as
    /// `selector:(arguments)` like NSExpression prints them.
    private func expressionText(_ value: ArchiveValue, depth: Int) -> String {
        if let converted = try? operand(value, depth: depth) { return converted.format }
        guard let object = try? object(value, depth: depth) else { return "<unreadable expression>" }
        if object.isKind(of: "NSFunctionExpression"), let selector = object["NSSelectorName"]?.stringValue {
            let arguments = (object["NSArguments"]?.elements ?? []).map { expressionText($0, depth: depth + 1) }
            return "\(selector)(\(arguments.joined(separator: ", ")))"
        }
        if object.isKind(of: "NSSubqueryExpression") { return "SUBQUERY(…)" }
        return "<\(object.className)>"
    }
}

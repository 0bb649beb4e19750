import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - PostgreSQLPushdown

/// The part of a predicate the server can decide: comparisons of one of the entity's own attributes with
/// constants, joined by AND and OR. The SQL it writes never drops a row the predicate matches; where it says
/// exactly what the predicate says (`isExact`), the store skips evaluating the predicate itself.
///
/// - `attr == constant`, `attr IN {constants}`, `attr == nil` for numbers, dates, Booleans and text: exact
///   (text compares byte for byte, as `AttributeValue.storeEqual` does).
/// - `<`, `<=`, `>`, `>=`, `BETWEEN` on numbers and dates: narrowed (rows whose value is NULL are kept for the
///   evaluator to decide).
/// - Anything else (string options, `LIKE`, key paths across relationships, `NOT`...): left to the evaluator.
enum PostgreSQLPushdown {
    struct Filter {
        /// The condition over the table aliased `t0`, nil when it selects every row.
        var sql: String?
        var parameters: [ColumnValue]
        /// True when the condition says exactly what the predicate says.
        var isExact: Bool

        static let all = Filter(sql: nil, parameters: [], isExact: true)
    }

    static func compile(_ predicate: FetchPredicate?, layout: SQLiteEntityLayout) -> Filter {
        guard let predicate else { return .all }
        var parameters: [ColumnValue] = []
        guard let (sql, exact) = compile(predicate, layout: layout, parameters: &parameters) else {
            return Filter(sql: nil, parameters: [], isExact: false)
        }
        return Filter(sql: sql, parameters: parameters, isExact: exact)
    }

    /// SQL for `predicate` (nil when nothing can be said), numbering parameters after `parameters`.
    private static func compile(
        _ predicate: FetchPredicate, layout: SQLiteEntityLayout, parameters: inout [ColumnValue]
    ) -> (String, Bool)? {
        switch predicate {
        case .constant(let value):
            return (value ? "TRUE" : "FALSE", true)
        case .and(let parts):
            // Dropping a conjunct only widens the selection: keep what compiles.
            var sqls: [String] = []
            var exact = true
            for part in parts {
                if let (sql, partExact) = compile(part, layout: layout, parameters: &parameters) {
                    sqls.append(sql)
                    exact = exact && partExact
                } else {
                    exact = false
                }
            }
            if sqls.isEmpty { return nil }
            return ("(" + sqls.joined(separator: " AND ") + ")", exact)
        case .or(let parts):
            // Every disjunct must compile, or the OR would drop rows.
            var local = parameters
            var sqls: [String] = []
            var exact = true
            for part in parts {
                guard let (sql, partExact) = compile(part, layout: layout, parameters: &local) else { return nil }
                sqls.append(sql)
                exact = exact && partExact
            }
            parameters = local
            return sqls.isEmpty ? ("FALSE", true) : ("(" + sqls.joined(separator: " OR ") + ")", exact)
        case .not:
            return nil
        case .comparison(let comparison):
            return compile(comparison, layout: layout, parameters: &parameters)
        }
    }

    private enum Kind { case number, text }

    /// The longest `IN` list the server is sent, and the most parameters one filter binds.
    static let maxListItems = 1_000
    static let maxParameters = 10_000

    private static func compile(
        _ c: Comparison, layout: SQLiteEntityLayout, parameters: inout [ColumnValue]
    ) -> (String, Bool)? {
        guard c.modifier == .direct, c.options.isEmpty, case .keyPath(let path) = c.left, path.count == 1,
            let index = layout.attributeIndex[path[0]]
        else { return nil }
        let attribute = layout.attributes[index]
        let kind: Kind
        switch attribute.type {
        case .integer16, .integer32, .integer64, .boolean, .double, .float, .date: kind = .number
        case .string: kind = .text
        default: return nil
        }
        let column = "t0." + PostgreSQLConnection.quote(attribute.column)
        func parameter(_ operand: PredicateOperand) -> String? {
            guard case .constant(let value) = operand, !value.isNull else { return nil }
            switch (kind, value) {
            case (.number, .integer) where attribute.type != .date, (.number, .double) where attribute.type != .date,
                (.number, .bool) where attribute.type != .date:
                break
            case (.number, .date) where attribute.type == .date: break
            // PostgreSQL text cannot hold U+0000 (nor can a stored value): the evaluator decides those.
            case (.text, .string(let text)) where !text.utf8.contains(0): break
            default: return nil
            }
            guard let exact = exactly(value) else { return nil }
            parameters.append(ColumnValue.bind(exact))
            return "$\(parameters.count)"
        }
        let isIntegerColumn = [.integer16, .integer32, .integer64, .boolean].contains(attribute.type)
        /// The constant the server compares exactly as `AttributeValue.order` does, or nil. PostgreSQL compares
        /// a BIGINT with a DOUBLE PRECISION through float8, which rounds integers beyond 2^53: an integer against
        /// a double column is sent as the double that holds it exactly, an integral double against an integer
        /// column as that integer. A non-integral double is exact against integers as it is (no integer rounds
        /// to it); the rest is left to the evaluator.
        func exactly(_ value: AttributeValue) -> AttributeValue? {
            switch value {
            case .integer(let i) where attribute.type == .double || attribute.type == .float:
                return Double(exactly: i).map { .double($0) }
            case .double(let d) where isIntegerColumn && d.rounded(.towardZero) == d:
                return Int64(exactly: d).map { .integer($0) }
            default:
                return value
            }
        }
        switch c.op {
        case .equal:
            if case .constant(let value) = c.right, value.isNull { return ("\(column) IS NULL", true) }
            guard let p = parameter(c.right) else { return nil }
            return ("\(column) = \(p)", true)
        case .in:
            // A long list is left to the evaluator: PostgreSQL binds at most 65,535 parameters per statement.
            guard case .list(let items) = c.right, !items.isEmpty, items.count <= maxListItems, parameters.count + items.count <= maxParameters
            else { return nil }
            let saved = parameters
            var list: [String] = []
            for item in items {
                // A double with a fraction (or NaN) equals no integer; sent along, it would make the list
                // float8 and the server would round the column's integers.
                if isIntegerColumn, case .constant(.double(let d)) = item, d.rounded(.towardZero) != d { continue }
                guard let p = parameter(item) else {
                    parameters = saved
                    return nil
                }
                list.append(p)
            }
            // Without NOT above it, FALSE selects the rows NULL does.
            if list.isEmpty { return ("FALSE", true) }
            return ("\(column) IN (\(list.joined(separator: ", ")))", true)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard kind == .number, let p = parameter(c.right) else { return nil }
            let op = c.op == .less ? "<" : c.op == .lessOrEqual ? "<=" : c.op == .greater ? ">" : ">="
            return ("(\(column) \(op) \(p) OR \(column) IS NULL)", false)
        case .between:
            guard kind == .number, case .list(let bounds) = c.right, bounds.count == 2 else { return nil }
            let saved = parameters
            guard let low = parameter(bounds[0]), let high = parameter(bounds[1]) else {
                parameters = saved
                return nil
            }
            return ("(\(column) BETWEEN \(low) AND \(high) OR \(column) IS NULL)", false)
        default:
            return nil
        }
    }
}

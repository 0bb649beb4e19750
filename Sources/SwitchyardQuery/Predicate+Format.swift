import Foundation
import SwitchyardModel

// MARK: - FetchPredicate format

extension FetchPredicate: CustomStringConvertible {
    /// The predicate in NSPredicate's format language; `FetchPredicate(format: p.format)` gives back `p` for any
    /// parsed predicate. Hand-built trees print equivalently: `.and([])` as `TRUEPREDICATE`, `.or([])` as
    /// `FALSEPREDICATE`, and every nested AND/OR is parenthesized.
    public var format: String {
        switch self {
        case .constant(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let parts):
            return parts.isEmpty ? "TRUEPREDICATE" : parts.map(\.operandFormat).joined(separator: " AND ")
        case .or(let parts):
            return parts.isEmpty ? "FALSEPREDICATE" : parts.map(\.operandFormat).joined(separator: " OR ")
        case .not(let inner):
            return "NOT " + inner.operandFormat
        case .comparison(let comparison):
            return comparison.format
        }
    }

    /// Same as `format`.
    public var description: String { format }

    /// The format as an operand of AND/OR/NOT: compound predicates in parentheses so precedence cannot
    /// regroup them on the way back in.
    private var operandFormat: String {
        switch self {
        case .and, .or: return "(\(format))"
        case .constant, .not, .comparison: return format
        }
    }
}

// MARK: - Comparison format

extension Comparison {
    /// `ANY tags.name BEGINSWITH[cd] "x"`.
    public var format: String {
        var text = modifier == .direct ? "" : modifier.rawValue + " "
        text += left.format + " " + op.rawValue
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            text += "]"
        }
        return text + " " + right.format
    }
}

// MARK: - PredicateOperand format

extension PredicateOperand {
    /// The expression as format-language source: key paths (reserved words escaped with `#`), literals,
    /// `{…}` aggregates, `$VARIABLE.key`. Values without a literal spelling print as `CAST(…)` (see the parser).
    public var format: String {
        switch self {
        case .keyPath(let path):
            return path.isEmpty ? "SELF" : path.map(Self.keyFormat).joined(separator: ".")
        case .constant(let value):
            return Self.literal(value)
        case .list(let elements):
            return "{" + elements.map(\.format).joined(separator: ", ") + "}"
        case .variable(let name, let keyPath):
            return "$" + ([name] + keyPath.map(Self.keyFormat)).joined(separator: ".")
        case .object(let id):
            return "<\(id.uriRepresentation)>"
        }
    }

    /// A key with `#` in front when it is a reserved word (`#IN`), so it is not read as an operator.
    private static func keyFormat(_ key: String) -> String {
        PredicateKeyword.byName[key.uppercased()] == nil ? key : "#" + key
    }

    private static func literal(_ value: AttributeValue) -> String {
        switch value {
        case .null: return "nil"
        case .integer(let i): return String(i)
        case .double(let d):
            // `String(d)` is the shortest text that reads back to the same bits and always has a `.` or `e`;
            // infinities and NaN have no literal, so they go through NSNumber's CAST from a string.
            return d.isFinite ? String(d) : "CAST(\(quoted(String(d))), \"NSNumber\")"
        case .decimal(let d): return "CAST(\(quoted("\(d)")), \"NSDecimalNumber\")"
        case .string(let s): return quoted(s)
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .date(let d): return "CAST(\(literal(.double(d.timeIntervalSinceReferenceDate))), \"NSDate\")"
        case .binary(let d): return "CAST(\(quoted(d.base64EncodedString())), \"NSData\")"
        case .uuid(let u): return "CAST(\(quoted(u.uuidString)), \"NSUUID\")"
        case .uri(let u): return "CAST(\(quoted(u.absoluteString)), \"NSURL\")"
        }
    }

    /// A double-quoted string with the escapes the lexer reads back.
    package static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

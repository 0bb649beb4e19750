import Foundation

// MARK: - AttributeValue

/// A single stored value: what an attribute holds, what a predicate compares and what a store writes.
///
/// ```swift
/// let v: AttributeValue = .string("hello")
/// let n: AttributeValue = 42          // integer literal
/// ```
public enum AttributeValue: Sendable, Hashable {
    /// No value (SQL NULL, Core Data's nil).
    case null
    /// An integer, for every integer attribute type.
    case integer(Int64)
    /// A floating-point number, for `Double` and `Float` attributes.
    case double(Double)
    /// A decimal number.
    case decimal(Decimal)
    /// Text.
    case string(String)
    /// A Boolean.
    case bool(Bool)
    /// A point in time.
    case date(Date)
    /// Bytes.
    case binary(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case uri(URL)

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the case, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "nil"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .bool: return "boolean"
        case .date: return "date"
        case .binary: return "binary"
        case .uuid: return "UUID"
        case .uri: return "URI"
        }
    }

    /// The value as a Double where it is numeric (integers, booleans, decimals, dates as reference seconds).
    public var numericValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return Self.double(of: d)
        case .bool(let b): return b ? 1 : 0
        case .date(let d): return d.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    /// The integer a decimal is, if it is one within Int64's range: SQLite stores (and compares) such a decimal
    /// as that INTEGER.
    package static func integer(of d: Decimal) -> Int64? { Int64(d.description) }

    /// The double nearest a decimal, parsed from its own digits (10.11 is the double nearest 10.11; the route
    /// through `NSDecimalNumber` can round twice): the REAL SQLite stores for it.
    package static func double(of d: Decimal) -> Double {
        Double(d.description) ?? NSDecimalNumber(decimal: d).doubleValue
    }

    /// The value as an exact integer where it is one.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        case .double(let d): return d.rounded() == d && abs(d) < 9.2e18 ? Int64(d) : nil
        default: return nil
        }
    }

    /// The value as a string where it is textual (strings and URIs).
    public var stringValue: String? {
        switch self {
        case .string(let s): return s
        case .uri(let u): return u.absoluteString
        default: return nil
        }
    }

    /// The bytes that represent the value where it is binary (binary data and UUIDs, as Core Data stores them).
    public var bytesValue: Data? {
        switch self {
        case .binary(let d): return d
        case .uuid(let u): return u.bytes
        default: return nil
        }
    }
}

// MARK: - Literals

extension AttributeValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}

// MARK: - Description

extension AttributeValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "nil"
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return "\(d)"
        case .string(let s): return "\"\(Self.escapingControlCharacters(s))\""
        case .bool(let b): return b ? "YES" : "NO"
        case .date(let d):
            // ISO 8601 has no text for NaN or infinity (Foundation prints -4712-01-01 for NaN).
            let seconds = d.timeIntervalSinceReferenceDate
            return seconds.isFinite ? d.ISO8601Format() : "Date(timeIntervalSinceReferenceDate: \(seconds))"
        case .binary(let d): return "<\(d.count) bytes>"
        case .uuid(let u): return u.uuidString
        case .uri(let u): return u.absoluteString
        }
    }

    /// `s` with each control character (U+0000, a newline, a tab, …) written as `\u{…}`, so that an error
    /// quoting a value shows what it holds instead of cutting a line or a terminal's output short.
    private static func escapingControlCharacters(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return s }
        var escaped = ""
        for scalar in s.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

// MARK: - UUID bytes

extension UUID {
    /// The 16 bytes of the UUID, as Core Data stores a UUID attribute in SQLite.
    public var bytes: Data {
        withUnsafeBytes(of: uuid) { Data($0) }
    }

    /// Builds a UUID from 16 bytes; `nil` for any other length.
    public init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        self.init(uuid: raw)
    }
}

import Foundation
import SwitchyardModel

// MARK: - ColumnValue

/// A value as Core Data's SQL layout keeps it in a column, whatever the database: integers and Booleans as
/// integers, floating point and decimals as reals, dates as real seconds since 2001-01-01, UUIDs as 16-byte
/// blobs, URIs as text. The one place that decides which attribute values a column accepts and how a stored
/// value reads back; the SQLite and PostgreSQL stores convert it to their drivers' types.
package enum ColumnValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    // MARK: - Writing

    /// The column value for `value` in a column of `type`; `nil` when the value's kind does not fit the type
    /// or an integer is out of range (the caller reports `StoreError.invalidValue`). Accepts the same kinds as
    /// the other backends: an integral double for an integer, 0/1 for a Boolean, a UUID string for a UUID.
    package static func encode(_ value: AttributeValue, as type: AttributeType) -> ColumnValue? {
        if case .null = value { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .bool = value { return nil }
            guard let i = value.integerValue, type.integerRange?.contains(i) ?? true else { return nil }
            return .integer(i)
        case .boolean:
            switch value {
            case .bool(let b): return .integer(b ? 1 : 0)
            case .integer(let i) where i == 0 || i == 1: return .integer(i)
            default: return nil
            }
        case .double, .float:
            switch value {
            case .double(let d): return .real(d)
            case .integer(let i): return .real(Double(i))
            case .decimal(let d): return Double(d.description).map { .real($0) }
            default: return nil
            }
        case .decimal:
            switch value {
            case .decimal(let d): return decimal(d)
            case .integer(let i): return .integer(i)
            case .double(let d): return .real(d)
            default: return nil
            }
        case .string:
            guard case .string(let s) = value else { return nil }
            return .text(s)
        case .uri, .objectID:
            switch value {
            case .uri(let u): return .text(u.absoluteString)
            case .string(let s): return URL(string: s).map { .text($0.absoluteString) }
            default: return nil
            }
        case .date:
            guard case .date(let d) = value else { return nil }
            return .real(d.timeIntervalSinceReferenceDate)
        case .binary, .transformable:
            guard case .binary(let data) = value else { return nil }
            return .blob(data)
        case .uuid:
            switch value {
            case .uuid(let u): return .blob(u.bytes)
            case .string(let s): return AttributeValue.uuid(fromString: s).map { .blob($0.bytes) }
            case .binary(let d): return UUID(bytes: d).map { .blob($0.bytes) }
            default: return nil
            }
        case .undefined:
            return nil
        }
    }

    /// A predicate constant, bound by its own kind; `hint` (the column's type) only turns a UUID string into
    /// the 16 bytes a UUID column holds (`PredicateEvaluator` compares a UUID with a UUID string the same way).
    package static func bind(_ value: AttributeValue, hint: AttributeType? = nil) -> ColumnValue {
        switch value {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .decimal(let d): return decimal(d)
        case .string(let s):
            if hint == .uuid, let u = AttributeValue.uuid(fromString: s) { return .blob(u.bytes) }
            return .text(s)
        case .bool(let b): return .integer(b ? 1 : 0)
        case .date(let d): return .real(d.timeIntervalSinceReferenceDate)
        case .binary(let data): return .blob(data)
        case .uuid(let u): return .blob(u.bytes)
        case .uri(let u): return .text(u.absoluteString)
        }
    }

    /// Exact integers stay integers (no precision lost); other decimals become the nearest real, parsed from the
    /// decimal's own digits so 10.11 is stored as the double nearest 10.11.
    private static func decimal(_ d: Decimal) -> ColumnValue {
        if let i = AttributeValue.integer(of: d) { return .integer(i) }
        return .real(AttributeValue.double(of: d))
    }

    // MARK: - Reading

    /// The attribute value of a stored value in a column of `type`, tolerating what Core Data wrote (an integer
    /// in a real column, a real date written as an integer).
    package func decode(as type: AttributeType) -> AttributeValue {
        switch (type, self) {
        case (_, .null):
            return .null
        case (.integer16, .integer(let i)), (.integer32, .integer(let i)), (.integer64, .integer(let i)):
            return .integer(i)
        case (.integer16, .real(let d)), (.integer32, .real(let d)), (.integer64, .real(let d)):
            return d.isFinite && abs(d) < 9.2e18 ? .integer(Int64(d)) : .double(d)
        case (.boolean, .integer(let i)):
            return .bool(i != 0)
        case (.boolean, .real(let d)):
            return .bool(d != 0)
        case (.double, .integer(let i)), (.float, .integer(let i)):
            return .double(Double(i))
        case (.double, .real(let d)), (.float, .real(let d)):
            return .double(d)
        case (.decimal, .integer(let i)):
            return .decimal(Decimal(i))
        case (.decimal, .real(let d)):
            return .decimal(AttributeValue.decimal(fromREAL: d))
        case (.decimal, .text(let s)):
            return Decimal(string: s).map { .decimal($0) } ?? .string(s)
        case (.date, .integer(let i)):
            return .date(Date(timeIntervalSinceReferenceDate: TimeInterval(i)))
        case (.date, .real(let d)):
            return .date(Date(timeIntervalSinceReferenceDate: d))
        case (.uri, .text(let s)), (.objectID, .text(let s)):
            return URL(string: s).map { .uri($0) } ?? .string(s)
        case (.uuid, .blob(let data)):
            return UUID(bytes: data).map { .uuid($0) } ?? .binary(data)
        case (.uuid, .text(let s)):
            return UUID(uuidString: s).map { .uuid($0) } ?? .string(s)
        case (.binary, .blob(let data)), (.transformable, .blob(let data)):
            return .binary(data)
        case (.binary, .text(let s)), (.transformable, .text(let s)):
            return .binary(Data(s.utf8))
        default:
            return generic
        }
    }

    /// The value by its storage class alone: for a column whose declared type does not match what it holds.
    package var generic: AttributeValue {
        switch self {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .real(let d): return .double(d)
        case .text(let s): return .string(s)
        case .blob(let data): return .binary(data)
        }
    }
}

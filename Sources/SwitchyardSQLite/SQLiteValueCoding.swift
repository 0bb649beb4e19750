import Foundation
internal import GRDB
import SwitchyardModel

// MARK: - SQLiteValueCoding

/// Converts attribute values to and from what Core Data keeps in SQLite: integers and booleans as INTEGER,
/// floating point and decimals as REAL, dates as REAL seconds since 2001-01-01, UUIDs as 16-byte BLOBs.
package enum SQLiteValueCoding {
    // MARK: - Writing

    /// The database value for `value` in a column of `type`; `nil` when the value's kind does not fit the type
    /// or an integer is out of range (the caller reports `StoreError.invalidValue`). Accepts the same kinds as
    /// the other backends: an integral double for an integer, 0/1 for a Boolean, a UUID string for a UUID.
    static func encode(_ value: AttributeValue, as type: AttributeType) -> DatabaseValue? {
        if case .null = value { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .bool = value { return nil }
            guard let i = value.integerValue, type.integerRange?.contains(i) ?? true else { return nil }
            return i.databaseValue
        case .boolean:
            switch value {
            case .bool(let b): return (b ? Int64(1) : Int64(0)).databaseValue
            case .integer(let i) where i == 0 || i == 1: return i.databaseValue
            default: return nil
            }
        case .double, .float:
            switch value {
            case .double(let d): return d.databaseValue
            case .integer(let i): return Double(i).databaseValue
            case .decimal(let d): return Double(d.description).map(\.databaseValue)
            default: return nil
            }
        case .decimal:
            switch value {
            case .decimal(let d): return decimalValue(d)
            case .integer(let i): return i.databaseValue
            case .double(let d): return d.databaseValue
            default: return nil
            }
        case .string:
            guard case .string(let s) = value else { return nil }
            return s.databaseValue
        case .uri, .objectID:
            switch value {
            case .uri(let u): return u.absoluteString.databaseValue
            case .string(let s): return URL(string: s).map { $0.absoluteString.databaseValue }
            default: return nil
            }
        case .date:
            guard case .date(let d) = value else { return nil }
            return d.timeIntervalSinceReferenceDate.databaseValue
        case .binary, .transformable:
            guard case .binary(let data) = value else { return nil }
            return blob(data)
        case .uuid:
            switch value {
            case .uuid(let u): return u.bytes.databaseValue
            case .string(let s): return AttributeValue.uuid(fromString: s).map { $0.bytes.databaseValue }
            case .binary(let d): return UUID(bytes: d).map { $0.bytes.databaseValue }
            default: return nil
            }
        case .undefined:
            return nil
        }
    }

    /// A predicate constant, bound by its own kind; `hint` (the column's type) only turns a UUID string into
    /// the 16 bytes a UUID column holds (`PredicateEvaluator` compares a UUID with a UUID string the same way).
    static func bind(_ value: AttributeValue, hint: AttributeType? = nil) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let i): return i.databaseValue
        case .double(let d): return d.databaseValue
        case .decimal(let d): return decimalValue(d)
        case .string(let s):
            if hint == .uuid, let u = AttributeValue.uuid(fromString: s) { return u.bytes.databaseValue }
            return s.databaseValue
        case .bool(let b): return (b ? Int64(1) : Int64(0)).databaseValue
        case .date(let d): return d.timeIntervalSinceReferenceDate.databaseValue
        case .binary(let data): return blob(data)
        case .uuid(let u): return u.bytes.databaseValue
        case .uri(let u): return u.absoluteString.databaseValue
        }
    }

    /// SQLite binds a zero-length blob through a NULL pointer as NULL, which would read back as a missing value;
    /// an empty TEXT in the BLOB column keeps "empty but present" and reads back as empty `Data`.
    private static func blob(_ data: Data) -> DatabaseValue {
        data.isEmpty ? "".databaseValue : data.databaseValue
    }

    /// Exact integers stay INTEGER (no precision lost); other decimals become the nearest REAL, parsed from the
    /// decimal's own digits so 10.11 is stored as the double nearest 10.11.
    private static func decimalValue(_ d: Decimal) -> DatabaseValue {
        let text = d.description
        if let i = Int64(text) { return i.databaseValue }
        return (Double(text) ?? NSDecimalNumber(decimal: d).doubleValue).databaseValue
    }

    // MARK: - Reading

    /// The attribute value of a non-NULL database value, tolerating what Core Data wrote (an INTEGER in a
    /// FLOAT column, a REAL date written as an integer).
    static func decode(_ dbValue: DatabaseValue, as type: AttributeType) -> AttributeValue {
        switch (type, dbValue.storage) {
        case (_, .null):
            return .null
        case (.integer16, .int64(let i)), (.integer32, .int64(let i)), (.integer64, .int64(let i)):
            return .integer(i)
        case (.integer16, .double(let d)), (.integer32, .double(let d)), (.integer64, .double(let d)):
            return d.isFinite && abs(d) < 9.2e18 ? .integer(Int64(d)) : .double(d)
        case (.boolean, .int64(let i)):
            return .bool(i != 0)
        case (.boolean, .double(let d)):
            return .bool(d != 0)
        case (.double, .int64(let i)), (.float, .int64(let i)):
            return .double(Double(i))
        case (.double, .double(let d)), (.float, .double(let d)):
            return .double(d)
        case (.decimal, .int64(let i)):
            return .decimal(Decimal(i))
        case (.decimal, .double(let d)):
            return .decimal(AttributeValue.decimal(fromREAL: d))
        case (.decimal, .string(let s)):
            return Decimal(string: s).map { .decimal($0) } ?? .string(s)
        case (.date, .int64(let i)):
            return .date(Date(timeIntervalSinceReferenceDate: TimeInterval(i)))
        case (.date, .double(let d)):
            return .date(Date(timeIntervalSinceReferenceDate: d))
        case (.uri, .string(let s)), (.objectID, .string(let s)):
            return URL(string: s).map { .uri($0) } ?? .string(s)
        case (.uuid, .blob(let data)):
            return UUID(bytes: data).map { .uuid($0) } ?? .binary(data)
        case (.uuid, .string(let s)):
            return UUID(uuidString: s).map { .uuid($0) } ?? .string(s)
        case (.binary, .blob(let data)), (.transformable, .blob(let data)):
            return .binary(data)
        case (.binary, .string(let s)), (.transformable, .string(let s)):
            return .binary(Data(s.utf8))
        default:
            return generic(dbValue)
        }
    }

    /// A value by its storage class alone: for a column whose declared type does not match what it holds.
    static func generic(_ dbValue: DatabaseValue) -> AttributeValue {
        switch dbValue.storage {
        case .null: return .null
        case .int64(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .blob(let data): return .binary(data)
        }
    }

    /// Text for the string-matching function: strings as they are, numbers as SQLite prints them.
    static func text(_ dbValue: DatabaseValue) -> String? {
        switch dbValue.storage {
        case .null: return nil
        case .string(let s): return s
        case .int64(let i): return String(i)
        case .double(let d): return String(d)
        case .blob(let data): return String(data: data, encoding: .utf8)
        }
    }
}

// MARK: - Binding

extension Statement {
    /// Resets the statement and binds `values` to its parameters directly. GRDB's generic `StatementArguments`
    /// initializer builds a key path on every call, which cost more than SQLite's own work for a row.
    /// Returns the SQLite code of the first failed bind, or nil.
    func bindDirectly(_ values: [DatabaseValue]) -> (index: Int, code: CInt)? {
        setUncheckedArguments(StatementArguments())  // resets, and clears the previous bindings
        let sqlite = sqliteStatement
        for (i, value) in values.enumerated() {
            let code = value.bind(to: sqlite, at: CInt(i + 1))
            if code != 0 { return (i + 1, code) }
        }
        return nil
    }
}

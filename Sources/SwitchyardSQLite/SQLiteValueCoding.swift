import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardStores

// MARK: - SQLiteValueCoding

/// Converts attribute values to and from GRDB's database values, by `ColumnValue`'s rules: integers and
/// booleans as INTEGER, floating point and decimals as REAL, dates as REAL seconds since 2001-01-01, UUIDs as
/// 16-byte BLOBs.
package enum SQLiteValueCoding {
    // MARK: - Writing

    /// The database value for `value` in a column of `type`; `nil` when the value's kind does not fit the type
    /// or an integer is out of range (see `ColumnValue.encode`, which decides for every SQL store).
    static func encode(_ value: AttributeValue, as type: AttributeType) -> DatabaseValue? {
        ColumnValue.encode(value, as: type).map(databaseValue)
    }

    /// A predicate constant, bound by its own kind (see `ColumnValue.bind`).
    static func bind(_ value: AttributeValue, hint: AttributeType? = nil) -> DatabaseValue {
        databaseValue(ColumnValue.bind(value, hint: hint))
    }

    /// The GRDB value of a column value. SQLite binds a zero-length blob through a NULL pointer as NULL, which
    /// would read back as a missing value; an empty TEXT in the BLOB column keeps "empty but present" and reads
    /// back as empty `Data`.
    static func databaseValue(_ value: ColumnValue) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let i): return i.databaseValue
        case .real(let d): return d.databaseValue
        case .text(let s): return s.databaseValue
        case .blob(let data): return data.isEmpty ? "".databaseValue : data.databaseValue
        }
    }

    // MARK: - Reading

    /// The attribute value of a non-NULL database value, tolerating what Core Data wrote (see
    /// `ColumnValue.decode`).
    static func decode(_ dbValue: DatabaseValue, as type: AttributeType) -> AttributeValue {
        columnValue(dbValue).decode(as: type)
    }

    /// A value by its storage class alone: for a column whose declared type does not match what it holds.
    static func generic(_ dbValue: DatabaseValue) -> AttributeValue {
        columnValue(dbValue).generic
    }

    /// The column value of a database value, by its storage class.
    static func columnValue(_ dbValue: DatabaseValue) -> ColumnValue {
        switch dbValue.storage {
        case .null: return .null
        case .int64(let i): return .integer(i)
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .blob(let data): return .blob(data)
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

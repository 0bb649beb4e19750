// MARK: - AttributeType

/// The storage type of an attribute, spelled as Xcode's model editor writes `attributeType`.
///
/// ```swift
/// let type = try AttributeType(xcodeName: "Integer 64")   // .integer64
/// ```
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A 16-bit signed integer (`Integer 16`).
    case integer16 = "Integer 16"
    /// A 32-bit signed integer (`Integer 32`).
    case integer32 = "Integer 32"
    /// A 64-bit signed integer (`Integer 64`).
    case integer64 = "Integer 64"
    /// A decimal number (`Decimal`), stored as SQLite REAL as Core Data does.
    case decimal = "Decimal"
    /// A 64-bit floating-point number.
    case double = "Double"
    /// A 32-bit floating-point number (stored as a Double).
    case float = "Float"
    /// Text.
    case string = "String"
    /// A Boolean.
    case boolean = "Boolean"
    /// A point in time, stored as seconds since 2001-01-01 as Core Data does.
    case date = "Date"
    /// Bytes (`Binary`; also what a `Transformable` attribute holds).
    case binary = "Binary"
    /// A UUID, stored as its 16 bytes.
    case uuid = "UUID"
    /// A URL, stored as its absolute string.
    case uri = "URI"
    /// Stored as Binary; the value transformer is the app's business.
    case transformable = "Transformable"
    /// Only legal on transient attributes: never stored.
    case undefined = "Undefined"
    /// Core Data's object-ID attribute type; stored as a URI string.
    case objectID = "ObjectID"

    /// Parses Xcode's spelling; `nil` for a type this library does not know.
    public init?(xcodeName: String) {
        self.init(rawValue: xcodeName)
    }

    /// The column type Core Data declares for this attribute in a SQLite store.
    public var sqlColumnType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .decimal: return "DECIMAL"
        case .double, .float: return "FLOAT"
        case .string, .uri, .objectID: return "VARCHAR"
        case .date: return "TIMESTAMP"
        case .binary, .uuid, .transformable, .undefined: return "BLOB"
        }
    }

    /// True for the integer types (and Boolean, which is stored as an integer).
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: return true
        default: return false
        }
    }

    /// The inclusive range an integer attribute accepts.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }
}

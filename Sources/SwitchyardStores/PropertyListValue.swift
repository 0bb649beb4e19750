import Foundation

// MARK: - PropertyListValue

/// A property-list value that is Sendable, for metadata keys an app adds (they must survive every rewrite).
public indirect enum PropertyListValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer.
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// An array of values.
    case array([PropertyListValue])
    /// A dictionary of values by string key.
    case dictionary([String: PropertyListValue])

    /// Converts what `PropertyListSerialization` returns; `nil` for anything that is not a plist type.
    public init?(foundation value: Any) {
        switch value {
        case let s as String: self = .string(s)
        case let d as Data: self = .data(d)
        case let d as Date: self = .date(d)
        case let n as NSNumber:
            // CFBoolean and NSNumber share a class on Linux; objCType tells them apart.
            let type = String(cString: n.objCType)
            if type == "c" || type == "B" { self = .bool(n.boolValue) }
            else if type == "d" || type == "f" { self = .real(n.doubleValue) }
            else { self = .integer(n.int64Value) }
        case let b as Bool: self = .bool(b)
        case let i as Int: self = .integer(Int64(i))
        case let d as Double: self = .real(d)
        case let a as [Any]:
            var items: [PropertyListValue] = []
            for element in a {
                guard let v = PropertyListValue(foundation: element) else { return nil }
                items.append(v)
            }
            self = .array(items)
        case let dict as [String: Any]:
            var items: [String: PropertyListValue] = [:]
            for (k, element) in dict {
                guard let v = PropertyListValue(foundation: element) else { return nil }
                items[k] = v
            }
            self = .dictionary(items)
        default: return nil
        }
    }

    /// The Foundation object `PropertyListSerialization` writes.
    public var foundationValue: Any {
        switch self {
        case .string(let s): return s
        case .integer(let i): return NSNumber(value: i)
        case .real(let d): return NSNumber(value: d)
        case .bool(let b): return NSNumber(value: b)
        case .date(let d): return d
        case .data(let d): return d
        case .array(let a): return a.map(\.foundationValue)
        case .dictionary(let d): return d.mapValues(\.foundationValue)
        }
    }
}

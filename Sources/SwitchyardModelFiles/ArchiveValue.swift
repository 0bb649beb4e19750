import Foundation

// MARK: - ArchiveValue

/// A value decoded from an NSKeyedArchiver archive: plist primitives, the Foundation value classes the reader
/// knows (strings, data, UUIDs, dates, arrays, sets, dictionaries), and references to every other object.
///
/// ```swift
/// if case .object(let uid, "NSEntityDescription") = value { let entity = try archive.object(uid) }
/// ```
package indirect enum ArchiveValue: Sendable, Hashable {
    /// `nil` (UID 0, `$null`) or `NSNull`.
    case null
    /// A plist boolean (an archived `BOOL` or boolean NSNumber).
    case bool(Bool)
    /// A plist integer (an archived integer or integral NSNumber).
    case integer(Int64)
    /// A plist real (an archived `double` or floating-point NSNumber).
    case real(Double)
    /// A plist string, NSString or NSMutableString.
    case string(String)
    /// Plist data, NSData or NSMutableData.
    case data(Data)
    /// A plist date or NSDate.
    case date(Date)
    /// An NSUUID.
    case uuid(UUID)
    /// NSArray, NSMutableArray, NSOrderedSet.
    case array([ArchiveValue])
    /// NSSet, NSMutableSet, in archive order.
    case set([ArchiveValue])
    /// NSDictionary and its subclasses (including Core Data's `NSKnownKeysDictionary1`), in archive order.
    case dictionary([DictionaryEntry])
    /// An object of any other class (a model description, an app class): `KeyedArchive.object(_:)` reads it.
    case object(uid: Int, className: String)

    /// One key/value pair of a decoded dictionary.
    package struct DictionaryEntry: Sendable, Hashable {
        /// The key (a string in every dictionary Core Data writes).
        package var key: ArchiveValue
        /// The value.
        package var value: ArchiveValue

        /// Creates an entry.
        package init(key: ArchiveValue, value: ArchiveValue) {
            self.key = key
            self.value = value
        }
    }
}

// MARK: - Accessors

extension ArchiveValue {
    /// True for `.null`.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The string of a `.string`.
    package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// An integral number: `.integer`, an exactly integral `.real`, or a `.bool` as 0/1.
    package var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .real(let d): return d.rounded() == d && abs(d) < 9.2e18 ? Int64(d) : nil
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// A flag: `.bool`, or a number (non-zero is true), as NSCoder's `decodeBool` reads one.
    package var boolValue: Bool? {
        switch self {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .real(let d): return d != 0
        default: return nil
        }
    }

    /// The elements of an `.array` or `.set`.
    package var elements: [ArchiveValue]? {
        switch self {
        case .array(let items), .set(let items): return items
        default: return nil
        }
    }

    /// The entries of a `.dictionary`.
    package var entries: [DictionaryEntry]? {
        if case .dictionary(let entries) = self { return entries }
        return nil
    }

    /// The value for a string key of a `.dictionary` (the first, should a key repeat).
    package subscript(key: String) -> ArchiveValue? {
        entries?.first { $0.key == .string(key) }?.value
    }

    /// The UID of an `.object` reference.
    package var objectUID: Int? {
        if case .object(let uid, _) = self { return uid }
        return nil
    }
}

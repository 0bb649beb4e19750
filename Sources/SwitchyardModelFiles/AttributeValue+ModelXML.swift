import Foundation
import SwitchyardModel

// MARK: - Default values in Xcode's model XML

extension AttributeValue {
    /// Parses an attribute's `defaultValueString` as Xcode writes it for `type`; `nil` when the text is not a
    /// value of that type (the loader turns that into `ModelError.invalidDefaultValue`).
    ///
    /// Dates are seconds since 2001-01-01 (Xcode's `defaultDateTimeInterval`); Booleans are `YES`/`NO`.
    package init?(xcodeDefault text: String, type: AttributeType) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            guard let value = Self.parseInteger(trimmed), let range = type.integerRange, range.contains(value) else {
                return nil
            }
            self = .integer(value)
        case .decimal:
            // Decimal(string:) accepts a numeric prefix ("12abc" is 12), so check the whole text first.
            guard Self.isDecimalNumber(trimmed), let value = Decimal(string: trimmed, locale: Self.posix) else {
                return nil
            }
            self = .decimal(value)
        case .double, .float:
            guard let value = Double(trimmed), value.isFinite else { return nil }
            self = .double(value)
        case .string:
            // Whitespace is significant in a string default.
            self = .string(text)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true", "1": self = .bool(true)
            case "no", "false", "0": self = .bool(false)
            default: return nil
            }
        case .date:
            guard let seconds = Double(trimmed), seconds.isFinite else { return nil }
            self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .uuid:
            guard let uuid = UUID(uuidString: trimmed) else { return nil }
            self = .uuid(uuid)
        case .uri:
            guard !trimmed.isEmpty, let url = URL(string: trimmed) else { return nil }
            self = .uri(url)
        case .binary, .transformable, .undefined, .objectID:
            // Xcode offers no default for these types, so any text here is not something we can honour.
            return nil
        }
    }

    /// The text Xcode writes for this value in `defaultValueString`, or `nil` for values it has no spelling
    /// for (null, binary) and for dates, which go in `defaultDateTimeInterval` instead (see `xcodeDateInterval`).
    package var xcodeDefaultString: String? {
        switch self {
        case .null, .binary, .date: return nil
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return d.description
        case .string(let s): return s
        case .bool(let b): return b ? "YES" : "NO"
        case .uuid(let u): return u.uuidString
        case .uri(let u): return u.absoluteString
        }
    }

    /// Seconds since 2001-01-01 for a date value, as Xcode writes `defaultDateTimeInterval`.
    package var xcodeDateInterval: String? {
        guard case .date(let date) = self else { return nil }
        return String(date.timeIntervalSinceReferenceDate)
    }

    // MARK: - Helpers

    private static let posix = Locale(identifier: "en_US_POSIX")

    private static func parseInteger(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        // Some hand-edited models write integral defaults as "0.0"; accept them only when exact.
        if let double = Double(text), double.isFinite, double.rounded() == double, abs(double) < 9.2e18 {
            return Int64(double)
        }
        return nil
    }

    /// `[+-]digits[.digits][e[+-]digits]`, the only forms Xcode writes for a Decimal.
    private static func isDecimalNumber(_ text: String) -> Bool {
        var chars = Substring(text)
        if chars.first == "+" || chars.first == "-" { chars = chars.dropFirst() }
        let mantissa = chars.prefix { $0 != "e" && $0 != "E" }
        let exponent = chars.dropFirst(mantissa.count)
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !mantissa.isEmpty, parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
            parts.contains(where: { !$0.isEmpty })
        else { return false }
        if exponent.isEmpty { return true }
        var digits = exponent.dropFirst()
        if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

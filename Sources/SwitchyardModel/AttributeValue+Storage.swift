import Foundation

// MARK: - Normalization for storage

extension AttributeValue {
    /// The value converted to the canonical case for `type`, so every backend stores and returns the same kind
    /// (`Boolean` -> `.bool`, integers -> `.integer`, `Double`/`Float` -> `.double`, ...); `nil` when the value
    /// cannot be stored in an attribute of that type (wrong kind, integer out of range, or a value that one
    /// of the backends could not give back as it was: see `storageRefusal(for:)`). A Double's -0.0 is stored as
    /// 0.0 (SQLite keeps no negative zero), a Double given for a Decimal is rounded to 15 significant digits.
    public func normalized(for type: AttributeType) -> AttributeValue? {
        if storageRefusal(for: type) != nil { return nil }
        if case .null = self { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            guard let i = integerValue, type.integerRange!.contains(i) else { return nil }
            if case .double = self { return .integer(i) }
            if case .bool = self { return nil }
            return .integer(i)
        case .boolean:
            switch self {
            case .bool: return self
            case .integer(let i) where i == 0 || i == 1: return .bool(i == 1)
            default: return nil
            }
        case .double, .float:
            switch self {
            case .double(let d): return d == 0 ? .double(0) : self
            case .integer(let i): return .double(Double(i))
            case .decimal(let d): return .double(NSDecimalNumber(decimal: d).doubleValue)
            default: return nil
            }
        case .decimal:
            switch self {
            case .decimal: return self
            case .integer(let i): return .decimal(Decimal(i))
            case .double(let d): return d.isFinite ? .decimal(Self.decimal(fromREAL: d)) : nil
            default: return nil
            }
        case .string:
            if case .string = self { return self }
            return nil
        case .date:
            if case .date = self { return self }
            return nil
        case .binary, .transformable:
            if case .binary = self { return self }
            return nil
        case .uuid:
            switch self {
            case .uuid: return self
            case .string(let s): return Self.uuid(fromString: s).map { .uuid($0) }
            case .binary(let d): return UUID(bytes: d).map { .uuid($0) }
            default: return nil
            }
        case .uri, .objectID:
            switch self {
            case .uri: return self
            case .string(let s): return URL(string: s).map { .uri($0) }
            default: return nil
            }
        case .undefined:
            return nil
        }
    }

    /// `normalized(for:)` for a value an object is given (set, a batch update, a model default): for a Float
    /// attribute also rounded to single precision (0.1 reads back as 0.10000000149011612, what `Float(0.1)` is,
    /// so a `Float` property, the stored value and a predicate on the attribute agree), -0.0 as 0; nil where
    /// `normalized(for:)` is nil and for a finite value beyond Float's range, which would become infinity
    /// (`objectRefusal(for:)` says why). Stores keep the doubles they are handed, so a copy or a migration of a
    /// legacy store neither changes nor refuses what its Float columns hold.
    package func normalizedForObject(_ type: AttributeType) -> AttributeValue? {
        guard let value = normalized(for: type) else { return nil }
        guard type == .float, case .double(let d) = value else { return value }
        let f = Float(d)
        if f.isInfinite, d.isFinite { return nil }
        return .double(f == 0 ? 0 : Double(f))
    }

    /// Why `normalizedForObject(_:)` refuses a value of the right kind, or nil (`storageRefusal(for:)`, and a
    /// Float attribute's range).
    package func objectRefusal(for type: AttributeType) -> String? {
        if let refusal = storageRefusal(for: type) { return refusal }
        // The one value `normalized(for:)` takes and `normalizedForObject(_:)` refuses: a Float beyond its range.
        guard normalized(for: type) != nil, normalizedForObject(type) == nil else { return nil }
        return "a Float holds at most ±\(Float.greatestFiniteMagnitude)"
    }

    /// Why a value of the right kind is still refused for an attribute of `type`, or nil: what SQLite (and so,
    /// for one semantics, every backend) cannot give back as it was written. NaN (SQLite stores NULL), a
    /// String containing U+0000 (SQLite's C interface ends text there), and a Decimal that is neither an exact
    /// 64-bit integer nor survives a REAL column (more than 15 significant digits; Core Data stores decimals as
    /// REAL too).
    public func storageRefusal(for type: AttributeType) -> String? {
        // By the value's kind first, and without a tuple of (type, value): this runs for every attribute set and
        // again for every value a store saves, and the tuple's copy of the value cost more than the checks.
        switch self {
        case .double(let d):
            guard type == .double || type == .float || type == .decimal else { return nil }
            return d.isNaN ? "NaN cannot be stored: SQLite stores it as NULL" : nil
        case .decimal(let d):
            switch type {
            case .double, .float: return d.isNaN ? "NaN cannot be stored: SQLite stores it as NULL" : nil
            case .decimal:
                return Self.decimalSurvivesREAL(d)
                    ? nil : "a Decimal must be an exact 64-bit integer or have at most 15 significant digits (stored as REAL, as Core Data does)"
            default: return nil
            }
        case .date(let d):
            guard type == .date else { return nil }
            return d.timeIntervalSinceReferenceDate.isNaN ? "NaN cannot be stored: SQLite stores it as NULL" : nil
        case .string(let s):
            guard type == .string else { return nil }
            return Self.containsNUL(s) ? "a String cannot contain U+0000: SQLite's C interface ends text there" : nil
        default:
            return nil
        }
    }

    /// Whether `s` holds U+0000, read over its contiguous UTF-8 bytes when it has them (every native string,
    /// small ones included), else through the UTF-8 view (a bridged string).
    private static func containsNUL(_ s: String) -> Bool {
        if let found = s.utf8.withContiguousStorageIfAvailable({ $0.contains(0) }) { return found }
        return s.utf8.contains(0)
    }

    /// The UUID a string spells: exactly 36 characters. Foundation's parser stops at a U+0000, so it would
    /// also take "…6E50\u{0}junk" (a difference between backends found by fuzzing).
    package static func uuid(fromString s: String) -> UUID? {
        s.utf8.count == 36 ? UUID(uuidString: s) : nil
    }

    /// The decimal a REAL column's double stands for: a decimal of up to 15 significant digits survives the
    /// trip through a double (DBL_DIG), and printing 15 digits recovers it exactly: 3.3333333333 as Core Data
    /// meant it, not 3.3333333332999993.
    /// NaN and ±Infinity (a legacy REAL column can hold them) have no Decimal but NaN: Decimal(Double.infinity)
    /// traps, and "-inf" parses as 0.
    package static func decimal(fromREAL d: Double) -> Decimal {
        guard d.isFinite else { return .nan }
        return Decimal(string: String(format: "%.15g", d)) ?? Decimal(d)
    }

    /// Whether `d` reads back from a REAL column exactly as it was (or is stored exactly as an integer).
    package static func decimalSurvivesREAL(_ d: Decimal) -> Bool {
        if d.isNaN { return false }
        let text = d.description
        if Int64(text) != nil { return true }
        guard let double = Double(text), double.isFinite else { return false }
        return decimal(fromREAL: double) == d
    }
}

import Foundation

// MARK: - Ordering

extension AttributeValue {
    /// Storage classes in SQLite's cross-type order, so in-memory sorting matches `ORDER BY` in a SQLite store.
    private var storageClassRank: Int {
        switch self {
        case .null: return 0
        case .integer, .double, .decimal, .bool, .date: return 1
        case .string, .uri: return 2
        case .binary, .uuid: return 3
        }
    }

    /// Orders two values the way SQLite's BINARY collation does: NULL first, then numbers, text (UTF-8 bytes),
    /// then blobs (bytes). Every store sorts with this so results agree across backends.
    public static func order(_ lhs: AttributeValue, _ rhs: AttributeValue) -> ComparisonResult {
        let (lr, rr) = (lhs.storageClassRank, rhs.storageClassRank)
        if lr != rr { return lr < rr ? .orderedAscending : .orderedDescending }
        switch lr {
        case 0:
            return .orderedSame
        case 1:
            switch (lhs.exactInteger, rhs.exactInteger) {
            case (let li?, let ri?):
                return li == ri ? .orderedSame : (li < ri ? .orderedAscending : .orderedDescending)
            case (let li?, nil):
                return compare(li, rhs.numericValue ?? 0)
            case (nil, let ri?):
                return compare(lhs.numericValue ?? 0, ri)
            case (nil, nil):
                let (l, r) = (lhs.numericValue ?? 0, rhs.numericValue ?? 0)
                return l == r ? .orderedSame : (l < r ? .orderedAscending : .orderedDescending)
            }
        case 2:
            // In place, without copying either side's bytes into an array (two allocations per comparison,
            // most of a prefetch's grouping in callgrind).
            var (l, r) = (lhs.stringValue ?? "", rhs.stringValue ?? "")
            return l.withUTF8 { lb in r.withUTF8 { rb in compareBytes(UnsafeRawBufferPointer(lb), UnsafeRawBufferPointer(rb)) } }
        default:
            let (l, r) = (lhs.bytesValue ?? Data(), rhs.bytesValue ?? Data())
            return l.withUnsafeBytes { lb in r.withUnsafeBytes { rb in compareBytes(lb, rb) } }
        }
    }

    /// The value of an integer, a Boolean or a decimal that is an integer (stored by SQLite as INTEGER), which
    /// compare exactly; nil for the kinds compared as doubles.
    private var exactInteger: Int64? {
        switch self {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        case .decimal(let d): return Self.integer(of: d)
        default: return nil
        }
    }

    /// Orders an integer and a double by their exact values, as SQLite's `sqlite3IntFloatCompare` does, instead
    /// of through `Double(i)`, which rounds integers beyond 2^53 onto their neighbours: 9007199254740993 is
    /// greater than 9007199254740992.0. A NaN keeps the order a Double comparison gives it.
    package static func compare(_ i: Int64, _ d: Double) -> ComparisonResult {
        if d.isNaN { return .orderedDescending }
        if d < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        if d >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        let t = Int64(d)   // toward zero; in range by the two tests above
        if i != t { return i < t ? .orderedAscending : .orderedDescending }
        // i is d without its fraction, and within 2^52 of zero when d has one: Double(i) is exact here.
        let s = Double(i)
        return s == d ? .orderedSame : (s < d ? .orderedAscending : .orderedDescending)
    }

    /// Orders a double and an integer by their exact values (see `compare(_:_:)` with the integer first).
    package static func compare(_ d: Double, _ i: Int64) -> ComparisonResult {
        if d.isNaN { return .orderedDescending }
        switch compare(i, d) {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Unsigned byte order, then the shorter first (as `memcmp` and SQLite's BINARY collation).
    private static func compareBytes(_ l: UnsafeRawBufferPointer, _ r: UnsafeRawBufferPointer) -> ComparisonResult {
        let n = min(l.count, r.count)
        if n > 0, let lb = l.baseAddress, let rb = r.baseAddress {
            let c = memcmp(lb, rb, n)
            if c != 0 { return c < 0 ? .orderedAscending : .orderedDescending }
        }
        if l.count == r.count { return .orderedSame }
        return l.count < r.count ? .orderedAscending : .orderedDescending
    }

    /// Equality as a store compares values: numbers by value across integer/double/boolean/date,
    /// everything else by content.
    public static func storeEqual(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Bool {
        // Two texts (most keys a prefetch de-duplicates) by their bytes where they lie: through `order`, each
        // comparison copied both values, a third of that de-duplication in `perf`.
        if case .string(let l) = lhs, case .string(let r) = rhs,
           let same = l.utf8.withContiguousStorageIfAvailable({ lb in
               r.utf8.withContiguousStorageIfAvailable { rb in
                   compareBytes(UnsafeRawBufferPointer(lb), UnsafeRawBufferPointer(rb)) == .orderedSame
               }
           }) ?? nil {
            return same
        }
        if lhs.isNull || rhs.isNull { return lhs.isNull && rhs.isNull }
        return order(lhs, rhs) == .orderedSame
    }
}

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
            if let li = lhs.integerValue, let ri = rhs.integerValue, lhs.isExactInteger, rhs.isExactInteger {
                return li == ri ? .orderedSame : (li < ri ? .orderedAscending : .orderedDescending)
            }
            let (l, r) = (lhs.numericValue ?? 0, rhs.numericValue ?? 0)
            return l == r ? .orderedSame : (l < r ? .orderedAscending : .orderedDescending)
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

    private var isExactInteger: Bool {
        switch self {
        case .integer, .bool: return true
        default: return false
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
        if lhs.isNull || rhs.isNull { return lhs.isNull && rhs.isNull }
        return order(lhs, rhs) == .orderedSame
    }
}

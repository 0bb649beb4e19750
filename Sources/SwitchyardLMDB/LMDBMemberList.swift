import Foundation

// MARK: - LMDBMemberList

/// The constants of an `IN` list compiled by `LMDBBytePredicate`, sorted once so that a row's value is found by
/// binary search: a scan tested each row against every element, which a 300,000-key list made minutes long.
///
/// Membership is `LMDBBytePredicate`'s equality: numbers by their exact values (an integer equals a double only
/// when the double is that very integer), text by its UTF-8 bytes; a number never equals text.
package struct LMDBMemberList {
    private let exacts: [Int64]
    /// The doubles that are integers within Int64's range, as integers: what a row's integer can equal.
    private let integralNumbers: [Int64]
    private let numbers: [Double]
    private let texts: [[UInt8]]
    /// True when the list holds nil: a row matching nothing else is then unknown, not false.
    package let containsNull: Bool
    /// True for an empty list.
    package let isEmpty: Bool

    /// Sorts `constants` for lookups.
    package init(_ constants: [LMDBBytePredicate.Constant]) {
        var exacts: [Int64] = [], numbers: [Double] = [], texts: [[UInt8]] = []
        var containsNull = false
        for constant in constants {
            switch constant {
            case .null: containsNull = true
            case .exact(let i): exacts.append(i)
            case .number(let d): if !d.isNaN { numbers.append(d) }   // NaN equals nothing
            case .text(let bytes): texts.append(bytes)
            }
        }
        self.exacts = exacts.sorted()
        integralNumbers = numbers.compactMap { Int64(exactly: $0) }.sorted()
        self.numbers = numbers.sorted()
        self.texts = texts.sorted { Self.compare($0, $1) < 0 }
        self.containsNull = containsNull
        isEmpty = constants.isEmpty
    }

    /// Whether the non-null row value `value` equals an element (`.other` never does: the caller reads such
    /// rows the general way).
    package func contains(_ value: LMDBBytePredicate.Scalar) -> Bool {
        switch value {
        case .exact(let i): return Self.search(exacts, i) || Self.search(integralNumbers, i)
        case .number(let d): return Self.search(numbers, d) || Int64(exactly: d).map { Self.search(exacts, $0) } == true
        case .text(let bytes):
            var low = 0, high = texts.count
            while low < high {
                let mid = (low + high) / 2
                let order = texts[mid].withUnsafeBytes { Self.compare($0, bytes) }
                if order == 0 { return true }
                if order < 0 { low = mid + 1 } else { high = mid }
            }
            return false
        case .null, .other: return false
        }
    }

    private static func search<T: Comparable>(_ sorted: [T], _ value: T) -> Bool {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] == value { return true }
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return false
    }

    /// Byte-wise order of two texts, shorter first on a common prefix (as the predicate orders text).
    private static func compare(_ l: [UInt8], _ r: [UInt8]) -> Int {
        l.withUnsafeBytes { lb in r.withUnsafeBytes { rb in compare(lb, rb) } }
    }

    /// Byte-wise order of two texts (memcmp, then the shorter first): the one text order of LMDB's predicates.
    static func compare(_ l: UnsafeRawBufferPointer, _ r: UnsafeRawBufferPointer) -> Int {
        let n = min(l.count, r.count)
        if n > 0, let lp = l.baseAddress, let rp = r.baseAddress {
            let c = memcmp(lp, rp, n)
            if c != 0 { return Int(c) }
        }
        return l.count == r.count ? 0 : (l.count < r.count ? -1 : 1)
    }
}

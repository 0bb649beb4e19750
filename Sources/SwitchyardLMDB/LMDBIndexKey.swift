import Foundation
import SwitchyardModel

// MARK: - LMDBIndexKey

/// Keys of the `index:` databases: each indexed property's value in an order-preserving, prefix-free
/// encoding, then the row's primary key (8 bytes big-endian). The values carry no payload.
///
/// An element starts with its storage class, the same classes `AttributeValue.order` compares by, so a
/// value only ever meets values it can equal:
/// ```
/// 0x00                      null
/// 0x10 + 8 bytes            any number (integer, double, decimal, boolean, date): the Double value with the
///                           sign bit flipped (negatives: all bits), -0 as +0 — byte order is numeric order
/// 0x20 + escaped + 00 00    text (strings, URIs): UTF-8, each 00 byte written as 00 FF
/// 0x30 + escaped + 00 00    bytes (binary, UUID)
/// ```
/// Two values that `AttributeValue.storeEqual` calls equal always get the same element, so a prefix search
/// finds every candidate. The converse need not hold — integers beyond 2^53 share a Double, long text and
/// data are cut to `elementLimit` bytes (LMDB keys are at most 511 bytes) — so callers always re-check the
/// rows an index returns.
package enum LMDBIndexKey {
    /// The most (escaped) bytes of one text or data value that go into a key.
    package static let elementLimit = 120
    /// The most bytes of values in one key, leaving room for the primary key under LMDB's 511-byte limit.
    package static let valuesLimit = 480

    /// The key of one index entry.
    package static func entry(_ values: [AttributeValue], primaryKey: Int64) -> [UInt8] {
        var w = LMDBByteWriter(capacity: 32)
        for value in values { append(value, to: &w) }
        finish(&w, primaryKey: primaryKey)
        return w.bytes
    }

    /// Completes an entry whose values `w` holds: cut to `valuesLimit` (only a many-property index of long
    /// values gets there; the entry stays unique by its primary key), then the primary key.
    package static func finish(_ w: inout LMDBByteWriter, primaryKey: Int64) {
        if w.bytes.count > valuesLimit { w.bytes.removeLast(w.bytes.count - valuesLimit) }
        w.bigEndian(UInt64(bitPattern: primaryKey))
    }

    /// The prefix shared by every entry whose leading values are `values`.
    package static func prefix(_ values: [AttributeValue]) -> [UInt8] {
        var w = LMDBByteWriter(capacity: 32)
        for value in values { append(value, to: &w) }
        if w.bytes.count > valuesLimit { w.bytes.removeLast(w.bytes.count - valuesLimit) }
        return w.bytes
    }

    /// The prefix of every entry whose first value is `value`.
    package static func prefix(_ value: AttributeValue) -> [UInt8] {
        var w = LMDBByteWriter(capacity: 24)
        append(value, to: &w)
        if w.bytes.count > valuesLimit { w.bytes.removeLast(w.bytes.count - valuesLimit) }
        return w.bytes
    }

    /// The primary key at the end of an entry.
    package static func primaryKey(of entry: UnsafeRawBufferPointer) -> Int64? {
        guard entry.count >= 9 else { return nil }
        return LMDBRowKey.primaryKey(of: entry)
    }

    /// Appends one element.
    package static func append(_ value: AttributeValue, to w: inout LMDBByteWriter) {
        switch value {
        case .null:
            w.byte(0x00)
        case .integer, .double, .decimal, .bool, .date:
            w.byte(0x10)
            w.bigEndian(orderedBits(value.numericValue ?? 0))
        case .string(let s):
            w.byte(0x20)
            escape(s.utf8, into: &w)
        case .uri(let url):
            w.byte(0x20)
            escape(url.absoluteString.utf8, into: &w)
        case .binary(let data):
            w.byte(0x30)
            escape(data, into: &w)
        case .uuid(let uuid):
            w.byte(0x30)
            escape(uuid.bytes, into: &w)
        }
    }

    /// A Double's bits arranged so unsigned byte order is numeric order.
    package static func orderedBits(_ value: Double) -> UInt64 {
        let d = value == 0 ? 0.0 : (value.isNaN ? Double.nan : value)
        let bits = d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// The bytes with 00 escaped as 00 FF (at most `elementLimit` of them), then the 00 00 terminator: no
    /// element is a prefix of another, and byte order is preserved.
    private static func escape<C: Sequence>(_ bytes: C, into w: inout LMDBByteWriter) where C.Element == UInt8 {
        // Contiguous bytes without a 00 among the first `elementLimit` (text, nearly always) go in as one copy:
        // appending byte by byte was most of an index key's cost in callgrind.
        let copied = bytes.withContiguousStorageIfAvailable { buffer -> Bool in
            let kept = UnsafeBufferPointer(rebasing: buffer.prefix(elementLimit))
            guard let base = kept.baseAddress, memchr(base, 0, kept.count) == nil else { return kept.isEmpty }
            w.bytes.append(contentsOf: kept)
            return true
        }
        if copied == true {
            w.byte(0)
            w.byte(0)
            return
        }
        var written = 0
        for b in bytes {
            written += b == 0 ? 2 : 1
            if written > elementLimit { break }
            w.byte(b)
            if b == 0 { w.byte(0xFF) }
        }
        w.byte(0)
        w.byte(0)
    }
}

import Foundation

// MARK: - LMDBByteWriter

/// Appends the primitive encodings the LMDB store's keys and values are built from.
package struct LMDBByteWriter {
    package var bytes: [UInt8]

    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// LEB128: 7 bits per byte, low bits first; small numbers (indexes, entity numbers, lengths) take one byte.
    package mutating func unsigned(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zigzag then LEB128, so small negative numbers stay short too.
    package mutating func signed(_ value: Int64) {
        unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Fixed 8 bytes, most significant first: byte order equals numeric order for unsigned values.
    package mutating func bigEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func bigEndian(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A double's IEEE bits, little-endian (values are decoded, never compared as bytes).
    package mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Length-prefixed bytes.
    package mutating func lengthPrefixed<C: Collection>(_ content: C) where C.Element == UInt8 {
        unsigned(UInt64(content.count))
        bytes.append(contentsOf: content)
    }
}

// MARK: - LMDBByteReader

/// Reads what `LMDBByteWriter` wrote, straight from LMDB's memory map; running past the end is a decoding
/// error, never a crash.
package struct LMDBByteReader {
    /// Reading ran past the end of the value: it is truncated or damaged.
    package struct Overrun: Error, CustomStringConvertible, LocalizedError {
        package var description: String { "the stored value ends early (truncated or damaged)" }
        package var errorDescription: String? { description }
    }

    package let buffer: UnsafeRawBufferPointer
    package private(set) var offset = 0

    package init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    package var isAtEnd: Bool { offset >= buffer.count }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard offset < buffer.count else { throw Overrun() }
        defer { offset += 1 }
        return buffer[offset]
    }

    @inline(__always)
    mutating func unsigned() throws -> UInt64 {
        // Most numbers (tags, positions, lengths) are one byte.
        if offset < buffer.count, buffer[offset] < 0x80 {
            defer { offset += 1 }
            return UInt64(buffer[offset])
        }
        return try unsignedSlow()
    }

    private mutating func unsignedSlow() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw Overrun() }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    @inline(__always)
    mutating func signed() throws -> Int64 {
        let z = try unsigned()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    @inline(__always)
    mutating func double() throws -> Double {
        let raw = try bytes(8)
        return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)))
    }

    /// The next `count` bytes (still pointing into the map).
    @inline(__always)
    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= buffer.count - offset else { throw Overrun() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
    }

    /// Moves past `count` bytes.
    @inline(__always)
    mutating func skip(_ count: UInt64) throws {
        guard count <= UInt64(buffer.count - offset) else { throw Overrun() }
        offset += Int(count)
    }

    /// Moves past one tagged row value when it is an integer of up to 8 bytes, a double or date, a string of
    /// fewer than 128 bytes, a boolean or a null, and the whole value lies within the buffer; otherwise leaves
    /// the offset where it was and returns false (`LMDBRowCoding.skipValue` then takes the general way).
    @inline(__always)
    mutating func skipFixedOrShortValue() -> Bool {
        typealias Tag = LMDBRowCoding.Tag
        let available = buffer.count &- offset
        guard available >= 2, let base = buffer.baseAddress else { return false }
        let at = base + offset
        switch at.load(as: UInt8.self) {
        case Tag.integer.rawValue:
            var i = 1
            while i < 9, i < available {
                if at.load(fromByteOffset: i, as: UInt8.self) < 0x80 {
                    offset &+= i &+ 1
                    return true
                }
                i &+= 1
            }
            return false
        case Tag.double.rawValue, Tag.date.rawValue:
            guard available >= 9 else { return false }
            offset &+= 9
            return true
        case Tag.string.rawValue:   // with a one-byte length
            let length = Int(at.load(fromByteOffset: 1, as: UInt8.self))
            guard length < 0x80, length &+ 2 <= available else { return false }
            offset &+= length &+ 2
            return true
        case Tag.boolFalse.rawValue, Tag.boolTrue.rawValue, Tag.null.rawValue:
            offset &+= 1
            return true
        default:
            return false
        }
    }

    /// The next tagged row value when it is a double or a date (IEEE bits, little-endian) wholly within the
    /// buffer, moving past it; otherwise nil, the offset unchanged.
    @inline(__always)
    mutating func taggedDouble() -> Double? {
        guard buffer.count &- offset >= 9, let base = buffer.baseAddress else { return nil }
        let tag = base.load(fromByteOffset: offset, as: UInt8.self)
        guard tag == LMDBRowCoding.Tag.double.rawValue || tag == LMDBRowCoding.Tag.date.rawValue else { return nil }
        let bits = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 1, as: UInt64.self))
        offset &+= 9
        return Double(bitPattern: bits)
    }

    /// Moves past one varint (signed or unsigned) without assembling it.
    @inline(__always)
    mutating func skipVarint() throws {
        // At most 10 bytes, as `unsigned()` reads.
        var i = offset
        let end = Swift.min(buffer.count, offset + 10)
        while i < end {
            if buffer[i] < 0x80 {
                offset = i + 1
                return
            }
            i += 1
        }
        throw Overrun()
    }

    @inline(__always)
    mutating func lengthPrefixed() throws -> UnsafeRawBufferPointer {
        let count = try unsigned()
        guard count <= UInt64(buffer.count - offset) else { throw Overrun() }
        return try bytes(Int(count))
    }
}

@available(*, unavailable, message: "a reader points into a transaction's memory map")
extension LMDBByteReader: Sendable {}

// MARK: - LMDBRowKey

/// The `rows` database key: the inheritance root's entity number (4 bytes) and the primary key (8 bytes), both
/// big-endian, so byte order is (table, primary key) order and a cursor walks one table in key order.
/// Primary keys are non-negative (the store rejects others), which keeps plain big-endian order numeric.
package enum LMDBRowKey {
    package static let length = 12

    package static func make(root: Int, primaryKey: Int64) -> [UInt8] {
        var w = LMDBByteWriter(capacity: length)
        w.bigEndian(UInt32(truncatingIfNeeded: root))
        w.bigEndian(UInt64(bitPattern: primaryKey))
        return w.bytes
    }

    /// Hands `body` the key of one row, built on the stack: reading a row by key allocates nothing (an array
    /// per lookup was about 400 instructions in callgrind). The bytes are valid only inside `body`.
    @inline(__always)
    package static func withKey<Result>(
        root: Int, primaryKey: Int64, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        let p = UInt64(bitPattern: primaryKey)
        // Three UInt32 lie contiguous in a homogeneous tuple: 12 bytes, as `make` writes them.
        var key = (
            UInt32(truncatingIfNeeded: root).bigEndian, UInt32(truncatingIfNeeded: p >> 32).bigEndian,
            UInt32(truncatingIfNeeded: p).bigEndian)
        return try withUnsafeBytes(of: &key) { try body($0) }
    }

    /// Overwrites a 12-byte key in place (saves reuse one buffer for every row).
    package static func set(_ key: inout [UInt8], root: Int, primaryKey: Int64) {
        let r = UInt32(truncatingIfNeeded: root), p = UInt64(bitPattern: primaryKey)
        for i in 0..<4 { key[i] = UInt8(truncatingIfNeeded: r >> (24 - 8 * i)) }
        for i in 0..<8 { key[4 + i] = UInt8(truncatingIfNeeded: p >> (56 - 8 * i)) }
    }

    /// The first 4 bytes shared by every row of a table.
    package static func prefix(root: Int) -> [UInt8] {
        var w = LMDBByteWriter(capacity: 4)
        w.bigEndian(UInt32(truncatingIfNeeded: root))
        return w.bytes
    }

    /// The root number of a key, or `nil` for a key of the wrong length.
    package static func root(of key: UnsafeRawBufferPointer) -> Int? {
        guard key.count == length else { return nil }
        return Int(readBigEndian32(key, 0))
    }

    /// The primary key of a key (its last 8 bytes).
    package static func primaryKey(of key: UnsafeRawBufferPointer) -> Int64 {
        Int64(bitPattern: readBigEndian64(key, key.count - 8))
    }

    /// Four bytes at `at`, most significant first: one unaligned load (this runs for every row of a walk).
    @inline(__always)
    package static func readBigEndian32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        precondition(at >= 0 && at <= b.count - 4, "a big-endian read past the end of an LMDB key")
        return UInt32(bigEndian: b.loadUnaligned(fromByteOffset: at, as: UInt32.self))
    }

    /// Eight bytes at `at`, most significant first.
    @inline(__always)
    package static func readBigEndian64(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        precondition(at >= 0 && at <= b.count - 8, "a big-endian read past the end of an LMDB key")
        return UInt64(bigEndian: b.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }
}

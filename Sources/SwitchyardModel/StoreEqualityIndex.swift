import Foundation

// MARK: - StoreEqualityIndex

/// Values under `AttributeValue.storeEqual`, each numbered in the order it was first inserted: a hash lookup
/// plus a `storeEqual` check of the values whose hash matches.
///
/// Not generic on purpose: a generic type used from another module runs unspecialized there and looks up its
/// type metadata at every call, which callgrind put at half of a fetched-property prefetch's instructions.
/// Callers keep their payloads in an array indexed by the slot (see `StoreEqualityMap`).
///
/// Its own open-addressing table over hashes it computes (`hash(_:)`, with `ByteHash`: numbers by their value as
/// a `Double`, text by its UTF-8 bytes, data and UUIDs by their bytes — what `storeEqual` compares), rather than a
/// `Dictionary` keyed by `StoreEqualityKey`: hashing a key with `Hasher`, copying it into the dictionary and
/// the bucket's values out of it was 1,300 instructions a value in a prefetch's callgrind profile.
package struct StoreEqualityIndex: Sendable {
    /// By slot; nil once removed (a slot is never handed out again).
    private var values: [AttributeValue?] = []
    /// `hash(_:)` of each slot's value, for probing and for growing the table.
    private var hashes: [UInt64] = []
    /// 0 is empty, -1 a removed entry, otherwise a slot plus one. A power of two, at most half used.
    private var table: [Int32]
    /// Entries of `table` that are not empty (present and removed ones).
    private var used = 0
    /// Values present.
    private var live = 0

    /// The number of slots handed out (removed values keep theirs).
    package var slotCount: Int { values.count }

    /// An empty index with room for `capacity` values.
    package init(capacity: Int = 0) {
        table = Array(repeating: 0, count: Self.tableSize(for: capacity))
        values.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
    }

    /// The slot of the value `storeEqual` to `value`, if present.
    package func slot(of value: AttributeValue) -> Int? {
        find(value, hash: Self.hash(value)).slot
    }

    /// The slot of the value `storeEqual` to `value`; when there is none, `value` is added with the next slot.
    package mutating func insert(_ value: AttributeValue) -> (slot: Int, inserted: Bool) {
        let hash = Self.hash(value)
        let found = find(value, hash: hash)
        if let slot = found.slot { return (slot, false) }
        let slot = values.count
        values.append(value)
        hashes.append(hash)
        live += 1
        if table[found.free] == 0 { used += 1 }
        table[found.free] = Int32(slot + 1)
        if used * 2 > table.count { rebuild() }
        return (slot, true)
    }

    /// Forgets the value `storeEqual` to `value` and returns its slot (not handed out again).
    package mutating func remove(_ value: AttributeValue) -> Int? {
        let found = find(value, hash: Self.hash(value))
        guard let slot = found.slot else { return nil }
        table[found.at] = -1
        values[slot] = nil
        live -= 1
        return slot
    }

    /// Probes for `value`: its slot and table position when present; else the position an insert takes (the
    /// first removed entry passed, or the empty one that ended the probe).
    private func find(_ value: AttributeValue, hash: UInt64) -> (slot: Int?, at: Int, free: Int) {
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        var free: Int?
        while true {
            let entry = table[i]
            if entry == 0 { return (nil, i, free ?? i) }
            if entry < 0 {
                if free == nil { free = i }
            } else {
                let slot = Int(entry) - 1
                if hashes[slot] == hash, let stored = values[slot], AttributeValue.storeEqual(stored, value) {
                    return (slot, i, i)
                }
            }
            i = (i + 1) & mask
        }
    }

    /// A table sized for the values present, without removed entries.
    private mutating func rebuild() {
        table = Array(repeating: 0, count: Self.tableSize(for: live))
        let mask = table.count - 1
        for slot in values.indices where values[slot] != nil {
            var i = Int(truncatingIfNeeded: hashes[slot]) & mask
            while table[i] != 0 { i = (i + 1) & mask }
            table[i] = Int32(slot + 1)
        }
        used = live
    }

    /// A power of two at least four times `count` (a quarter used after a rebuild, half before the next).
    private static func tableSize(for count: Int) -> Int {
        var size = 8
        while size < count * 4 { size *= 2 }
        return size
    }

    /// Equal under `storeEqual` gives equal hashes: numbers by their value as a `Double` (0 for -0, one hash for
    /// every NaN), text and URIs by their text's UTF-8 bytes, data and UUIDs by their bytes.
    static func hash(_ value: AttributeValue) -> UInt64 {
        switch value {
        case .null:
            return 0x6A09_E667_F3BC_C908
        case .integer, .double, .decimal, .bool, .date:
            let number = value.numericValue ?? 0
            if number.isNaN { return ByteHash.mix(0x7FF8_0000_0000_0000) }
            return ByteHash.mix(number == 0 ? 0 : number.bitPattern)
        case .string, .uri:
            var text = value.stringValue ?? ""
            return text.withUTF8 { ByteHash.hash(UnsafeRawBufferPointer($0), seed: 0x2) }
        case .binary, .uuid:
            return (value.bytesValue ?? Data()).withUnsafeBytes { ByteHash.hash($0, seed: 0x3) }
        }
    }
}

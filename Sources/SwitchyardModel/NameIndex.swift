import Foundation

// MARK: - NameIndex

/// Positions by name — attribute names, looked up on every by-name get and set — answering as the
/// `[String: Int]` it is made from, faster: a name is found by hashing its UTF-8 bytes (`ByteHash`) and comparing
/// them with the stored name's, where the dictionary hashes the `String` with SipHash over its Unicode scalars
/// (about 300 instructions a lookup in callgrind, a quarter of a typed attribute write).
///
/// Equal bytes are equal strings, so a name found by its bytes is the dictionary's answer. A name not found by
/// its bytes is looked up in the dictionary unless it and every stored name are ASCII: only then can no stored
/// name be the same `String` spelled with other, canonically equivalent scalars (U+212A KELVIN SIGN equals "K").
///
/// A class, immutable: the layouts and handles that hold one are read through class references, and copying
/// a struct of its arrays out of them for a lookup retained and released each (callgrind).
package final class NameIndex: Sendable, Equatable {
    /// The positions, as given.
    package let dictionary: [String: Int]
    /// Every stored name's UTF-8 bytes, one after another.
    private let bytes: [UInt8]
    /// One per stored name.
    private let entries: [Entry]
    /// 0 is empty, otherwise an entry plus one. A power of two, at most half used.
    private let table: [Int32]
    /// Whether every stored name is ASCII (see the type's summary).
    private let allASCII: Bool
    /// Each stored name's in-memory representation, at the slot its words hash to (a power of two, at most a
    /// quarter used; a name whose slot another took is left out and found by its bytes): see `subscript(name:)`.
    /// 24 bytes a slot, about 100 a name.
    private let representations: [Representation]
    /// 64 minus log2 of `representations.count`: `slot(of:shift:)` keeps the top bits of a product.
    private let representationShift: Int

    /// An index answering as `positions` does.
    package init(_ positions: [String: Int]) {
        dictionary = positions
        var bytes: [UInt8] = [], entries: [Entry] = []
        var size = 8
        while size < positions.count * 2 { size *= 2 }
        var table = [Int32](repeating: 0, count: size)
        // In position order, so equal inputs build equal tables.
        for (name, position) in positions.sorted(by: { $0.value < $1.value }) {
            let utf8 = Array(name.utf8)
            let hash = utf8.withUnsafeBytes { ByteHash.hash($0) }
            var i = Int(truncatingIfNeeded: hash) & (size - 1)
            while table[i] != 0 { i = (i + 1) & (size - 1) }
            table[i] = Int32(entries.count + 1)
            entries.append(Entry(start: bytes.count, length: utf8.count, position: position))
            bytes += utf8
        }
        self.bytes = bytes
        self.entries = entries
        self.table = table
        allASCII = bytes.allSatisfy { $0 < 0x80 }
        var representations: [Representation] = []
        var shift = 64
        if MemoryLayout<String>.size == 16 {
            var slots = 8
            while slots < positions.count * 4 { slots *= 2 }
            shift = 64 - slots.trailingZeroBitCount
            representations = Array(repeating: Representation(words: (0, 0), position: -1), count: slots)
            // The dictionary's own keys: `dictionary` keeps each one's storage alive (see `subscript(name:)`).
            for (name, position) in dictionary {
                let words = Self.words(of: name)
                let slot = Self.slot(of: words, shift: shift)
                if representations[slot].position < 0 { representations[slot] = Representation(words: words, position: position) }
            }
        }
        self.representations = representations
        representationShift = shift
    }

    /// The position of `name`, as `dictionary[name]`.
    ///
    /// First by `name`'s in-memory representation, which costs no hashing of its bytes: a typed property reads
    /// its attribute by a name written as a literal, and a literal of up to 15 UTF-8 bytes is a small string —
    /// its two words hold its bytes and length, so they equal those of the stored name with the same bytes
    /// (callgrind: about 210 instructions a lookup by bytes, a third of a typed attribute read). Equal words
    /// are always equal strings: a small string's words are its bytes; any other string's words point to
    /// storage holding its bytes, and the storage of a stored name stays alive (`dictionary` holds it) and
    /// unchanged (a string changes its storage in place only while no other string refers to it). Different
    /// words prove nothing (the same name in other storage), so a miss goes on by bytes.
    ///
    /// The by-bytes search is a function of its own, so this path keeps no stack buffer and saves no registers
    /// for it: about 30 instructions a found name instead of 54 (callgrind, every typed attribute read).
    package subscript(name name: String) -> Int? {
        if !representations.isEmpty {
            let words = Self.words(of: name)
            let candidate = representations[Self.slot(of: words, shift: representationShift)]
            if candidate.position >= 0, candidate.words == words { return candidate.position }
        }
        return position(byBytesOf: name)
    }

    /// `subscript(name:)` for a name not found by its representation.
    @inline(never)
    private func position(byBytesOf name: String) -> Int? {
        switch name.utf8.withContiguousStorageIfAvailable({ find(UnsafeRawBufferPointer($0)) }) ?? .undecided {
        case .found(let position): return position
        case .absent: return nil
        case .undecided: return dictionary[name]
        }
    }

    /// A stored name's two words and its position (-1: an empty slot).
    private struct Representation {
        let words: (UInt64, UInt64)
        let position: Int
    }

    /// A string's two words as they lie in memory (only called where `String` is 16 bytes). A bit cast, not
    /// `withUnsafeBytes(of:)`: that put the string in a stack slot, and the slot a stack-protector check.
    @inline(__always)
    private static func words(of name: String) -> (UInt64, UInt64) {
        unsafeBitCast(name, to: (UInt64, UInt64).self)
    }

    /// The slot of `representations` (of 2^(64 - `shift`) slots) for these words: the top bits of one product
    /// (Fibonacci hashing), which depend on every bit of both words. A collision only sends a name to the
    /// by-bytes search.
    @inline(__always)
    private static func slot(of words: (UInt64, UInt64), shift: Int) -> Int {
        Int(truncatingIfNeeded: ((words.0 ^ (words.1 &* 0xC2B2_AE3D_27D4_EB4F)) &* 0x9E37_79B9_7F4A_7C15) &>> UInt64(shift))
    }

    /// Where a stored name's bytes are in `bytes`, and its position.
    private struct Entry {
        let start: Int
        let length: Int
        let position: Int
    }

    /// What the bytes of a name tell.
    private enum Outcome {
        /// A stored name with these bytes.
        case found(Int)
        /// No stored name: the name and every stored one are ASCII, and no stored name has its bytes.
        case absent
        /// The dictionary must decide (a miss that is not all ASCII, or a name without contiguous UTF-8).
        case undecided
    }

    private func find(_ key: UnsafeRawBufferPointer) -> Outcome {
        let hash = ByteHash.hash(key)
        let mask = table.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        return bytes.withUnsafeBytes { stored -> Outcome in
            while true {
                let entry = Int(table[i])
                if entry == 0 { return allASCII && !key.contains(where: { $0 >= 0x80 }) ? .absent : .undecided }
                let e = entries[entry - 1]
                if e.length == key.count, key.count == 0 || memcmp(key.baseAddress!, stored.baseAddress! + e.start, key.count) == 0 {
                    return .found(e.position)
                }
                i = (i + 1) & mask
            }
        }
    }

    /// Equal when made from equal positions (the tables are then equal too).
    package static func == (lhs: NameIndex, rhs: NameIndex) -> Bool { lhs.dictionary == rhs.dictionary }
}

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
package struct NameIndex: Sendable, Equatable {
    /// The positions, as given.
    package let dictionary: [String: Int]
    /// Every stored name's UTF-8 bytes, one after another.
    private let bytes: [UInt8]
    /// Per entry: where its name starts in `bytes`, its length, and its position.
    private let starts: [Int]
    private let lengths: [Int]
    private let positions: [Int]
    /// 0 is empty, otherwise an entry plus one. A power of two, at most half used.
    private let table: [Int32]
    /// Whether every stored name is ASCII (see the type's summary).
    private let allASCII: Bool

    /// An index answering as `positions` does.
    package init(_ positions: [String: Int]) {
        dictionary = positions
        var bytes: [UInt8] = [], starts: [Int] = [], lengths: [Int] = [], at: [Int] = []
        var size = 8
        while size < positions.count * 2 { size *= 2 }
        var table = [Int32](repeating: 0, count: size)
        // In position order, so equal inputs build equal tables.
        for (name, position) in positions.sorted(by: { $0.value < $1.value }) {
            let utf8 = Array(name.utf8)
            let hash = utf8.withUnsafeBytes { ByteHash.hash($0) }
            var i = Int(truncatingIfNeeded: hash) & (size - 1)
            while table[i] != 0 { i = (i + 1) & (size - 1) }
            table[i] = Int32(starts.count + 1)
            starts.append(bytes.count)
            lengths.append(utf8.count)
            at.append(position)
            bytes += utf8
        }
        self.bytes = bytes
        self.starts = starts
        self.lengths = lengths
        self.positions = at
        self.table = table
        allASCII = bytes.allSatisfy { $0 < 0x80 }
    }

    /// The position of `name`, as `dictionary[name]`.
    package subscript(name name: String) -> Int? {
        switch name.utf8.withContiguousStorageIfAvailable({ find(UnsafeRawBufferPointer($0)) }) ?? .undecided {
        case .found(let position): return position
        case .absent: return nil
        case .undecided: return dictionary[name]
        }
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
                let e = entry - 1
                if lengths[e] == key.count,
                    key.count == 0 || memcmp(key.baseAddress!, stored.baseAddress! + starts[e], key.count) == 0
                {
                    return .found(positions[e])
                }
                i = (i + 1) & mask
            }
        }
    }

    package static func == (lhs: NameIndex, rhs: NameIndex) -> Bool { lhs.dictionary == rhs.dictionary }
}

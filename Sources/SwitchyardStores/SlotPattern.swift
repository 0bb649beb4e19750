import Foundation
import SwitchyardModel

// MARK: - SlotPattern

/// Where each value of a row sits in a `RowStorage` block: a byte offset per position, then one tag byte per
/// position after the values.
///
/// A position whose attribute type is a number, a Boolean or a date takes 8 bytes; any other takes 16 (text,
/// data, a UUID or a URL fits there as it is). An `AttributeValue` takes 24 bytes, so an entity of numbers and
/// short strings keeps its values in half the memory: a million fetched objects of the benchmark's entity hold
/// 72 MB less. A value that does not fit its position (text in a number's position, or a decimal anywhere) is
/// kept in a box the position refers to, so any value can still go anywhere.
@usableFromInline package final class SlotPattern: Sendable {
    /// The number of positions.
    @usableFromInline package let width: Int
    /// Byte offset of each position's value from the start of its row.
    @usableFromInline package let offsets: [Int]
    /// Whether each position has 16 bytes (else 8).
    @usableFromInline package let isWide: [Bool]
    /// Byte offset of the first tag from the start of its row.
    @usableFromInline package let tagOffset: Int
    /// Bytes per row (a multiple of 8, so every row starts aligned).
    @usableFromInline package let stride: Int

    /// A pattern with a wide position where `wide` says so.
    package init(wide: [Bool]) {
        width = wide.count
        isWide = wide
        var offsets: [Int] = []
        offsets.reserveCapacity(wide.count)
        var offset = 0
        for w in wide {
            offsets.append(offset)
            offset += w ? 16 : 8
        }
        self.offsets = offsets
        tagOffset = offset
        stride = (offset + wide.count + 7) & ~7
    }

    /// A pattern for attributes of these types: 8 bytes for numbers, Booleans and dates, 16 for the rest.
    package convenience init(types: [AttributeType]) {
        self.init(wide: types.map { !Self.isNarrow($0) })
    }

    /// Every position wide (rows built by hand, whose attribute types are not known).
    package convenience init(width: Int) {
        self.init(wide: Array(repeating: true, count: width))
    }

    /// The pattern of rows with no positions.
    package static let empty = SlotPattern(wide: [])

    /// Types whose values always fit 8 bytes.
    private static func isNarrow(_ type: AttributeType) -> Bool {
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .boolean, .date: return true
        case .decimal, .string, .binary, .uuid, .uri, .transformable, .undefined, .objectID: return false
        }
    }
}

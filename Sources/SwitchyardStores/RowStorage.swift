import Foundation
import SwitchyardModel

// MARK: - RowStorage

/// Attribute values of one or many rows in one block of memory; `RowValues` refers to one row of it.
///
/// A fetch decodes thousands of rows; giving each its own array costs an allocation, a free and a generic
/// metadata lookup per row, more than decoding the row. A `RowArena` instead fills blocks of a few hundred rows,
/// and each row keeps its block alive (as a `Substring` keeps its `String`). A row that is changed copies itself
/// out first unless it is the block's only user.
///
/// Rows lie as their `SlotPattern` says: each value in 8 or 16 bytes by its attribute's type, and a tag byte
/// per position telling what the bytes hold (`Tag`), rather than an `AttributeValue` (24 bytes) per position.
///
/// Values are written only by the arena, before any row referring to them is handed out, or through a
/// uniquely referenced `RowValues` or `ChangedValues`: hence `@unchecked Sendable`.
@usableFromInline package final class RowStorage: @unchecked Sendable {
    /// Where each row's values sit.
    @usableFromInline package let pattern: SlotPattern
    @usableFromInline let bytes: UnsafeMutableRawPointer
    // Two 32-bit counts and one pointer after the two above: the object asks malloc for 48 bytes, which it
    // serves from a 64-byte chunk; two Ints made it 64 and an 80-byte chunk.
    private let rowCapacity: Int32
    // The `var`s skip Swift's dynamic exclusivity check (`@exclusivity(unchecked)`), as `ManagedObject`'s do.
    // No access to them can overlap another: they are read, assigned or incremented, never while a closure runs,
    // and written only under the rules above.
    @exclusivity(unchecked) private var rowCount: Int32 = 0
    /// A change block's change words (see `init(changesOf:capacity:)`), after its rows in the same allocation;
    /// nil for any other block.
    @usableFromInline let changeWords: UnsafeMutablePointer<UInt64>?

    /// Words of change bits per row: one bit per position.
    @inlinable var changeWordsPerRow: Int { Self.changeWords(width: pattern.width) }

    /// Words of change bits per row of a pattern `width` positions wide.
    @inlinable static func changeWords(width: Int) -> Int { (width + 63) >> 6 }

    /// A block of the unsaved values of a context's objects (`ChangedValues`): room for `capacity` rows of
    /// `pattern`, each with a bit per position saying which hold a change, in the same allocation as the rows.
    /// Many objects' changes share one block, as fetched rows share theirs: a one-row block of the bench entity
    /// took two allocations, 144 bytes with malloc's overhead, where a row of a shared block takes 80 with its
    /// bits. A row is written only by the one `ChangedValues` that took it, and only until it hands the row out
    /// (to a save); one handed out is never written again.
    package convenience init(changesOf pattern: SlotPattern, capacity: Int) {
        self.init(pattern: pattern, rows: capacity, tracksChanges: true)
    }

    /// Whether the value at `position` of `row` is a change (a change block only).
    @inlinable @inline(__always)
    package func isChanged(_ row: Int, _ position: Int) -> Bool {
        let word = changeWords.unsafelyUnwrapped[row &* changeWordsPerRow &+ position >> 6]
        return word & (1 &<< UInt64(position & 63)) != 0
    }

    /// Marks `position` of `row` as a change, or not (a change block only).
    @inlinable @inline(__always)
    package func setChanged(_ row: Int, _ position: Int, _ changed: Bool) {
        let word = changeWords.unsafelyUnwrapped + (row &* changeWordsPerRow &+ position >> 6)
        let bit: UInt64 = 1 &<< UInt64(position & 63)
        word.pointee = changed ? word.pointee | bit : word.pointee & ~bit
    }

    /// The number of positions of `row` marked as changes (a change block only).
    package func changeCount(_ row: Int) -> Int {
        let words = changeWordsPerRow
        var count = 0
        for w in 0..<words { count &+= changeWords.unsafelyUnwrapped[row * words + w].nonzeroBitCount }
        return count
    }

    /// Calls `body` with each position of `row` marked as a change and its value, in position order, reading
    /// the bits (no position without a change is visited, no array is built). A change block only.
    @inline(__always)
    package func forEachChange(_ row: Int, _ body: (Int, AttributeValue) throws -> Void) rethrows {
        let words = changeWordsPerRow
        for w in 0..<words {
            var mask = changeWords.unsafelyUnwrapped[row * words + w]
            while mask != 0 {
                let position = w << 6 | mask.trailingZeroBitCount
                try body(position, self[row, position])
                mask &= mask &- 1
            }
        }
    }

    /// A copy of `row` of a change block, values and change bits, into a new one-row change block (for a row
    /// that was handed out and is to be changed again).
    package func copyChanges(row: Int) -> RowStorage {
        let copy = RowStorage(changesOf: pattern, capacity: 1)
        copyValues(of: row, into: copy)
        let words = changeWordsPerRow
        for w in 0..<words { copy.changeWords.unsafelyUnwrapped[w] = changeWords.unsafelyUnwrapped[row * words + w] }
        return copy
    }

    /// What a position's bytes hold.
    @usableFromInline enum Tag: UInt8 {
        case null = 0, integer, double, bool, date, string, binary, uuid, uri
        /// A reference to a `Box`: a value wider than its position.
        case boxed
    }

    /// A value that does not fit its position.
    @usableFromInline final class Box: Sendable {
        @usableFromInline let value: AttributeValue
        @usableFromInline init(_ value: AttributeValue) { self.value = value }
    }

    /// A block with room for `capacity` rows of `pattern`, none in use.
    package convenience init(pattern: SlotPattern, capacity: Int) {
        self.init(pattern: pattern, rows: capacity, tracksChanges: false)
    }

    /// A block with room for `capacity` rows of `pattern`, none in use, and with `tracksChanges` a word of change
    /// bits per 64 positions of each row after the rows (`stride` is a multiple of 8, so the words are aligned).
    private init(pattern: SlotPattern, rows capacity: Int, tracksChanges: Bool) {
        self.pattern = pattern
        let rows = max(capacity, 1)
        precondition(rows <= Int(Int32.max), "RowStorage: \(rows) rows in one block")
        rowCapacity = Int32(rows)
        let words = tracksChanges ? Self.changeWords(width: pattern.width) * rows : 0
        // malloc, freed in `deinit`, rather than `UnsafeMutableRawPointer.allocate`: the standard library hands
        // any alignment up to 16 to the runtime as the default one, which on Linux it allocates with
        // posix_memalign (a longer path: about 70 instructions more a block in callgrind, one block per one-row
        // fetch). malloc's
        // 16-byte alignment covers every value a slot holds (each needs at most 8) and each row starts at a
        // multiple of 8.
        let byteCount = max(pattern.stride * rows + words * 8, 1)
        guard let allocated = malloc(byteCount) else { fatalError("RowStorage: out of memory for \(byteCount) bytes") }
        bytes = allocated
        if tracksChanges {
            let bits = (bytes + pattern.stride * rows).bindMemory(to: UInt64.self, capacity: words)
            bits.initialize(repeating: 0, count: words)
            changeWords = bits
        } else {
            changeWords = nil
        }
        assert(Tag.boxed.rawValue == 9 && unsafeBitCast(Tag.boxed, to: UInt8.self) == 9, "RowStorage: Tag's raw values must be its case indices")
    }

    /// Rows the block has room for.
    package var capacity: Int { Int(rowCapacity) }
    /// Rows in use, from the start; every value of a row in use is initialized (a null is a tag only).
    package var count: Int { Int(rowCount) }

    /// A block holding one row of exactly `values` (one per position of `pattern`).
    package convenience init<C: Collection>(pattern: SlotPattern, values: C) where C.Element == AttributeValue {
        precondition(values.count == pattern.width, "RowStorage: \(values.count) values for \(pattern.width) positions")
        self.init(pattern: pattern, capacity: 1)
        let row = appendRow()
        for (position, value) in values.enumerated() where !value.isNull { self[row, position] = value }
    }

    deinit {
        for row in 0..<count {
            for position in 0..<pattern.width { destroy(row, position) }
        }
        free(bytes)
    }

    /// The shared empty block of rows without a layout.
    package static let empty = RowStorage(pattern: .empty, capacity: 1)

    /// A new block holding a copy of `row` (copied before it changes while other rows or objects still share
    /// this block).
    package func copy(row: Int) -> RowStorage {
        let copy = RowStorage(pattern: pattern, capacity: 1)
        copyValues(of: row, into: copy)
        return copy
    }

    /// Appends a copy of `row`'s values to `copy`, a block of the same pattern with room for it.
    private func copyValues(of row: Int, into copy: RowStorage) {
        let target = copy.appendRow()
        for position in 0..<pattern.width where tag(row, position) != .null { copy[target, position] = self[row, position] }
    }

    /// Adds a row of nulls and returns its index.
    package func appendRow() -> Int {
        precondition(count < capacity, "RowStorage: no room for another row")
        let row = count
        (bytes + row * pattern.stride + pattern.tagOffset).initializeMemory(as: UInt8.self, repeating: 0, count: pattern.width)
        rowCount += 1
        return row
    }

    /// Rows left room for.
    package var remaining: Int { capacity - count }

    @inlinable @inline(__always) func tagPointer(_ row: Int, _ position: Int) -> UnsafeMutablePointer<UInt8> {
        (bytes + (row * pattern.stride + pattern.tagOffset + position)).assumingMemoryBound(to: UInt8.self)
    }

    @inlinable @inline(__always) func valuePointer(_ row: Int, _ position: Int) -> UnsafeMutableRawPointer {
        bytes + (row * pattern.stride + pattern.offsets[position])
    }

    /// The tag at a position. Read as the enum's own bytes: `Tag(rawValue:)` stayed a call in other modules,
    /// and every value read retained the block around it. The raw values are the cases' indices from 0 (checked
    /// in `init`), and a tag byte is only ever written from a `Tag`.
    @inlinable @inline(__always) func tag(_ row: Int, _ position: Int) -> Tag {
        unsafeBitCast(tagPointer(row, position).pointee, to: Tag.self)
    }

    /// Writes an integer at a position of a row in use: the subscript's write for a decoding loop that has
    /// the value as its own type (a store decoding its rows), without building an `AttributeValue` for it.
    @inlinable @inline(__always)
    package func set(_ row: Int, _ position: Int, integer value: Int64) { store(value, row, position, .integer) }

    /// Writes a double at a position of a row in use (see `set(_:_:integer:)`).
    @inlinable @inline(__always)
    package func set(_ row: Int, _ position: Int, double value: Double) { store(value, row, position, .double) }

    /// Writes a date at a position of a row in use (see `set(_:_:integer:)`).
    @inlinable @inline(__always)
    package func set(_ row: Int, _ position: Int, date value: Date) { store(value, row, position, .date) }

    /// Writes a Boolean at a position of a row in use (see `set(_:_:integer:)`).
    @inlinable @inline(__always)
    package func set(_ row: Int, _ position: Int, bool value: Bool) { store(value, row, position, .bool) }

    /// Stores a value of 8 bytes or fewer, which every position has room for, under `tag`. Inlinable with the
    /// `set`s above: a store decoding a row called into this module once per value (60-90 instructions each,
    /// callgrind).
    @inlinable @inline(__always)
    func store<T>(_ value: T, _ row: Int, _ position: Int, _ tag: Tag) {
        if holdsReference(row, position) { destroy(row, position) }
        valuePointer(row, position).storeBytes(of: value, as: T.self)
        tagPointer(row, position).pointee = tag.rawValue
    }

    /// Writes a string at a position of a row in use (see `set(_:_:integer:)`); boxed where the position is
    /// narrow, as the subscript does.
    @inlinable @inline(__always)
    package func set(_ row: Int, _ position: Int, string value: String) {
        guard pattern.isWide[position] else { self[row, position] = .string(value); return }
        destroy(row, position)
        valuePointer(row, position).initializeMemory(as: String.self, repeating: value, count: 1)
        tagPointer(row, position).pointee = Tag.string.rawValue
    }

    /// Whether the value at a position holds a reference that `destroy` must release.
    @inlinable @inline(__always)
    func holdsReference(_ row: Int, _ position: Int) -> Bool {
        switch tag(row, position) {
        case .null, .integer, .double, .bool, .date, .uuid: return false
        case .string, .binary, .uri, .boxed: return true
        }
    }

    /// Ends the life of the value at a position, leaving its tag to be rewritten.
    @usableFromInline func destroy(_ row: Int, _ position: Int) {
        let p = valuePointer(row, position)
        switch tag(row, position) {
        case .null, .integer, .double, .bool, .date, .uuid: break
        case .string: p.assumingMemoryBound(to: String.self).deinitialize(count: 1)
        case .binary: p.assumingMemoryBound(to: Data.self).deinitialize(count: 1)
        case .uri: p.assumingMemoryBound(to: URL.self).deinitialize(count: 1)
        case .boxed: p.assumingMemoryBound(to: Box.self).deinitialize(count: 1)
        }
    }

    /// The value of a row in use at `position` (`.null` where absent).
    @inlinable package subscript(row: Int, position: Int) -> AttributeValue {
        // Always inlined: left a call, every attribute read retained the block and the objects around it.
        @inline(__always) get {
            let p = valuePointer(row, position)
            switch tag(row, position) {
            case .null: return .null
            case .integer: return .integer(p.load(as: Int64.self))
            case .double: return .double(p.load(as: Double.self))
            case .bool: return .bool(p.load(as: Bool.self))
            case .date: return .date(p.load(as: Date.self))
            case .uuid: return .uuid(p.load(as: UUID.self))
            case .string: return .string(p.assumingMemoryBound(to: String.self).pointee)
            case .binary: return .binary(p.assumingMemoryBound(to: Data.self).pointee)
            case .uri: return .uri(p.assumingMemoryBound(to: URL.self).pointee)
            case .boxed: return p.assumingMemoryBound(to: Box.self).pointee.value
            }
        }
        set {
            destroy(row, position)
            let p = valuePointer(row, position)
            let wide = pattern.isWide[position]
            let tag: Tag
            switch newValue {
            case .null: tag = .null
            case .integer(let v): p.storeBytes(of: v, as: Int64.self); tag = .integer
            case .double(let v): p.storeBytes(of: v, as: Double.self); tag = .double
            case .bool(let v): p.storeBytes(of: v, as: Bool.self); tag = .bool
            case .date(let v): p.storeBytes(of: v, as: Date.self); tag = .date
            case .uuid(let v) where wide: p.storeBytes(of: v, as: UUID.self); tag = .uuid
            case .string(let v) where wide: p.initializeMemory(as: String.self, repeating: v, count: 1); tag = .string
            case .binary(let v) where wide: p.initializeMemory(as: Data.self, repeating: v, count: 1); tag = .binary
            case .uri(let v) where wide && MemoryLayout<URL>.size <= 16:
                p.initializeMemory(as: URL.self, repeating: v, count: 1); tag = .uri
            default: p.initializeMemory(as: Box.self, repeating: Box(newValue), count: 1); tag = .boxed
            }
            tagPointer(row, position).pointee = tag.rawValue
        }
    }
}

// MARK: - RowArena

/// Hands out the rows of many decoded rows' values from shared `RowStorage` blocks. Used by one decoding loop.
///
/// The first block holds one row: a lookup reads one row, and the object made from it keeps its block alive (a
/// first block of eight values' worth of rows, ten rows of the benchmark entity, made each object found by a
/// lookup hold about 1 KB, against 0.3 KB now). Later blocks double up to `maxBlockValues`; a block is also
/// closed once the text and data stored in it pass `maxBlockBytes`, so a row kept alive never keeps much of
/// other rows' contents with it.
package final class RowArena {
    private var block: RowStorage?
    /// Values the next block holds at least (0 before the first: one row of whatever width).
    private var nextCapacity = 0
    private var blockBytes = 0
    package static let firstBlockRows = 1
    package static let maxBlockValues = 4096
    package static let maxBlockBytes = 256 * 1024

    /// An empty arena.
    package init() {}

    /// A row of nulls laid out by `pattern`: its block and its index there.
    package func allocate(_ pattern: SlotPattern) -> (storage: RowStorage, row: Int) {
        if let block, block.remaining > 0, block.pattern === pattern, blockBytes < Self.maxBlockBytes {
            return (block, block.appendRow())
        }
        let width = max(pattern.width, 1)
        let capacity = max(nextCapacity, width * Self.firstBlockRows)
        nextCapacity = min(capacity * 2, max(Self.maxBlockValues, width))
        let block = RowStorage(pattern: pattern, capacity: capacity / width)
        self.block = block
        blockBytes = 0
        return (block, block.appendRow())
    }

    /// Counts `bytes` of text or data stored in the current block (a decoder may pass a row's encoded size).
    @inline(__always)
    package func noteStored(bytes: Int) {
        blockBytes &+= bytes
    }

    /// Counts the bytes of text or data a decoder stored in the current block.
    @inline(__always)
    package func noteStored(_ value: AttributeValue) {
        switch value {
        case .string(let s): blockBytes &+= s.utf8.count
        case .binary(let d): blockBytes &+= d.count
        default: break
        }
    }
}

@available(*, unavailable, message: "an arena belongs to one decoding loop")
extension RowArena: Sendable {}

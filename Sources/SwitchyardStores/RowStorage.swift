import Foundation
import SwitchyardModel

// MARK: - RowStorage

/// Attribute values of one or many rows in one block of memory; `RowValues` refers to a slice of it.
///
/// A fetch decodes thousands of rows; giving each its own array costs an allocation, a free and a generic
/// metadata lookup per row, more than decoding the row. A `RowArena` instead fills blocks of a few hundred rows,
/// and each row keeps its block alive (as a `Substring` keeps its `String`). A row that is changed copies its
/// slice out first unless it is the block's only user.
///
/// Elements are written only by the arena, before any row referring to them is handed out, or through a
/// uniquely referenced `RowValues`: hence `@unchecked Sendable`.
package final class RowStorage: @unchecked Sendable {
    @usableFromInline let elements: UnsafeMutablePointer<AttributeValue>
    package let capacity: Int
    /// Initialized elements, from the start.
    package private(set) var count = 0
    /// For a block holding one object's unsaved values (the context's `ChangedValues`): which positions hold a
    /// change, a bit each for the first 64, the rest in `wideChangeMask`. Kept here rather than beside the
    /// block so that an object with no changes spends one word on them. Written only through a `ChangedValues`
    /// holding the only reference (it copies a shared block first). Arena blocks leave them zero; a saved
    /// insert's row keeps its object's block, masks included, and nothing reads them there.
    package var changeMask: UInt64 = 0
    /// Changed positions from 64 on (see `changeMask`).
    package var wideChangeMask: Set<Int> = []

    /// A block with room for `capacity` values, none initialized.
    package init(capacity: Int) {
        self.capacity = max(capacity, 1)
        elements = .allocate(capacity: self.capacity)
    }

    /// A block holding exactly `values`.
    package convenience init<C: Collection>(_ values: C) where C.Element == AttributeValue {
        self.init(capacity: values.count)
        var p = elements
        for value in values {
            p.initialize(to: value)
            p += 1
        }
        count = values.count
    }

    deinit {
        elements.deinitialize(count: count)
        elements.deallocate()
    }

    /// The shared empty block of rows without a layout.
    package static let empty = RowStorage(capacity: 1)

    /// A new block holding a copy of the `count` values from `base` on (a row's slice, copied before it changes
    /// while other rows or objects still share this block).
    package func copy(from base: Int, count: Int) -> RowStorage {
        RowStorage((0..<count).lazy.map { self[base + $0] })
    }

    /// Appends `n` nulls and returns the index of the first.
    package func appendNulls(_ n: Int) -> Int {
        precondition(n <= remaining, "RowStorage: \(n) values do not fit in \(remaining)")
        let base = count
        (elements + base).initialize(repeating: .null, count: n)
        count += n
        return base
    }

    /// Room left for values.
    package var remaining: Int { capacity - count }

    /// An initialized value.
    @inlinable package subscript(index: Int) -> AttributeValue {
        get { elements[index] }
        set { elements[index] = newValue }
    }
}

// MARK: - RowArena

/// Hands out the value slices of many rows from shared `RowStorage` blocks. Used by one decoding loop.
///
/// Blocks start small (a read of one row must not pin a large block) and double up to `maxBlockValues`; a block
/// is also closed once the text and data stored in it pass `maxBlockBytes`, so a row kept alive never keeps
/// much of other rows' contents with it.
package final class RowArena {
    private var block: RowStorage?
    private var nextCapacity: Int
    private var blockBytes = 0
    package static let firstBlockRows = 8
    package static let maxBlockValues = 4096
    package static let maxBlockBytes = 256 * 1024

    /// An arena expecting rows about `width` values wide.
    package init(width: Int = 8) {
        nextCapacity = max(width, 1) * Self.firstBlockRows
    }

    /// A slice of `width` nulls: its block and the index of its first value.
    package func allocate(width: Int) -> (storage: RowStorage, base: Int) {
        if let block, block.remaining >= width, blockBytes < Self.maxBlockBytes { return (block, block.appendNulls(width)) }
        let capacity = max(nextCapacity, width)
        nextCapacity = min(capacity * 2, max(Self.maxBlockValues, width))
        let block = RowStorage(capacity: capacity)
        self.block = block
        blockBytes = 0
        return (block, block.appendNulls(width))
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

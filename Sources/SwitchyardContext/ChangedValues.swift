import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - ChangedValues

/// An object's attribute values set since its last save, by the position of the attribute in its entity
/// (`EntityHandle.layout`): no name is hashed to store or find one, and nothing is allocated until the first
/// change. `.null` is a value here (an attribute cleared since the save), unlike in `RowValues`.
///
/// The values are one row of a change block (`RowStorage(changesOf:capacity:)`) that the context's
/// `ChangeArena` shares among many objects, with a bit per position saying which hold a change. A save hands the
/// row to the store as it is (`handOut`), so a new object's values are not copied for the store nor again for its
/// snapshot. A row handed out is never written again: the next change copies it to a row of its own first (the
/// block's reference count, shared by many objects, cannot tell whether the store or a snapshot still reads it).
///
/// `ManagedObject` keeps the two fields apart (`changeBlock`, `changeRow`), the row in padding its other fields
/// leave, so an object stays in glibc's 128-byte allocation class; this value is built around them for a change.
package struct ChangedValues {
    /// The change block holding the row; nil before the first change.
    package private(set) var storage: RowStorage?
    /// The row in `storage`, and `handedOutBit` once the row was handed out.
    package private(set) var packedRow: UInt32

    /// Set in `packedRow` once the row was handed out.
    package static let handedOutBit: UInt32 = 1 << 31

    /// No changes.
    package init() {
        storage = nil
        packedRow = 0
    }

    /// The changes kept in `storage`'s row `packedRow` (see `ManagedObject.changedValues`).
    @inline(__always)
    package init(storage: RowStorage?, packedRow: UInt32) {
        self.storage = storage
        self.packedRow = packedRow
    }

    /// The row in `storage`.
    @inline(__always)
    package var row: Int { Int(packedRow & ~Self.handedOutBit) }

    /// The number of positions holding a change.
    package var count: Int { storage?.changeCount(row) ?? 0 }

    /// Whether nothing changed.
    package var isEmpty: Bool { storage == nil }

    /// The change at `position`, if any.
    @inline(__always)
    package subscript(position: Int) -> AttributeValue? {
        guard let storage, storage.isChanged(row, position) else { return nil }
        return storage[row, position]
    }

    /// Records `value` for the attribute at `position` of an entity whose attributes `layout` positions, in a
    /// row taken from `arena` on the first change (a one-row block of its own without an arena).
    /// (`layout` is read only when the object has no change block yet, and `value` is moved into the row: the
    /// layout's and the value's retain and release were two of the atomic operations of every attribute set.)
    package mutating func set(
        _ value: consuming AttributeValue, at position: Int, layout: @autoclosure () -> RowLayout, arena: ChangeArena? = nil
    ) {
        if storage == nil {
            let slots = layout().slots
            let (block, row) = arena?.allocate(slots) ?? Self.ownBlock(slots)
            storage = block
            packedRow = UInt32(row)
        } else if packedRow & Self.handedOutBit != 0 {
            takeBack()
        }
        let block = storage.unsafelyUnwrapped
        arena?.noteStored(value, in: block)
        block.setChanged(row, position, true)
        block[row, position] = value
    }

    /// Moves the change block out (leaving none), for an owner that stores it apart (`ManagedObject.changedValues`).
    @inline(__always)
    package mutating func takeStorage() -> RowStorage? {
        storage.take()
    }

    /// Forgets the change at `position`, if any.
    package mutating func remove(at position: Int) {
        guard let storage, storage.isChanged(row, position) else { return }
        if packedRow & Self.handedOutBit != 0 { takeBack() }
        let block = self.storage.unsafelyUnwrapped
        block.setChanged(row, position, false)
        if block.changeCount(row) == 0 { removeAll() }
    }

    /// Copies a row that was handed out to a one-row block of its own, so a change made now does not show
    /// through whatever still reads the row.
    private mutating func takeBack() {
        storage = storage.unsafelyUnwrapped.copyChanges(row: row)
        packedRow = 0
    }

    /// A one-row change block (for values with no context's arena at hand).
    private static func ownBlock(_ pattern: SlotPattern) -> (RowStorage, Int) {
        let block = RowStorage(changesOf: pattern, capacity: 1)
        return (block, block.appendRow())
    }

    /// Forgets every change.
    package mutating func removeAll() {
        storage = nil
        packedRow = 0
    }

    /// Calls `body` with each change's position and value, in position order (see `RowStorage.forEachChange`).
    @inline(__always)
    package func forEachChange(_ body: (Int, AttributeValue) throws -> Void) rethrows {
        try storage?.forEachChange(row, body)
    }

    /// The block and row holding the changes, for a store to read as they are (nothing is copied); nil when
    /// none. The row is not written again (see the type's comment).
    package mutating func handOut() -> (storage: RowStorage, row: Int)? {
        guard let storage else { return nil }
        packedRow |= Self.handedOutBit
        return (storage, row)
    }

    /// The changes as a store takes them, by position and sharing the block (see `handOut`); nil when none.
    package mutating func handOutPositioned(_ layout: RowLayout) -> PositionedChanges? {
        handOut().map { PositionedChanges(layout: layout, storage: $0.storage, row: $0.row) }
    }

    /// The non-null changes as row values positioned by `layout`, sharing the block (see `handOut`).
    package mutating func handOutRowValues(_ layout: RowLayout) -> RowValues {
        if let (storage, row) = handOut() { return RowValues(layout: layout, storage: storage, row: row) }
        return RowValues(layout: layout, slots: Array(repeating: .null, count: layout.names.count))
    }

    /// The names of the changed attributes.
    package func names(_ layout: RowLayout) -> [String] {
        var names: [String] = []
        forEachChange { position, _ in names.append(layout.names[position]) }
        return names
    }
}

// MARK: - ChangeArena

/// Hands out rows of change blocks (`RowStorage(changesOf:capacity:)`) for one context's objects: one block being
/// filled per value pattern, the first of one row, each next twice as large up to `maxBlockValues` values. As with
/// fetched rows (`RowArena`), a saved object's snapshot keeps its block alive, so a block is also closed once the
/// text and data set in it pass `maxBlockBytes`: an object kept after a save never keeps much of other objects'
/// contents with it.
package final class ChangeArena {
    /// The block being filled for one pattern.
    private final class Filling {
        let block: RowStorage
        let nextCapacity: Int
        /// Unchecked exclusivity: read and added to by one context's task, with no access held across a call.
        @exclusivity(unchecked) var bytes = 0
        init(block: RowStorage, nextCapacity: Int) {
            self.block = block
            self.nextCapacity = nextCapacity
        }
    }

    private var filling: [ObjectIdentifier: Filling] = [:]
    /// The pattern asked for last and its block (most changes in a row are to one entity's objects).
    private var last: (pattern: ObjectIdentifier, filling: Filling)?
    package static let maxBlockValues = 4096
    package static let maxBlockBytes = 256 * 1024

    package init() {}

    /// A row of nulls with no change marked, laid out by `pattern`: its block and its index there.
    package func allocate(_ pattern: SlotPattern) -> (RowStorage, Int) {
        let id = ObjectIdentifier(pattern)
        // The usual case, the pattern of the last call with room left, reads `last` in place and leaves it as it
        // is (binding and storing it back retained and released its block holder each inserted object).
        if last?.pattern == id, let block = last?.filling.block, block.remaining > 0,
            last.unsafelyUnwrapped.filling.bytes < Self.maxBlockBytes
        {
            return (block, block.appendRow())
        }
        let current = last?.pattern == id ? last?.filling : filling[id]
        if let current, current.block.remaining > 0, current.bytes < Self.maxBlockBytes {
            last = (id, current)
            return (current.block, current.block.appendRow())
        }
        let most = max(1, Self.maxBlockValues / max(pattern.width, 1))
        let rows = min(current?.nextCapacity ?? 1, most)
        let next = Filling(block: RowStorage(changesOf: pattern, capacity: rows), nextCapacity: min(rows * 2, most))
        filling[id] = next
        last = (id, next)
        return (next.block, next.block.appendRow())
    }

    /// Counts the text or data of `value`, just set in a row of `block`, against the block being filled.
    @inline(__always)
    package func noteStored(_ value: AttributeValue, in block: RowStorage) {
        guard let current = last?.filling, current.block === block else { return }
        switch value {
        case .string(let text): current.bytes &+= text.utf8.count
        case .binary(let data): current.bytes &+= data.count
        default: break
        }
    }
}

@available(*, unavailable, message: "a change arena belongs to one context")
extension ChangeArena: Sendable {}

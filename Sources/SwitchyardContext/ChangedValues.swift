import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - ChangedValues

/// An object's attribute values set since its last save, by the position of the attribute in its entity
/// (`EntityHandle.layout`): no name is hashed to store or find one, and nothing is allocated until the first
/// change. `.null` is a value here (an attribute cleared since the save), unlike in `RowValues`.
///
/// The values live in a `RowStorage` block that a save hands to the inserted row as it is (`rowValues`), so a
/// new object's values are not copied for the store nor again for its snapshot; a change after that copies
/// the block first if the row still shares it.
package struct ChangedValues {
    /// One slot per attribute of the entity once anything changed (`.null` where nothing was set); nil before.
    /// The block also records which positions changed (`RowStorage.changeMask`): one word per object in all.
    private var storage: RowStorage?

    /// No changes.
    package init() {}

    /// The number of positions holding a change.
    package var count: Int { storage?.changeCount ?? 0 }

    /// Whether nothing changed.
    package var isEmpty: Bool { storage == nil }

    private func isChanged(_ position: Int) -> Bool {
        guard let storage else { return false }
        return position < 64 ? storage.changeMask & (1 << UInt64(position)) != 0 : storage.wideChangeMask.contains(position)
    }

    /// The change at `position`, if any.
    @inline(__always)
    package subscript(position: Int) -> AttributeValue? {
        guard let storage, isChanged(position) else { return nil }
        return storage[0, position]
    }

    /// Records `value` for the attribute at `position` of an entity whose attributes `layout` positions.
    package mutating func set(_ value: AttributeValue, at position: Int, layout: RowLayout) {
        if storage == nil {
            let block = RowStorage(pattern: layout.slots, capacity: 1)
            _ = block.appendRow()
            storage = block
        } else {
            makeUnique()
        }
        let block = storage!
        block[0, position] = value
        if position < 64 { block.changeMask |= 1 << UInt64(position) } else { block.wideChangeMask.insert(position) }
    }

    /// Forgets the change at `position`, if any.
    package mutating func remove(at position: Int) {
        guard isChanged(position) else { return }
        makeUnique()
        let block = storage!
        if position < 64 { block.changeMask &= ~(1 << UInt64(position)) } else { block.wideChangeMask.remove(position) }
        if block.changeMask == 0 && block.wideChangeMask.isEmpty { storage = nil }
    }

    /// Copies the block, with its change masks, when a saved row or snapshot still shares it, so a change made
    /// now does not show through them. Requires a block.
    private mutating func makeUnique() {
        guard !isKnownUniquelyReferenced(&storage!) else { return }
        let copy = storage!.copy(row: 0)
        copy.changeMask = storage!.changeMask
        copy.wideChangeMask = storage!.wideChangeMask
        storage = copy
    }

    /// Forgets every change.
    package mutating func removeAll() {
        storage = nil
    }

    /// Calls `body` with each change's position and value, in position order (see `RowStorage.forEachChange`).
    @inline(__always)
    package func forEachChange(_ body: (Int, AttributeValue) throws -> Void) rethrows {
        try storage?.forEachChange(body)
    }

    /// The changes as a store takes them, by position and sharing the block (nothing is copied); nil when none.
    package func positioned(_ layout: RowLayout) -> PositionedChanges? {
        storage.map { PositionedChanges(layout: layout, storage: $0) }
    }

    /// The block holding the changes (row 0, laid out by the entity's layout), shared; nil when none. Never
    /// written through: the block is this value's, which copies it before changing it while it is shared.
    package var block: RowStorage? { storage }

    /// The non-null changes as row values positioned by `layout`, sharing the block (nothing is copied).
    package func rowValues(_ layout: RowLayout) -> RowValues {
        if let storage { return RowValues(layout: layout, storage: storage, row: 0) }
        return RowValues(layout: layout, slots: Array(repeating: .null, count: layout.names.count))
    }

    /// The names of the changed attributes.
    package func names(_ layout: RowLayout) -> [String] {
        var names: [String] = []
        forEachChange { position, _ in names.append(layout.names[position]) }
        return names
    }
}

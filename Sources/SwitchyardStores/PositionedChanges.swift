import Foundation
import SwitchyardModel

// MARK: - PositionedChanges

/// Changed attribute values by their position in `layout`: the positions a change block's bits mark in row
/// `row` (`RowStorage(changesOf:capacity:)`; `.null` where a value was cleared). What an object context holds as an object's
/// unsaved changes, handed to a store as it is.
package struct PositionedChanges: Sendable {
    /// Names the positions.
    package let layout: RowLayout
    /// Row `row` holds the values, and its change bits say which positions changed.
    package let storage: RowStorage
    package let row: Int

    package init(layout: RowLayout, storage: RowStorage, row: Int) {
        precondition(storage.pattern.width == layout.names.count, "PositionedChanges: \(storage.pattern.width) positions for \(layout.names.count) names")
        self.layout = layout
        self.storage = storage
        self.row = row
    }

    /// The number of changes.
    package var count: Int { storage.changeCount(row) }

    /// Calls `body` with each change's position and value, in position order.
    @inline(__always)
    package func forEach(_ body: (Int, AttributeValue) throws -> Void) rethrows {
        try storage.forEachChange(row, body)
    }

    /// The changes by attribute name (`.null` where a value was cleared), leaving out the positions in `excluded`.
    package func dictionary(excluding excluded: [Int] = []) -> [String: AttributeValue] {
        var result = [String: AttributeValue](minimumCapacity: count)
        forEach { position, value in
            if !excluded.contains(position) { result[layout.names[position]] = value }
        }
        return result
    }
}

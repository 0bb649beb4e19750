import Foundation
import SwitchyardModel

// MARK: - PositionedChanges

/// Changed attribute values by their position in `layout`: the positions a `RowStorage` block's change mask
/// marks, in row 0 of the block (`.null` where a value was cleared). What an object context holds as an object's
/// unsaved changes, handed to a store as it is.
package struct PositionedChanges: Sendable {
    /// Names the positions.
    package let layout: RowLayout
    /// Row 0 holds the values; `changeMask` and `wideChangeMask` say which positions changed.
    package let storage: RowStorage

    package init(layout: RowLayout, storage: RowStorage) {
        precondition(storage.pattern.width == layout.names.count, "PositionedChanges: \(storage.pattern.width) positions for \(layout.names.count) names")
        self.layout = layout
        self.storage = storage
    }

    /// Calls `body` with each change's position and value, in position order.
    @inline(__always)
    package func forEach(_ body: (Int, AttributeValue) throws -> Void) rethrows {
        try storage.forEachChange(body)
    }

    /// The changes by attribute name (`.null` where a value was cleared), leaving out the positions in `excluded`.
    package func dictionary(excluding excluded: [Int] = []) -> [String: AttributeValue] {
        var result = [String: AttributeValue](minimumCapacity: storage.changeCount)
        forEach { position, value in
            if !excluded.contains(position) { result[layout.names[position]] = value }
        }
        return result
    }
}

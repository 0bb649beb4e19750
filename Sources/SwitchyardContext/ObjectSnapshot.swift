import Foundation
import SwitchyardStores

// MARK: - ObjectSnapshot

/// An object's last state read from or written to its store: a `StoreRow` without the entity and primary key,
/// which the object's `ObjectID` already holds (24 bytes less in every fetched object).
package struct ObjectSnapshot {
    /// `Z_OPT` as read or written.
    package var version: Int64
    /// Attribute values by the entity's layout.
    package var values: RowValues
    /// To-one targets by relationship name; an absent key is nil.
    package var toOne: [String: RowReference]

    /// The row's state; its values under `layout` (the entity's) when given, which the caller has checked is
    /// equivalent to the store's, so the object reads them by position.
    /// The row is consumed: a fetch hands each row over once (the compiler still copies the fields out).
    package init(_ row: consuming StoreRow, layout: RowLayout? = nil) {
        version = row.version
        values = row.values
        if let layout { values.adopt(layout) }
        toOne = row.toOne
    }
}

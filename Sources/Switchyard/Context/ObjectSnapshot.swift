import Foundation

// MARK: - ObjectSnapshot

/// An object's last state read from or written to its store: a `StoreRow` without the entity and primary key,
/// which the object's `ObjectID` already holds (24 bytes less in every fetched object).
struct ObjectSnapshot {
    /// `Z_OPT` as read or written.
    var version: Int64
    /// Attribute values by the entity's layout.
    var values: RowValues
    /// To-one targets by relationship name; an absent key is nil.
    var toOne: [String: RowReference]

    init(_ row: StoreRow) {
        version = row.version
        values = row.values
        toOne = row.toOne
    }

    /// The row with its values under `layout` (the entity's) when the store's layout is equivalent, so the
    /// object reads them by position.
    init(_ row: StoreRow, layout: RowLayout) {
        version = row.version
        values = row.values.adopting(layout)
        toOne = row.toOne
    }
}

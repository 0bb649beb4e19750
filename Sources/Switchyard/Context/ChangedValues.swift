import Foundation

// MARK: - ChangedValues

/// An object's attribute values set since its last save, by the position of the attribute in its entity
/// (`EntityHandle.layout`): no name is hashed to store or find one, and nothing is allocated until the first
/// change. `.null` is a value here (an attribute cleared since the save), unlike in `RowValues`.
struct ChangedValues {
    /// One slot per attribute of the entity once anything changed; empty before.
    private var slots: [AttributeValue?] = []
    /// The number of slots holding a change.
    private(set) var count = 0

    /// Whether nothing changed.
    var isEmpty: Bool { count == 0 }

    /// The change at `position`, if any.
    subscript(position: Int) -> AttributeValue? {
        slots.isEmpty ? nil : slots[position]
    }

    /// Records `value` for the attribute at `position` of an entity with `width` attributes.
    mutating func set(_ value: AttributeValue, at position: Int, width: Int) {
        if slots.isEmpty { slots = Array(repeating: nil, count: width) }
        if slots[position] == nil { count += 1 }
        slots[position] = value
    }

    /// Forgets every change.
    mutating func removeAll() {
        slots = []
        count = 0
    }

    /// The changes as (position, value), in position order.
    var changes: [(position: Int, value: AttributeValue)] {
        slots.indices.compactMap { i in slots[i].map { (i, $0) } }
    }

    /// The changes by attribute name (`layout` names the positions); `.null` entries kept unless `droppingNulls`.
    func dictionary(_ layout: RowLayout, droppingNulls: Bool = false) -> [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        result.reserveCapacity(count)
        for (position, value) in changes where !(droppingNulls && value.isNull) { result[layout.names[position]] = value }
        return result
    }

    /// The non-null changes as row values positioned by `layout`, sharing it (no name is hashed).
    func rowValues(_ layout: RowLayout) -> RowValues {
        RowValues(layout: layout, slots: slots.isEmpty ? Array(repeating: .null, count: layout.names.count) : slots.map { $0 ?? .null })
    }

    /// The names of the changed attributes.
    func names(_ layout: RowLayout) -> [String] {
        changes.map { layout.names[$0.position] }
    }
}

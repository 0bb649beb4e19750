import Foundation
import SwitchyardModel

// MARK: - RowLayout

/// The attribute names of one entity in a fixed order, shared by every row a store decodes for it.
///
/// Rows decoded by the hundred thousand keep their values in slots ordered by a layout instead of a
/// dictionary: building a row then hashes no name. A class, so each row refers to its layout without copying it.
///
/// ```swift
/// let layout = RowLayout(names: ["title", "pages"])
/// let values = RowValues(layout: layout, slots: ["Dune", 412])
/// ```
@usableFromInline package final class RowLayout: Sendable {
    /// Attribute names by position.
    public let names: [String]
    /// Position of each name.
    package let positions: NameIndex
    /// Whether each position can hold a value (false for a store's retired positions).
    package let isLive: [Bool]
    /// How rows of this layout keep their values in memory (`RowStorage`).
    package let slots: SlotPattern

    /// A layout for `names`, which must be distinct; `types`, one per name when given, lets values of numbers,
    /// Booleans and dates take 8 bytes instead of 16.
    public init(names: [String], types: [AttributeType]? = nil) {
        precondition(Set(names).count == names.count, "RowLayout: duplicate names in \(names)")
        self.names = names
        positions = NameIndex(Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) }))
        isLive = Array(repeating: true, count: names.count)
        slots = Self.slotPattern(names: names, types: types)
    }

    private static func slotPattern(names: [String], types: [AttributeType]?) -> SlotPattern {
        guard let types else { return SlotPattern(width: names.count) }
        precondition(types.count == names.count, "RowLayout: \(types.count) types for \(names.count) names")
        return SlotPattern(types: types)
    }

    /// Whether `other` names the same attributes at the same positions, with the same retired positions.
    package func isEquivalent(to other: RowLayout) -> Bool {
        self === other || (names == other.names && positions == other.positions && isLive == other.isLive)
    }

    /// A layout whose positions need not cover every name: a store's retired positions (properties a model
    /// dropped, whose names may come back at another position) keep their place in `names` but are never found
    /// by name and never hold a value.
    package init(names: [String], positions: [String: Int], types: [AttributeType]? = nil) {
        self.names = names
        self.positions = NameIndex(positions)
        var live = Array(repeating: false, count: names.count)
        for position in positions.values where position < names.count { live[position] = true }
        isLive = live
        slots = Self.slotPattern(names: names, types: types)
    }
}

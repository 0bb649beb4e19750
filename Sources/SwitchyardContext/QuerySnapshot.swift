import Foundation
import SwitchyardModel

// MARK: - QuerySnapshot

/// One result of an observed fetch (``StoreCoordinator/observe(_:sectionedBy:)``): the matching objects in the
/// request's order, grouped into sections, and what changed since the snapshot before — what
/// `NSFetchedResultsController` tells a list UI.
public struct QuerySnapshot: Sendable, Hashable {
    /// The matching objects, in the request's order (sections concatenated).
    public let objectIDs: [ObjectID]
    /// The objects grouped by the section key's value, in order; one section named "" without a section key.
    public let sections: [QuerySection]
    /// What changed since the previous snapshot; nil for the first one.
    public let changes: QueryChanges?
}

/// A run of consecutive results sharing one value of the section key.
public struct QuerySection: Sendable, Hashable {
    /// The section key's value as text ("" when it has none).
    public let name: String
    /// The section's objects, in order.
    public let objectIDs: [ObjectID]
}

/// The difference between two consecutive snapshots, by position.
public struct QueryChanges: Sendable, Hashable {
    /// Positions in the previous snapshot of the objects that left the results (deleted, or no longer
    /// matching), ascending.
    public let removed: [Int]
    /// Positions in the new snapshot of the objects that joined the results, ascending.
    public let inserted: [Int]
    /// Positions in the new snapshot of objects that stayed in the results and that a save changed.
    public let updated: [Int]
    /// Changes at the given positions (each list ascending), as a snapshot reports them.
    public init(removed: [Int], inserted: [Int], updated: [Int]) {
        self.removed = removed
        self.inserted = inserted
        self.updated = updated
    }

    /// Whether anything changed.
    public var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && updated.isEmpty }
}

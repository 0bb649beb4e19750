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

/// The difference between two consecutive snapshots, by position, as `NSFetchedResultsController` reports it:
/// removals, insertions, moves and updates.
public struct QueryChanges: Sendable, Hashable {
    /// An object that stayed in the results at another position.
    public struct Move: Sendable, Hashable {
        /// Its position in the previous snapshot.
        public let from: Int
        /// Its position in the new snapshot.
        public let to: Int

        /// A move from `from` to `to`.
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Positions in the previous snapshot of the objects that left the results (deleted, or no longer
    /// matching), ascending.
    public let removed: [Int]
    /// Positions in the new snapshot of the objects that joined the results, ascending.
    public let inserted: [Int]
    /// Objects that stayed in the results but changed position (a change of a sort key), by new position.
    public let moved: [Move]
    /// Positions in the new snapshot of objects that stayed in the results and that a save changed (their row's
    /// `Z_OPT` moved on), whether or not they moved.
    public let updated: [Int]

    /// Changes at the given positions (each list ascending), as a snapshot reports them.
    public init(removed: [Int], inserted: [Int], moved: [Move] = [], updated: [Int]) {
        self.removed = removed
        self.inserted = inserted
        self.moved = moved
        self.updated = updated
    }

    /// Whether anything changed.
    public var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty }
}

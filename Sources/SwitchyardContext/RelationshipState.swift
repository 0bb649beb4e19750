import Foundation
import SwitchyardModel

// MARK: - RelationshipState

/// An object's relationship changes, cached members and fetched-property results: held apart from the object
/// and created on first use, because most objects (every one a fetch of attributes returns) never have any,
/// and five empty collections inline cost 40 bytes in each of them.
package final class RelationshipState {
    /// To-one relationships set since the last save (`.some(nil)` clears one).
    package var changedToOne: [String: ManagedObject?] = [:]
    /// The whole current member list of to-many relationships changed since the last save (see `ManagedObject`).
    package var changedToMany: [String: [ManagedObject]] = [:]
    /// To-many relationships whose members changed through the members' to-one inverse.
    package var touchedToMany: Set<String> = []
    /// Members as the store last returned them (many-to-many and ordered to-many).
    package var committedToMany: [String: [ObjectID]] = [:]
    /// Fetched-property results, kept until the object is refreshed.
    package var fetchedCache = FetchedResultsCache()

    /// True when nothing is held, so the object can drop this state.
    package var isEmpty: Bool {
        changedToOne.isEmpty && changedToMany.isEmpty && touchedToMany.isEmpty && committedToMany.isEmpty && fetchedCache.isEmpty
    }
}

@available(*, unavailable, message: "relationship state belongs to one object of one context")
extension RelationshipState: Sendable {}

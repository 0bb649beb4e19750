import Foundation
import SwitchyardModel

// MARK: - RelationshipState

/// An object's relationship changes, cached members and fetched-property results: held apart from the object
/// and created on first use, because most objects (every one a fetch of attributes returns) never have any,
/// and five empty collections inline cost 40 bytes in each of them.
package final class RelationshipState {
    // The `var`s skip the dynamic exclusivity check, as `ManagedObject`'s do and for the same reasons: they are
    // changed by assignment or by mutating methods of dictionaries, sets and `FetchedResultsCache`, which run no
    // code of ours or of the user's, and the class is not Sendable. The check was two calls per source of a
    // prefetch (each source's cache is set), 1.3% of a 10,000-source prefetch in callgrind; the test suite ran
    // with it on until then.
    /// To-one relationships set since the last save (`.some(nil)` clears one).
    @exclusivity(unchecked) package var changedToOne: [String: ManagedObject?] = [:]
    /// The whole current member list of to-many relationships changed since the last save (see `ManagedObject`).
    @exclusivity(unchecked) package var changedToMany: [String: [ManagedObject]] = [:]
    /// To-many relationships whose members changed through the members' to-one inverse.
    @exclusivity(unchecked) package var touchedToMany: Set<String> = []
    /// Members as the store last returned them (many-to-many and ordered to-many).
    @exclusivity(unchecked) package var committedToMany: [String: [ObjectID]] = [:]
    /// Fetched-property results, kept until the object is refreshed.
    @exclusivity(unchecked) package var fetchedCache = FetchedResultsCache()

    /// True when nothing is held, so the object can drop this state.
    package var isEmpty: Bool {
        changedToOne.isEmpty && changedToMany.isEmpty && touchedToMany.isEmpty && committedToMany.isEmpty && fetchedCache.isEmpty
    }
}

@available(*, unavailable, message: "relationship state belongs to one object of one context")
extension RelationshipState: Sendable {}

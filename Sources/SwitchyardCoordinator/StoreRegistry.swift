import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - StoreRegistry

/// A coordinator's stores, in the order they were added, and which of them serve each entity, remembered per
/// entity until the list changes. Every fetch asks (the context, then the coordinator): filtering every
/// store's entity list, with a set of subentity names, cost about 6,000 instructions a time in callgrind, a
/// tenth of an indexed lookup of one object on LMDB.
///
/// The coordinator works a route out from a copy of the list, outside its lock (a store's `entities` is the
/// store's code), and hands it back with the generation it read: a route worked out from a list that has
/// changed since is not remembered.
package struct StoreRegistry: Sendable {
    private struct Route: Hashable {
        var entity: String
        var includingSubentities: Bool
    }

    /// The stores; any change forgets the routes.
    package var stores: [any PersistentStore] = [] {
        didSet {
            routes.removeAll(keepingCapacity: true)
            generation &+= 1
        }
    }
    /// Counts changes of `stores`.
    package private(set) var generation = 0
    private var routes: [Route: [any PersistentStore]] = [:]

    package init() {}

    /// The stores remembered as serving `entityName`, if any were.
    package func route(_ entityName: String, includingSubentities: Bool) -> [any PersistentStore]? {
        routes[Route(entity: entityName, includingSubentities: includingSubentities)]
    }

    /// Remembers `serving` for `entityName`, unless the list changed after `generation` was read.
    package mutating func remember(
        _ serving: [any PersistentStore], for entityName: String, includingSubentities: Bool, generation: Int
    ) {
        guard generation == self.generation else { return }
        routes[Route(entity: entityName, includingSubentities: includingSubentities)] = serving
    }
}

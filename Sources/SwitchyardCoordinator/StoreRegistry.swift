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
    /// The stores; any change forgets the routes.
    package var stores: [any PersistentStore] = [] {
        didSet {
            routes.removeAll(keepingCapacity: true)
            generation &+= 1
        }
    }
    /// Counts changes of `stores`.
    package private(set) var generation = 0
    /// Routes by slot (`slot(_:_:)`), nil where none is remembered. Indexed by the entity's position rather than
    /// keyed by its name: hashing the name cost more than the rest of a remembered route (callgrind).
    private var routes: [[any PersistentStore]?] = []

    package init() {}

    /// The stores remembered as serving the entity at `entityPosition` (`ObjectModel.entityPosition(named:)`).
    package func route(entityPosition: Int, includingSubentities: Bool) -> [any PersistentStore]? {
        let slot = Self.slot(entityPosition, includingSubentities)
        return slot < routes.count ? routes[slot] : nil
    }

    /// Remembers `serving` for the entity at `entityPosition`, unless the list changed after `generation` was read.
    package mutating func remember(
        _ serving: [any PersistentStore], entityPosition: Int, includingSubentities: Bool, generation: Int
    ) {
        guard generation == self.generation else { return }
        let slot = Self.slot(entityPosition, includingSubentities)
        if slot >= routes.count { routes += Array(repeating: nil, count: slot + 1 - routes.count) }
        routes[slot] = serving
    }

    /// Two slots per entity: alone, then with its subentities.
    private static func slot(_ entityPosition: Int, _ includingSubentities: Bool) -> Int {
        precondition(entityPosition >= 0, "an entity position is never negative")
        return entityPosition * 2 + (includingSubentities ? 1 : 0)
    }
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - StoreRegistry

/// A coordinator's stores, in the order they were added, and which of them serve each entity, worked out once
/// per entity until the list changes. Every fetch asks (the context, then the coordinator): filtering every
/// store's entity list, with a set of subentity names, cost about 6,000 instructions a time in callgrind, a
/// tenth of an indexed lookup of one object on LMDB.
package struct StoreRegistry: Sendable {
    private struct Route: Hashable {
        var entity: String
        var includingSubentities: Bool
    }

    /// The stores; any change forgets the routes.
    package var stores: [any PersistentStore] = [] {
        didSet { routes.removeAll(keepingCapacity: true) }
    }
    private var routes: [Route: [any PersistentStore]] = [:]

    package init() {}

    /// The stores holding rows of `entityName` (with `includingSubentities`, of any of its descendants).
    package mutating func stores(serving entityName: String, includingSubentities: Bool, model: ObjectModel) -> [any PersistentStore] {
        let route = Route(entity: entityName, includingSubentities: includingSubentities)
        if let known = routes[route] { return known }
        let names = includingSubentities ? Set(model.entity(named: entityName)?.selfAndDescendantNames ?? [entityName]) : [entityName]
        let serving = stores.filter { store in store.entities.contains { names.contains($0.name) } }
        routes[route] = serving
        return serving
    }
}

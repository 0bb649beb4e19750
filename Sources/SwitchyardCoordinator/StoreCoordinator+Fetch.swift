import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores
import Synchronization

// MARK: - Fetch across stores

/// A row together with the store it came from.
public struct FetchedRow: Sendable {
    /// The store the row was read from.
    public let store: any PersistentStore
    /// The row as the store holds it.
    public let row: StoreRow

    /// The row's permanent object ID.
    public var objectID: ObjectID {
        ObjectID(store: store.identifier, entityName: row.entityName, primaryKey: row.primaryKey)
    }
}

extension StoreCoordinator {
    /// Fetches rows from every store serving the entity (or the request's affected stores), merged under the
    /// request's sort, then offset and limit applied across all of them.
    public func fetchRows(_ request: FetchRequest) throws -> [FetchedRow] {
        let request = try request.normalized()
        let targets = try targetStores(for: request)
        storeFetchCount.add(targets.count, ordering: .relaxed)
        if targets.count == 1 {
            return try targets[0].fetch(storeRequest(request)).map { FetchedRow(store: targets[0], row: $0) }
        }
        // Each store returns its first offset+limit rows in order; the merge then skips and cuts globally.
        var perStore = storeRequest(request)
        perStore.fetchOffset = 0
        perStore.fetchLimit = request.fetchLimit.map { $0 + request.fetchOffset }
        var merged: [FetchedRow] = []
        for store in targets {
            merged += try store.fetch(perStore).map { FetchedRow(store: store, row: $0) }
        }
        if !request.sortKeys.isEmpty {
            let order = Dictionary(uniqueKeysWithValues: targets.enumerated().map { (ObjectIdentifier($1), $0) })
            merged.sort { a, b in
                switch StoreRow.compare(a.row, b.row, by: request.sortKeys) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return order[ObjectIdentifier(a.store)]! < order[ObjectIdentifier(b.store)]!
                }
            }
        }
        let start = min(request.fetchOffset, merged.count)
        let end = request.fetchLimit.map { min(start + $0, merged.count) } ?? merged.count
        return Array(merged[start..<end])
    }

    /// The rows of `fetchRows(_:)`, in its order, each handed to `body` with its store. From one store they
    /// come as the store reads them (see `PersistentStore.fetch(_:each:)`), so they are never all held at
    /// once; rows of several stores are merged first.
    ///
    /// `targets`: what `targetStores(for:)` returned for this request, when the caller asked already.
    /// `validated`: the caller checked the request against `model` (`ObjectModel.validateFetch`), so the one
    /// store serving it, when it has this model, does not check it again (`StoreFetchRequest.validatedAgainst`);
    /// rows merged from several stores go through `fetchRows(_:)`, where each store checks.
    package func fetchRows(
        _ request: FetchRequest, targets known: [any PersistentStore]? = nil, validated: Bool = false,
        each body: (any PersistentStore, consuming StoreRow) throws -> Void
    ) throws {
        guard request.isNormalized else {
            return try fetchRows(try request.normalized(), targets: known, validated: validated, each: body)
        }
        let targets = try known ?? targetStores(for: request)
        guard targets.count == 1 else {
            for fetched in try fetchRows(request) { try body(fetched.store, fetched.row) }
            return
        }
        storeFetchCount.add(1, ordering: .relaxed)
        let store = targets[0]
        var storeRequest = storeRequest(request)
        if validated { storeRequest.validatedAgainst = model.identity }
        try store.fetch(storeRequest) { try body(store, $0) }
    }

    /// The references of the rows `store` holds for `request`, in the order `fetchRows` hands them over from
    /// it alone, without reading their values where the store can (`PersistentStore.fetchReferences`).
    package func fetchReferences(
        _ request: FetchRequest, from store: any PersistentStore, each body: (RowReference) throws -> Void
    ) throws {
        let request = try request.normalized()
        storeFetchCount.add(1, ordering: .relaxed)
        try store.fetchReferences(storeRequest(request), each: body)
    }

    /// Counts matching rows across every store serving the entity (or the affected stores).
    public func count(_ request: FetchRequest) throws -> Int {
        try count(request, validated: false)
    }

    /// `count(_:)` for a caller that may have checked the request against `model` (`validated`: each store with
    /// this very model then skips its own check, as in `fetchRows(_:targets:validated:each:)`).
    package func count(_ request: FetchRequest, validated: Bool) throws -> Int {
        let request = try request.normalized()
        var total = 0
        var unlimited = storeRequest(request)
        unlimited.fetchLimit = nil
        unlimited.fetchOffset = 0
        if validated { unlimited.validatedAgainst = model.identity }
        for store in try targetStores(for: request) { total += try store.count(unlimited) }
        total = max(0, total - request.fetchOffset)
        return request.fetchLimit.map { min($0, total) } ?? total
    }

    /// The rows behind these object IDs (missing ones are left out).
    public func rows(for ids: [ObjectID]) throws -> [ObjectID: FetchedRow] {
        var byStore: [UUID: [RowReference]] = [:]
        for id in ids {
            guard let store = id.storeIdentifier, let pk = id.primaryKey else { continue }
            byStore[store, default: []].append(RowReference(entityName: id.entityName, primaryKey: pk))
        }
        var result: [ObjectID: FetchedRow] = [:]
        for (identifier, references) in byStore {
            guard let store = store(withIdentifier: identifier) else { continue }
            for row in try store.rows(for: references) {
                let fetched = FetchedRow(store: store, row: row)
                result[fetched.objectID] = fetched
            }
        }
        return result
    }

    /// The stores a request searches, validated against the model.
    package func targetStores(for request: FetchRequest) throws -> [any PersistentStore] {
        guard let position = model.entityPosition(named: request.entityName) else {
            throw CoordinatorError.unknownEntity(request.entityName)
        }
        var targets = stores(serving: request.entityName, position: position, includingSubentities: request.includesSubentities)
        if let ids = request.affectedStoreIdentifiers {
            for id in ids where store(withIdentifier: id) == nil {
                throw CoordinatorError.storeNotInCoordinator(path: "store \(id.uuidString)")
            }
            targets = targets.filter { ids.contains($0.identifier) }
        }
        if targets.isEmpty, request.affectedStoreIdentifiers == nil {
            throw CoordinatorError.noStoreForEntity(
                entity: request.entityName, configurations: model.configurations(containing: request.entityName))
        }
        return targets
    }

    package func storeRequest(_ r: FetchRequest) -> StoreFetchRequest {
        StoreFetchRequest(
            entityName: r.entityName, predicate: r.predicate, sortKeys: r.sortKeys,
            fetchLimit: r.fetchLimit, fetchOffset: r.fetchOffset, includesSubentities: r.includesSubentities)
    }
}

extension FetchRequest {
    /// Narrows the request to these stores (Core Data's `affectedStores`).
    public mutating func setAffectedStores(_ stores: [any PersistentStore]) {
        affectedStoreIdentifiers = stores.map(\.identifier)
    }
}

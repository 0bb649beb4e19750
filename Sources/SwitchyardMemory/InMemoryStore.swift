import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - InMemoryStore

/// A store with no file: the same semantics as the SQLite and LMDB stores (optimistic locking, uniqueness,
/// primary keys never reused, all-or-nothing saves), for tests and throw-away caches.
///
/// ```swift
/// let cache = try InMemoryStore(model: model, configuration: "Cache")
/// ```
public final class InMemoryStore: PersistentStore {
    /// Everything the store holds; replaced as a whole on save so readers never see half a save.
    package struct Contents: Sendable {
        /// Rows by inheritance root name, then primary key.
        package var tables: [String: [Int64: StoreRow]] = [:]
        /// `Z_MAX` by inheritance root name.
        package var maxKeys: [String: Int64] = [:]
        /// Many-to-many links by the key of the pair's first end (`RelationshipEnd.key`): (first-end row's
        /// primary key, second-end row's primary key).
        package var links: [String: Set<LinkPair>] = [:]
        /// The owner of each member of a to-many without inverse, by end key, then member primary key (one
        /// owner per member, as Core Data's foreign key in the member's row).
        package var owners: [String: [Int64: Int64]] = [:]
        /// Positions of ordered to-many members by end key, then source primary key, then member primary key.
        package var positions: [String: [Int64: [Int64: Int64]]] = [:]
        package var metadata: StoreMetadata
        /// Persistent history (`StoreOptions.persistentHistory`), oldest first.
        package var history: [StoredHistoryTransaction] = []
        /// The last history number handed out.
        package var lastHistoryNumber: Int64 = 0
    }

    public let type = StoreType.memory
    public let url: URL? = nil
    public let configurationName: String
    public let model: ObjectModel
    public let entities: [EntityDescription]
    public let identifier: UUID
    public let isReadOnly = false
    package let contents: Locked<Contents?>
    /// The many-to-many pairs with an end in this store, computed once (deletes drop their links).
    package let manyToManyPairs: [(first: RelationshipEnd, second: RelationshipEnd)]
    /// The to-manys without inverse with an end in this store (deletes drop their owners' entries).
    package let toManysWithoutInverse: [RelationshipEnd]

    /// Whether saves record persistent history (`StoreOptions.persistentHistory`).
    package let tracksHistory: Bool

    /// Creates an empty store for `configuration` of `model`; `options.persistentHistory` records every save's
    /// transaction (kept as long as the store).
    public init(model: ObjectModel, configuration: String, options: StoreOptions = .default) throws {
        self.tracksHistory = options.persistentHistory
        self.model = model
        self.configurationName = configuration
        self.entities = try model.entities(inConfiguration: configuration)
        let metadata = StoreMetadata(
            storeType: StoreType.memory.rawValue, versionHashes: model.versionHashes,
            versionIdentifiers: model.versionIdentifiers)
        self.identifier = metadata.uuid
        self.contents = Locked(Contents(metadata: metadata))
        self.manyToManyPairs = model.manyToManyPairs(touching: entities)
        self.toManysWithoutInverse = model.toManysWithoutInverse(touching: entities)
    }

    // MARK: - Metadata

    /// The store's metadata, as the last `setMetadata` left it.
    public func metadata() throws -> StoreMetadata {
        try read { $0.metadata }
    }

    /// Replaces the store's metadata.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try write { $0.metadata = metadata }
    }

    /// A memory store is always written by the model it was created with.
    public func storedModel() throws -> ObjectModel? {
        try read { _ in model }
    }

    // MARK: - Fetch

    /// The rows matching `request`, evaluated in memory, in the request's order.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let request = try request.prepared(forStore: identifier, model: model)
        let snapshot = try read { $0 }
        return try matchingRows(request, in: snapshot).ordered(for: request) {
            MemoryRowSubject(row: $0, contents: snapshot, model: model, path: displayPath, configurationName: configurationName)
        }
    }

    /// The number of rows `fetch(_:)` would return for `request`.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        try matchingRows(try request.prepared(forStore: identifier, model: model), in: try read { $0 }).count
    }

    public func rows(for references: [RowReference]) throws -> [StoreRow] {
        let snapshot = try read { $0 }
        return references.compactMap { ref in
            guard let root = model.entity(named: ref.entityName)?.rootName else { return nil }
            return snapshot.tables[root]?[ref.primaryKey].flatMap { $0.entityName == ref.entityName ? $0 : nil }
        }
    }

    /// Rows of the request's entity (and subentities) matching its predicate, in primary-key order.
    private func matchingRows(_ request: StoreFetchRequest, in snapshot: Contents) throws -> [StoreRow] {
        let entity = try entityInStore(request.entityName)
        let names = Set(request.includesSubentities ? entity.selfAndDescendantNames : [entity.name])
        let candidates = (snapshot.tables[entity.rootName] ?? [:]).values
            .filter { names.contains($0.entityName) }
            .sorted { $0.primaryKey < $1.primaryKey }
        guard let predicate = request.predicate else { return candidates }
        let prepared = PredicateEvaluator.Prepared(predicate)
        return try candidates.filter {
            try PredicateEvaluator.evaluate(
                prepared, on: MemoryRowSubject(row: $0, contents: snapshot, model: model, path: displayPath, configurationName: configurationName))
        }
    }

    /// Members of a to-many relationship for a batch of sources, in one pass over the links or the table.
    public func relatedReferences(of sources: [RowReference], relationship: String) throws -> [RowReference: [RowReference]] {
        let snapshot = try read { $0 }
        var result: [RowReference: [RowReference]] = [:]
        guard let first = sources.first else { return result }
        let end = try toManyEnd(relationship, of: first.entityName)
        guard let destination = model.entity(named: end.relationship.destinationEntityName) else { return result }
        let table = snapshot.tables[destination.rootName] ?? [:]
        let family = Set(destination.selfAndDescendantNames)
        var bySource: [Int64: [RowReference]] = [:]
        let keys = Set(sources.map(\.primaryKey))
        func member(_ pk: Int64) -> RowReference? {
            table[pk].flatMap { family.contains($0.entityName) ? $0.reference : nil }
        }
        if let (firstEnd, _) = model.manyToManyEnds(of: relationship, from: first.entityName) {
            let mineIsFirst = firstEnd.key == end.key
            for pair in snapshot.links[firstEnd.key] ?? [] {
                let (from, to) = mineIsFirst ? (pair.first, pair.second) : (pair.second, pair.first)
                if keys.contains(from), let m = member(to) { bySource[from, default: []].append(m) }
            }
        } else if model.isToManyWithoutInverse(end.relationship) {
            for (memberKey, owner) in snapshot.owners[end.key] ?? [:] where keys.contains(owner) {
                if let m = member(memberKey) { bySource[owner, default: []].append(m) }
            }
        } else if let inverse = end.relationship.inverseName, model.isInverseBackedToMany(end.relationship) {
            for row in table.values where family.contains(row.entityName) {
                if let owner = row.toOne[inverse]?.primaryKey, keys.contains(owner) {
                    bySource[owner, default: []].append(row.reference)
                }
            }
        } else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: first.entityName, property: relationship)
        }
        let positions = end.relationship.isOrdered ? snapshot.positions[end.key] ?? [:] : [:]
        for source in sources {
            result[source] = RelationshipMembers.sorted(bySource[source.primaryKey] ?? [], positions: positions[source.primaryKey] ?? [:])
        }
        return result
    }

    /// The declaring end of to-many `relationship` of `entityName`, or `StoreError.unknownProperty`.
    package func toManyEnd(_ relationship: String, of entityName: String) throws -> RelationshipEnd {
        guard let end = model.end(of: relationship, from: entityName), end.relationship.isToMany, !end.relationship.isTransient else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: entityName, property: relationship)
        }
        return end
    }

    // MARK: - Keys

    public func allocatePrimaryKeys(for entityName: String, count: Int) throws -> ClosedRange<Int64> {
        let root = try entityInStore(entityName).rootName
        guard count > 0 else {
            throw StoreError.invalidValue(
                path: displayPath, configuration: configurationName, entity: entityName, attribute: "primary key count", value: String(count),
                expected: "a positive number of keys")
        }
        return try write { contents in
            let first = (contents.maxKeys[root] ?? 0) + 1
            let last = first + Int64(count) - 1
            contents.maxKeys[root] = last
            return first...last
        }
    }

    // MARK: - Save

    public func save(_ changes: StoreChangeSet) throws {
        try write { contents in
            // Work on a copy; the caller's contents change only if every change applies.
            var next = contents
            try apply(changes, to: &next)
            if tracksHistory {
                var transaction = StoredHistoryTransaction.recording(changes, model: model)
                next.lastHistoryNumber += 1
                transaction.number = next.lastHistoryNumber
                next.history.append(transaction)
            }
            contents = next
        }
    }

    // MARK: - Destroy

    public func destroy() throws {
        contents.withLock { $0 = nil }
    }

    // MARK: - Helpers

    package func entityInStore(_ name: String) throws -> EntityDescription {
        guard let entity = model.entity(named: name),
            entities.contains(where: { $0.rootName == entity.rootName })
        else {
            throw StoreError.entityNotInStore(path: displayPath, configuration: configurationName, entity: name)
        }
        return entity
    }

    func read<R>(_ body: (Contents) throws -> R) throws -> R {
        try contents.withLock { c in
            guard let c else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
            return try body(c)
        }
    }

    func write<R>(_ body: (inout Contents) throws -> R) throws -> R {
        try contents.withLock { c in
            guard var current = c else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
            let result = try body(&current)
            c = current
            return result
        }
    }
}

// MARK: - LinkPair

/// A many-to-many link as the memory store keeps it: the primary keys of the pair's first and second end rows.
package struct LinkPair: Sendable, Hashable {
    package var first: Int64
    package var second: Int64
}

import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - StoreFetchRequest

/// A fetch as a store receives it: one entity, a predicate with every variable already substituted,
/// sort, limit and offset.
public struct StoreFetchRequest: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String { didSet { validatedAgainst = nil } }
    /// Which rows match; `nil` matches all.
    public var predicate: FetchPredicate? { didSet { validatedAgainst = nil } }
    /// The order of the rows, ties broken by primary key.
    public var sortKeys: [SortKey] { didSet { validatedAgainst = nil } }
    /// At most this many rows; `nil` for no limit.
    public var fetchLimit: Int?
    /// Rows to skip first.
    public var fetchOffset: Int
    /// Whether rows of subentities match too (Core Data's default: yes).
    public var includesSubentities: Bool
    /// The `ObjectModel.identity` of the model this request's key paths and constants were checked against
    /// (`validateFetch`) by whoever made it — a coordinator, for a context that checked them before asking. A
    /// store with that very model skips the check (`prepared(forStore:model:)`); any other store checks. Changing
    /// the entity, predicate or sort keys clears it. Not part of the request's equality, nor of its description.
    package var validatedAgainst: ObjectModel.Identity?

    /// A request for `entityName`'s rows in one store.
    public init(
        entityName: String, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = [],
        fetchLimit: Int? = nil, fetchOffset: Int = 0, includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
    }

    public static func == (a: StoreFetchRequest, b: StoreFetchRequest) -> Bool {
        a.entityName == b.entityName && a.predicate == b.predicate && a.sortKeys == b.sortKeys && a.fetchLimit == b.fetchLimit
            && a.fetchOffset == b.fetchOffset && a.includesSubentities == b.includesSubentities
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entityName)
        hasher.combine(predicate)
        hasher.combine(sortKeys)
        hasher.combine(fetchLimit)
        hasher.combine(fetchOffset)
        hasher.combine(includesSubentities)
    }
}

extension StoreFetchRequest: CustomStringConvertible, CustomReflectable {
    /// The request as its public properties show it.
    public var description: String {
        "StoreFetchRequest(entityName: \(entityName.debugDescription), predicate: \(predicate.map { "\($0)" } ?? "nil"), "
            + "sortKeys: \(sortKeys), fetchLimit: \(fetchLimit.map(String.init) ?? "nil"), fetchOffset: \(fetchOffset), "
            + "includesSubentities: \(includesSubentities))"
    }

    /// The public properties, for `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "entityName": entityName, "predicate": predicate as Any, "sortKeys": sortKeys, "fetchLimit": fetchLimit as Any,
            "fetchOffset": fetchOffset, "includesSubentities": includesSubentities,
        ], displayStyle: .struct)
    }
}

// MARK: - StoreChangeSet

/// Everything one save writes to one store, committed in one transaction or not at all.
public struct StoreChangeSet: Sendable, Hashable {
    /// New rows; primary keys come from `allocatePrimaryKeys`. Stores keep each row's `version` as given:
    /// 1 for a new object, the source's `Z_OPT` when a split copies rows.
    public var inserts: StoreRows
    /// Changed values of existing rows.
    public var updates: [RowUpdate]
    /// Rows to delete.
    public var deletes: [RowDeletion]
    /// Many-to-many links to add (adding one that exists changes nothing).
    public var linkInserts: [RelationshipLink]
    /// Many-to-many links to remove (removing one that does not exist changes nothing).
    public var linkDeletes: [RelationshipLink]
    /// New member orders of ordered to-many relationships, applied after every other change.
    public var orders: [RelationshipOrder]
    /// Who made the change (`ObjectContext.transactionAuthor`), recorded by stores that track persistent history.
    public var author: String?
    /// The saving context's `name`, recorded by stores that track persistent history.
    public var contextName: String?

    /// A change set of the given changes (each empty unless given).
    public init(
        inserts: [StoreRow] = [], updates: [RowUpdate] = [], deletes: [RowDeletion] = [],
        linkInserts: [RelationshipLink] = [], linkDeletes: [RelationshipLink] = [], orders: [RelationshipOrder] = [],
        author: String? = nil, contextName: String? = nil
    ) {
        self.author = author
        self.contextName = contextName
        self.inserts = StoreRows(inserts)
        self.updates = updates
        self.deletes = deletes
        self.linkInserts = linkInserts
        self.linkDeletes = linkDeletes
        self.orders = orders
    }

    /// True when the change set changes nothing.
    public var isEmpty: Bool {
        inserts.isEmpty && updates.isEmpty && deletes.isEmpty && linkInserts.isEmpty && linkDeletes.isEmpty && orders.isEmpty
    }
}

/// Changed values of one existing row. The store applies them only if the row's `Z_OPT` still equals
/// `expectedVersion`, and then increments it.
public struct RowUpdate: Sendable, Hashable {
    /// The row's concrete entity.
    public var entityName: String
    /// The row's primary key (`Z_PK`).
    public var primaryKey: Int64
    /// The `Z_OPT` the row must still have, or the save is a conflict.
    public var expectedVersion: Int64
    /// New attribute values by name (`.null` clears one).
    public var values: [String: AttributeValue] {
        get { positioned?.dictionary() ?? named }
        set {
            named = newValue
            positioned = nil
        }
        _modify {
            // A change in place builds the dictionary of a positioned update once, and edits a named one without
            // copying it.
            if let positioned {
                named = positioned.dictionary()
                self.positioned = nil
            }
            yield &named
        }
    }
    /// Changed to-one relationships; `nil` clears the relationship.
    public var toOne: [String: RowReference?]
    /// To-many relationships whose members changed without a column of this row changing (through the members'
    /// inverse to-one, or links saved alongside): persistent history records them as changed keys of the row.
    public var toManyKeys: Set<String>

    /// `values` as given by name.
    private var named: [String: AttributeValue]
    /// `values` by position, as a context hands them over (then `named` is empty): a store that can read them by
    /// position does, hashing no name (building the dictionary was a tenth of an LMDB update in callgrind).
    package private(set) var positioned: PositionedChanges?

    /// An update of one row.
    public init(
        entityName: String, primaryKey: Int64, expectedVersion: Int64, values: [String: AttributeValue] = [:],
        toOne: [String: RowReference?] = [:], toManyKeys: Set<String> = []
    ) {
        self.toManyKeys = toManyKeys
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.expectedVersion = expectedVersion
        self.named = values
        self.toOne = toOne
    }

    /// An update whose values are `changes` (none when nil) without the positions in `excluded`: read by
    /// position when nothing is excluded, else by name.
    package init(
        entityName: String, primaryKey: Int64, expectedVersion: Int64, changes: PositionedChanges?, excluding excluded: [Int] = []
    ) {
        self.init(entityName: entityName, primaryKey: primaryKey, expectedVersion: expectedVersion)
        if excluded.isEmpty {
            positioned = changes
        } else {
            named = changes?.dictionary(excluding: excluded) ?? [:]
        }
    }

    public static func == (a: RowUpdate, b: RowUpdate) -> Bool {
        a.entityName == b.entityName && a.primaryKey == b.primaryKey && a.expectedVersion == b.expectedVersion
            && a.values == b.values && a.toOne == b.toOne && a.toManyKeys == b.toManyKeys
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entityName)
        hasher.combine(primaryKey)
        hasher.combine(expectedVersion)
        hasher.combine(values)
        hasher.combine(toOne)
        hasher.combine(toManyKeys)
    }
}

extension RowUpdate: CustomStringConvertible, CustomReflectable {
    /// The update as its public properties show it (whether a context handed the values over by position is
    /// not shown).
    public var description: String {
        "RowUpdate(entityName: \(entityName.debugDescription), primaryKey: \(primaryKey), expectedVersion: \(expectedVersion), "
            + "values: \(values), toOne: \(toOne), toManyKeys: \(toManyKeys))"
    }

    /// The public properties, for `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "entityName": entityName, "primaryKey": primaryKey, "expectedVersion": expectedVersion, "values": values,
            "toOne": toOne, "toManyKeys": toManyKeys,
        ])
    }
}

/// A row to delete if its `Z_OPT` still equals `expectedVersion`.
public struct RowDeletion: Sendable, Hashable {
    /// The row's concrete entity.
    public var entityName: String
    /// The row's primary key (`Z_PK`).
    public var primaryKey: Int64
    /// The `Z_OPT` the row must still have, or the save is a conflict.
    public var expectedVersion: Int64

    /// A deletion of one row.
    public init(entityName: String, primaryKey: Int64, expectedVersion: Int64) {
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.expectedVersion = expectedVersion
    }
}

// MARK: - Preparing a request for one store

extension StoreFetchRequest {
    /// `body` given what `prepared(forStore:model:)` returns, without copying the request when that would change
    /// nothing (checked against `model` already, limits as given, no object arguments): a copy of a request retains
    /// and releases each of its fields, about 250 instructions of an indexed lookup in callgrind.
    package func withPrepared<R>(forStore identifier: @autoclosure () -> UUID, model: ObjectModel, _ body: (StoreFetchRequest) throws -> R) throws -> R {
        if validatedAgainst === model.identity, FetchRequest.limitsNeedNoChange(fetchLimit, fetchOffset),
            !(predicate?.hasObjectArguments ?? false)
        {
            return try body(self)
        }
        return try body(try prepared(forStore: identifier(), model: model))
    }

    /// The request as one store runs it: a `fetchLimit` of 0 read as no limit (negative limits and offsets
    /// refused), its key paths checked against the model before any row is read (unless they were checked
    /// against this very model: `validatedAgainst`), and its object arguments bound to this store's primary
    /// keys (an object of another store matches no row).
    package func prepared(forStore identifier: @autoclosure () -> UUID, model: ObjectModel) throws -> StoreFetchRequest {
        if validatedAgainst !== model.identity {
            try model.validateFetch(predicate: predicate, sortKeys: sortKeys, entityName: entityName)
        }
        var prepared = self
        try FetchRequest.checkLimits(&prepared.fetchLimit, fetchOffset)
        guard let predicate, predicate.hasObjectArguments else { return prepared }
        // Read only here: a store's identifier is behind its lock, and most predicates name no object.
        let identifier = identifier()
        prepared.predicate = predicate.bindingObjects(entityName: entityName, model: model) { id in
            id.storeIdentifier == identifier ? id.primaryKey : nil
        }
        return prepared
    }
}

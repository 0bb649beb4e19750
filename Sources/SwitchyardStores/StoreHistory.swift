import Foundation
import SwitchyardModel

// MARK: - Persistent history, as stores record it

/// What one recorded change did to its row.
public enum HistoryChangeKind: Int, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The row was inserted (Core Data's `ZCHANGETYPE` 0).
    case insert = 0
    /// Columns of the row changed (`ZCHANGETYPE` 1).
    case update = 1
    /// The row was deleted (`ZCHANGETYPE` 2).
    case delete = 2

    /// `insert`, `update` or `delete`.
    public var description: String {
        switch self {
        case .insert: return "insert"
        case .update: return "update"
        case .delete: return "delete"
        }
    }
}

/// One row's change in a recorded transaction.
package struct StoredHistoryChange: Sendable, Hashable {
    package var kind: HistoryChangeKind
    package var entityName: String
    package var primaryKey: Int64
    /// For an update: the attributes and relationships that changed, sorted.
    package var updatedKeys: [String]

    package init(kind: HistoryChangeKind, entityName: String, primaryKey: Int64, updatedKeys: [String] = []) {
        self.kind = kind
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.updatedKeys = updatedKeys
    }
}

/// One recorded write transaction of a store.
package struct StoredHistoryTransaction: Sendable, Hashable {
    /// The transaction's number in its store: increasing with commit order, never reused.
    package var number: Int64
    package var timestamp: Date
    package var author: String?
    package var contextName: String?
    package var processID: String?
    package var bundleID: String?
    package var changes: [StoredHistoryChange]

    package init(
        number: Int64, timestamp: Date, author: String?, contextName: String?, processID: String?, bundleID: String?,
        changes: [StoredHistoryChange]
    ) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.processID = processID
        self.bundleID = bundleID
        self.changes = changes
    }

    /// A transaction being recorded now by this process, from `changes` (numbered by the store).
    package static func recording(_ changes: StoreChangeSet, model: ObjectModel) -> StoredHistoryTransaction {
        recording(changes.historyChanges(model: model), author: changes.author, contextName: changes.contextName)
    }

    /// A transaction of `changes` being recorded now by this process (numbered by the store).
    package static func recording(
        _ changes: [StoredHistoryChange], author: String? = nil, contextName: String? = nil
    ) -> StoredHistoryTransaction {
        StoredHistoryTransaction(
            number: 0, timestamp: Date(), author: author, contextName: contextName, processID: HistoryProcess.processID,
            bundleID: HistoryProcess.bundleID, changes: changes)
    }
}

/// The process names a transaction records: Core Data's `ZPROCESSID` (the process name) and `ZBUNDLEID`.
package enum HistoryProcess {
    package static let processID = ProcessInfo.processInfo.processName
    package static let bundleID = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
}

/// A store that records persistent history (`StoreOptions.persistentHistory`): every save's transaction with its
/// author, time and changed rows, written in the save's own transaction, so history and data never disagree.
package protocol HistoryTrackingStore: PersistentStore {
    /// Whether saves are recorded: the option was given, or the store already has history (a Core Data store
    /// opened without the option keeps its history complete).
    var tracksHistory: Bool { get }
    /// The transactions after number `after` (nil: all that are kept), oldest first, at most `limit`; checked
    /// by `HistoryBounds.check` against what the store keeps, in the same read.
    func history(after: Int64?, limit: Int?) throws -> [StoredHistoryTransaction]
    /// The number of the last transaction committed (0 when none): cheap, reads no data table.
    func lastHistoryNumber() throws -> Int64
    /// The number of the last transaction recorded before `date` (0 when none).
    func lastHistoryNumber(before date: Date) throws -> Int64
    /// Deletes the transactions numbered up to `through`; how many were deleted.
    func deleteHistory(through: Int64) throws -> Int
}

/// The one check of a history position against what a store keeps.
package enum HistoryBounds {
    /// Throws `StoreError.historyExpired` when transactions after `after` were deleted (the oldest kept is
    /// `oldest`, or none is kept and `last` is past `after`), and `StoreError.historyTokenAhead` when `after` is
    /// past the store's last transaction `last` (the store was restored from an older copy or replaced).
    /// A nil `after` (everything kept) always passes.
    package static func check(after: Int64?, last: Int64, oldest: Int64?, path: String, configuration: String) throws {
        guard let after else { return }
        if after > last {
            throw StoreError.historyTokenAhead(path: path, configuration: configuration, after: after, last: last)
        }
        let firstKept = oldest ?? last + 1
        if after < last, firstKept > after + 1 {
            throw StoreError.historyExpired(path: path, configuration: configuration, after: after, oldestKept: firstKept)
        }
    }
}

extension StoreChangeSet {
    /// The rows this change set changes, as history records them: inserts, deletes, and updates with the keys
    /// whose stored values changed — attributes and to-one relationships of the row, the to-many keys the update
    /// names, many-to-many links on both ends, new orders on the ordering end. Ordered inserts, updates, deletes,
    /// each by entity name and primary key. Rows inserted or deleted here are not also updates.
    package func historyChanges(model: ObjectModel) -> [StoredHistoryChange] {
        var changes: [StoredHistoryChange] = []
        var written = Set<RowReference>()
        for row in inserts {
            changes.append(StoredHistoryChange(kind: .insert, entityName: row.entityName, primaryKey: row.primaryKey))
            written.insert(RowReference(entityName: row.entityName, primaryKey: row.primaryKey))
        }
        for row in deletes {
            changes.append(StoredHistoryChange(kind: .delete, entityName: row.entityName, primaryKey: row.primaryKey))
            written.insert(RowReference(entityName: row.entityName, primaryKey: row.primaryKey))
        }
        var updated: [RowReference: Set<String>] = [:]
        var order: [RowReference] = []   // first-touched order; sorted below
        func touch(_ reference: RowReference, _ keys: some Sequence<String>) {
            guard !written.contains(reference) else { return }
            if updated[reference] == nil { order.append(reference) }
            updated[reference, default: []].formUnion(keys)
        }
        for update in updates {
            touch(
                RowReference(entityName: update.entityName, primaryKey: update.primaryKey),
                Array(update.values.keys) + Array(update.toOne.keys) + Array(update.toManyKeys))
        }
        for link in linkInserts + linkDeletes {
            touch(link.source, [link.relationship])
            if let inverse = model.entity(named: link.source.entityName)?.relationship(named: link.relationship)?.inverseName {
                touch(link.destination, [inverse])
            }
        }
        for ordering in orders { touch(ordering.source, [ordering.relationship]) }
        for reference in order {
            changes.append(StoredHistoryChange(
                kind: .update, entityName: reference.entityName, primaryKey: reference.primaryKey,
                updatedKeys: updated[reference, default: []].sorted()))
        }
        // One canonical order, whatever order the saving context listed its objects in: inserts, updates, deletes,
        // each by entity and primary key.
        changes.sort { ($0.kind.rawValue, $0.entityName, $0.primaryKey) < ($1.kind.rawValue, $1.entityName, $1.primaryKey) }
        return changes
    }
}

// MARK: - Changed-column bit vectors

/// Core Data's `ACHANGE.ZCOLUMNS` for one entity: the changed properties of an update as a bit vector, bit `i`
/// (byte `i / 8`, least significant bit first) for the entity's `i`-th persistent property in name order
/// (attributes and relationships together). Computed once per entity by the store that records history.
package struct HistoryColumns: Sendable {
    /// The entity's persistent property names in bit order.
    package let names: [String]
    private let positions: [String: Int]

    package init(_ entity: EntityDescription) {
        names = (entity.allAttributes.filter { !$0.isTransient }.map(\.name)
            + entity.allRelationships.filter { !$0.isTransient }.map(\.name)).sorted()
        positions = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    }

    /// The columns of each of `entities`, by entity name.
    package static func table(_ entities: [EntityDescription]) -> [String: HistoryColumns] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, HistoryColumns($0)) })
    }

    /// The bit vector of `keys` (names the entity lacks are left out).
    package func encode(_ keys: [String]) -> Data {
        var bytes = [UInt8](repeating: 0, count: (names.count + 7) / 8)
        for key in keys {
            guard let i = positions[key] else { continue }
            bytes[i / 8] |= UInt8(1) << UInt8(i % 8)
        }
        return Data(bytes)
    }

    /// The names whose bits are set (bits past the entity's properties are ignored).
    package func decode(_ data: Data) -> [String] {
        var keys: [String] = []
        for (i, name) in names.enumerated() where i / 8 < data.count {
            if data[data.startIndex + i / 8] & (UInt8(1) << UInt8(i % 8)) != 0 { keys.append(name) }
        }
        return keys
    }
}

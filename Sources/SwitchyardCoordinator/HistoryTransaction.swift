import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - HistoryToken

/// A position in one store's persistent history: "everything up to this transaction". Save the token of the
/// last transaction a process has merged (it is `Codable`), and ask for what came after it:
/// Core Data's `NSPersistentHistoryToken`.
///
/// ```swift
/// let token = try coordinator.currentHistoryToken(for: "Cloud")
/// // ... other processes save ...
/// for transaction in try coordinator.history(after: token, in: "Cloud") { ... }
/// ```
public struct HistoryToken: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The store the token belongs to (`NSStoreUUID`); a token is refused by every other store.
    public let storeIdentifier: UUID
    /// The number of the last transaction the token covers (0: none yet).
    public let transactionNumber: Int64

    /// The token of transaction `transactionNumber` of the store `storeIdentifier`.
    public init(storeIdentifier: UUID, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Orders tokens of one store by transaction (tokens of different stores by store, which means nothing).
    public static func < (a: HistoryToken, b: HistoryToken) -> Bool {
        (a.storeIdentifier.uuidString, a.transactionNumber) < (b.storeIdentifier.uuidString, b.transactionNumber)
    }

    /// `<store UUID>#<number>`.
    public var description: String { "\(storeIdentifier.uuidString)#\(transactionNumber)" }
}

// MARK: - HistoryChange

/// One object's change in a recorded transaction.
public struct HistoryChange: Sendable, Hashable {
    /// The object (in the store the transaction belongs to).
    public let objectID: ObjectID
    /// Inserted, updated or deleted.
    public let kind: HistoryChangeKind
    /// For an update: the attributes and relationships whose stored values changed.
    public let updatedKeys: Set<String>
}

// MARK: - HistoryTransaction

/// One committed write transaction of a store that records persistent history (`StoreOptions.persistentHistory`),
/// by whichever process wrote it: Core Data's `NSPersistentHistoryTransaction`. Merge it into a context with
/// `ObjectContext.mergeChanges(fromHistory:policy:)`.
public struct HistoryTransaction: Sendable, Hashable {
    /// This transaction's position: pass it to ``StoreCoordinator/history(after:in:limit:)`` for what came after.
    public let token: HistoryToken
    /// The configuration of the store.
    public let configuration: String
    /// When the transaction was recorded (the writer's clock).
    public let timestamp: Date
    /// The saving context's `transactionAuthor`; nil for batch operations and contexts without one.
    public let author: String?
    /// The saving context's `name`.
    public let contextName: String?
    /// The writing process's name.
    public let processID: String?
    /// The writing program's bundle identifier (its process name where it has none).
    public let bundleID: String?
    /// The objects changed, in the order recorded.
    public let changes: [HistoryChange]

    package init(_ stored: StoredHistoryTransaction, store: UUID, configuration: String) {
        token = HistoryToken(storeIdentifier: store, transactionNumber: stored.number)
        self.configuration = configuration
        timestamp = stored.timestamp
        author = stored.author
        contextName = stored.contextName
        processID = stored.processID
        bundleID = stored.bundleID
        changes = stored.changes.map {
            HistoryChange(
                objectID: ObjectID(store: store, entityName: $0.entityName, primaryKey: $0.primaryKey), kind: $0.kind,
                updatedKeys: Set($0.updatedKeys))
        }
    }

    /// The changes grouped as a save notification groups them.
    public var storeChanges: StoreSaveChanges {
        var result = StoreSaveChanges(storeIdentifier: token.storeIdentifier, configuration: configuration)
        for change in changes {
            switch change.kind {
            case .insert: result.inserted.insert(change.objectID)
            case .update: result.updated[change.objectID, default: []].formUnion(change.updatedKeys)
            case .delete: result.deleted.insert(change.objectID)
            }
        }
        return result
    }
}

import Foundation
import SwitchyardModel

// MARK: - SaveNotification

/// What one context save changed, store by store: Core Data's `NSManagedObjectContextDidSave` for
/// Switchyard. A coordinator publishes one after every save that wrote something, to
/// ``StoreCoordinator/saveNotifications()`` streams and ``StoreCoordinator/addSaveObserver(_:)`` callbacks; another
/// context brings itself up to date with `ObjectContext.mergeChanges(from:policy:)`.
///
/// A save that failed part way (one store committed, a later one refused) publishes what the committed stores
/// wrote.
public struct SaveNotification: Sendable {
    /// The coordinator whose context saved (merging needs the same model).
    public let coordinator: StoreCoordinator
    /// The changes of each store the save wrote, in the order the stores committed.
    public let stores: [StoreSaveChanges]

    /// A notification of `stores`' changes through `coordinator`.
    package init(coordinator: StoreCoordinator, stores: [StoreSaveChanges]) {
        self.coordinator = coordinator
        self.stores = stores
    }

    /// Every object the save inserted, with its permanent ID.
    public var insertedObjectIDs: Set<ObjectID> { stores.reduce(into: []) { $0.formUnion($1.inserted) } }
    /// Every object the save updated.
    public var updatedObjectIDs: Set<ObjectID> { stores.reduce(into: []) { $0.formUnion($1.updated.keys) } }
    /// Every object the save deleted.
    public var deletedObjectIDs: Set<ObjectID> { stores.reduce(into: []) { $0.formUnion($1.deleted) } }
}

/// One store's share of a save: the objects inserted, updated (with the properties that changed) and deleted.
public struct StoreSaveChanges: Sendable, Hashable {
    /// The store's identifier (`NSStoreUUID`).
    public let storeIdentifier: UUID
    /// The configuration the store serves.
    public let configuration: String
    /// The objects inserted, by their permanent IDs.
    public var inserted: Set<ObjectID>
    /// The objects updated, each with the names of the attributes and relationships whose change it saved.
    public var updated: [ObjectID: Set<String>]
    /// The objects deleted.
    public var deleted: Set<ObjectID>

    /// The changes of the store `storeIdentifier` (serving `configuration`).
    package init(
        storeIdentifier: UUID, configuration: String, inserted: Set<ObjectID> = [], updated: [ObjectID: Set<String>] = [:],
        deleted: Set<ObjectID> = []
    ) {
        self.storeIdentifier = storeIdentifier
        self.configuration = configuration
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}

// MARK: - SaveObservation

/// Keeps a save observer registered; ``cancel()`` (or releasing the last reference) removes it.
public final class SaveObservation: Sendable {
    private let remove: @Sendable () -> Void
    private let removed = Locked(false)

    package init(remove: @escaping @Sendable () -> Void) { self.remove = remove }

    /// Stops the observer; no call starts after this returns.
    public func cancel() {
        let first = removed.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if first { remove() }
    }

    deinit { cancel() }
}

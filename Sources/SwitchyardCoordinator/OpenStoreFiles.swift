import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - OpenStoreFiles

/// The file-based stores added to a coordinator anywhere in this process, by canonical path
/// (`StoreCoordinator.canonicalPath`), so that one coordinator does not delete, replace or move files another
/// coordinator is using.
///
/// Found by a user scenario: a disposable store recreated for a new model while another coordinator of the
/// process still had it open. On SQLite the other coordinator went on saving into the deleted file — every save
/// reported success and was lost; on LMDB its committed data was deleted and its next save failed. Destroying a
/// store through one coordinator while another had it open did the same. An entry lives while its store stays in
/// its coordinator: `removeStore` (or a substitution) ends it, and so does the coordinator's `deinit`.
///
/// Entries name the coordinator and the store by identity, not by weak references: a weak reference gave each
/// a side table, so every retain and release of the store and the coordinator on the hot paths (each object's
/// store, each fetch) took the slow path (`perf`: about 2% of inserting objects). An identity stays valid for as
/// long as its entry: the coordinator removes its entries before its memory goes, and holds its stores until
/// their entries are removed (it changes its store list and these entries under one lock, so no race between
/// adding and removing a store leaves an entry behind; the order of locks is always the coordinator's, then this).
package enum OpenStoreFiles {
    private struct Entry: Equatable {
        let coordinator: ObjectIdentifier
        let store: ObjectIdentifier
    }

    private static let entries = Locked<[String: [Entry]]>([:])

    /// Records that `store` was added to `coordinator` (memory and server stores are not recorded).
    static func added(_ store: any PersistentStore, to coordinator: StoreCoordinator) {
        guard store.type.isFileBased, let url = store.url else { return }
        let key = StoreCoordinator.canonicalPath(url)
        let entry = Entry(coordinator: ObjectIdentifier(coordinator), store: ObjectIdentifier(store))
        entries.withLock { entries in
            if entries[key]?.contains(entry) != true { entries[key, default: []].append(entry) }
        }
    }

    /// Records that `store` left `coordinator` (not any other coordinator that added the same store object). Found by
    /// identity, not by recomputing the path: a moved store's old path no longer exists, and a path that does not
    /// resolve the way it did (macOS's `/private`) would leave the entry behind.
    static func removed(_ store: any PersistentStore, from coordinator: StoreCoordinator) {
        guard store.type.isFileBased else { return }
        let entry = Entry(coordinator: ObjectIdentifier(coordinator), store: ObjectIdentifier(store))
        remove { $0 == entry }
    }

    /// Records that the coordinator with this identity is going away (its `deinit`): none of its stores is open
    /// through it any more.
    static func coordinatorEnded(_ coordinator: ObjectIdentifier) {
        remove { $0.coordinator == coordinator }
    }

    private static func remove(where matches: (Entry) -> Bool) {
        entries.withLock { entries in
            for key in Array(entries.keys) {
                entries[key]?.removeAll(where: matches)
                if entries[key]?.isEmpty == true { entries[key] = nil }
            }
        }
    }

    /// Whether a store at `url` is recorded (for tests: paths of released coordinators are dropped).
    package static func isRecorded(_ url: URL) -> Bool {
        let key = StoreCoordinator.canonicalPath(url)
        return entries.withLock { $0[key] != nil }
    }

    /// Why the files of the store at `url` must not be deleted, replaced, moved or migrated now: a coordinator of
    /// this process other than `coordinator` has a store there (its own is the one being worked on: a store being
    /// replaced or moved, reopened before it is swapped out). Nil when none has.
    package static func inUse(_ url: URL, by coordinator: StoreCoordinator) -> String? {
        let key = StoreCoordinator.canonicalPath(url)
        let holders = entries.withLock { entries in
            (entries[key] ?? []).filter { $0.coordinator != ObjectIdentifier(coordinator) }.count
        }
        guard holders > 0 else { return nil }
        return "the store is open in \(holders == 1 ? "another coordinator" : "\(holders) other coordinators") of this process; "
            + "remove it from \(holders == 1 ? "that coordinator" : "them") (removeStore) first"
    }
}

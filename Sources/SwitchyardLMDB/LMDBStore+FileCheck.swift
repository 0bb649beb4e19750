import Foundation

// MARK: - Checking a store's file before reading all of it

extension LMDBStore {
    /// Walks every page of the store's `data.mdb` (meta pages against the file size, then every B-tree page,
    /// bounds-checked, see `LMDBPageCheck`) without mapping it, whatever its size: opening a store walks all of
    /// it only up to 4 MiB. Throws `StoreError.notAStore` naming the first damaged page; returns when the
    /// directory has no `data.mdb`. `storeinspect` and `storesplit` run it before they read a store.
    /// `configuration` names the store in errors where the caller knows it.
    public static func checkFile(at url: URL, configuration: String = "(checked before opening)") throws {
        try LMDBFileCheck.validate(directory: url.path, configuration: configuration, readOnly: true)
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("data.mdb").path) else { return }
        // Opened read-only (or the environment this process already has open), then walked under a read
        // transaction: mapping the file is safe once the meta pages check out, and the walk needs a snapshot
        // no writer can recycle.
        let environment = try LMDBEnvironment.shared(
            path: url.path, configuration: configuration, mapSize: 0, maxDatabases: 1_024, readOnly: true)
        try environment.walkPages(full: true)
    }
}

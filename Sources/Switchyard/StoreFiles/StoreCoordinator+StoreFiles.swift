import Foundation
import SwitchyardCoordinator
import SwitchyardLMDB
import SwitchyardMigration
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardSplit
import SwitchyardStores

// MARK: - Moving, copying, converting, replacing and destroying stores

extension StoreCoordinator {
    /// Moves `store` (of this coordinator) with all its files to `url` and reopens it there; objects fetched
    /// from it before keep working through the store returned, which takes the old one's place.
    ///
    /// An SQLite store is checkpointed and closed, then its support folder (external binary data) and its file
    /// are renamed, the file last; an LMDB store's directory is renamed. Across file systems the files are
    /// copied under a temporary name first and renamed into place, then the old ones removed. A kill at any
    /// point leaves the store complete at one of the two places. Writes to the store while it moves fail with
    /// `StoreError.closed`; retry them afterwards.
    /// ```swift
    /// let moved = try coordinator.moveStore(store, to: sharedContainer.appendingPathComponent("Cloud.sqlite"))
    /// ```
    @discardableResult
    public func moveStore(_ store: any PersistentStore, to url: URL, options: StoreOptions? = nil) throws -> any PersistentStore {
        let operation = "move store"
        let source = try fileBacked(store, operation: operation)
        try checkInCoordinator(store)
        try checkNotOpenElsewhere(store, operation: operation)
        try (store as? BulkCopyStore)?.refuseInsideOwnTransaction("move the store")
        try checkDestination(url, type: store.type, operation: operation)
        try perform(operation, store) { try store.closeForFiles() }
        try perform(operation, store) {
            do {
                try StoreFileSet.moveIntoPlace(source, at: url, type: store.type)
            } catch let error as StoreFileError where error.code == EXDEV {
                // Another file system: a complete copy under a temporary name, renamed into place, then the
                // old files removed.
                let partial = Self.partialURL(for: url)
                StoreFileSet.remove(at: partial, type: store.type)
                for file in StoreFileSet.files(of: source, type: store.type) {
                    try FileManager.default.copyItem(at: file, to: StoreFileSet.counterpart(of: file, store: source, at: partial, type: store.type))
                }
                try StoreFileSet.moveIntoPlace(partial, at: url, type: store.type)
                StoreFileSet.remove(at: source, type: store.type)
            }
        }
        let reopened = try openMigrating(
            StoreDescription(store.type, configuration: store.configurationName, url: url, options: options ?? Self.reopeningOptions(of: store)),
            progress: nil)
        try substitute(store, with: reopened, followed: true)
        logger.info("store moved", metadata: ["from": "\(source.path)", "to": "\(url.path)", "configuration": "\(store.configurationName)"])
        return reopened
    }

    /// Writes a consistent copy of a live store to `url` (same backend), while other contexts and processes keep
    /// writing: SQLite's online backup from one snapshot (then `VACUUM` with `compact`), with the external data
    /// files its rows name; LMDB's `mdb_env_copy2` (`MDB_CP_COMPACT` with `compact`). The copy keeps everything,
    /// `NSStoreUUID` included (it is a backup of the same store); it is not added to the coordinator, and the
    /// source is never written.
    ///
    /// The copy is written under a temporary name beside `url` and renamed into place when complete, so a kill
    /// never leaves a partial store at `url`.
    /// ```swift
    /// try coordinator.copyStore(store, to: backups.appendingPathComponent("Cloud-\(day).sqlite"), compact: true)
    /// ```
    public func copyStore(_ store: any PersistentStore, to url: URL, compact: Bool = false) throws {
        let operation = compact ? "compacting copy of store" : "copy store"
        _ = try fileBacked(store, operation: operation)
        try checkDestination(url, type: store.type, operation: operation)
        let partial = Self.partialURL(for: url)
        StoreFileSet.remove(at: partial, type: store.type)
        do {
            try backup(store, to: partial, compact: compact)
            try Self.checkStillFree(url, type: store.type, operation: operation)
            try StoreFileSet.moveIntoPlace(partial, at: url, type: store.type)
        } catch {
            StoreFileSet.remove(at: partial, type: store.type)
            throw Self.fileError(error, operation: operation, store: store)
        }
        logger.info("store copied", metadata: ["from": "\(store.displayPath)", "to": "\(url.path)", "compact": "\(compact)"])
    }

    /// Writes `store`'s contents as a store of another backend at `url` (SQLite <-> LMDB), from a consistent
    /// snapshot of the live store: primary keys, `Z_OPT`, `Z_MAX`, the app's metadata keys and the
    /// `NSStoreUUID` are kept, so the converted store can replace the original (`replaceStore`) with every
    /// `ObjectID` still valid. With `verify`, the rows and links are checksummed on both sides before the new
    /// store appears (as `storesplit --verify`). `progress` receives the copy's progress.
    @discardableResult
    public func convertStore(
        _ store: any PersistentStore, to url: URL, type: StoreType, verify: Bool = true, progress: ((SplitProgress) -> Void)? = nil
    ) throws -> SplitReport {
        let operation = "convert store to \(type.rawValue)"
        _ = try fileBacked(store, operation: operation)
        guard type != .memory else { throw StoreFileOperationError.memoryStore(operation: operation, configuration: store.configurationName) }
        guard type.isFileBased else {
            throw StoreFileOperationError.failed(
                operation: operation, path: url.path, configuration: store.configurationName,
                reason: "a \(type.rawValue) store is not a file: copy rows into it with storesplit instead")
        }
        guard type != store.type else {
            throw StoreFileOperationError.failed(
                operation: operation, path: url.path, configuration: store.configurationName,
                reason: "the store is already \(type.rawValue); use copyStore for a copy")
        }
        try checkDestination(url, type: type, operation: operation)
        let snapshot = Self.partialURL(for: url, tag: "snapshot")
        let partial = Self.partialURL(for: url)
        StoreFileSet.remove(at: snapshot, type: store.type)
        StoreFileSet.remove(at: partial, type: type)
        defer { StoreFileSet.remove(at: snapshot, type: store.type) }
        do {
            try backup(store, to: snapshot, compact: false)
            let report = try Self.writeConverted(
                snapshot, into: partial, type: type, model: model, configuration: store.configurationName, identifier: store.identifier,
                verify: verify, progress: progress)
            try Self.checkStillFree(url, type: type, operation: operation)
            try StoreFileSet.moveIntoPlace(partial, at: url, type: type)
            logger.info("store converted", metadata: ["from": "\(store.displayPath)", "to": "\(url.path)", "type": "\(type.rawValue)"])
            return report
        } catch {
            StoreFileSet.remove(at: partial, type: type)
            throw Self.fileError(error, operation: operation, store: store)
        }
    }

    /// Replaces `store`'s contents with those of the store at `source` (either backend; converted when it
    /// differs from `store`'s), then reopens `store`'s location. The source is never written. The new
    /// contents appear with one rename (SQLite: the file, its external data files joined first; LMDB: `data.mdb`),
    /// so a kill leaves either the old store or the new one. Objects fetched from the old contents do not carry
    /// over (as with Core Data's `replacePersistentStore`): fetch again through the store returned.
    @discardableResult
    public func replaceStore(_ store: any PersistentStore, withContentsOf source: URL, options: StoreOptions? = nil) throws -> any PersistentStore {
        let operation = "replace store"
        let target = try fileBacked(store, operation: operation)
        try checkInCoordinator(store)
        try checkNotOpenElsewhere(store, operation: operation)
        try (store as? BulkCopyStore)?.refuseInsideOwnTransaction("replace the store's contents")
        // Errors about the source name the store being replaced (what the operation is "of") and say which
        // source they are about.
        guard let sourceType = StoreSplitter.storeType(at: source) else {
            throw StoreFileOperationError.failed(
                operation: operation, path: target.path, configuration: store.configurationName, reason: "no store at \(source.path)")
        }
        // Only contents this store can hold: a store written with another model (or for another configuration)
        // would read as empty, or lose everything.
        let compatibility: StoreCompatibility
        do {
            compatibility = try StoreCompatibility.check(sourceType, at: source, model: model, configuration: store.configurationName)
        } catch {
            throw StoreFileOperationError.failed(
                operation: operation, path: target.path, configuration: store.configurationName,
                reason: "\(source.path) cannot be read as a store of configuration \(store.configurationName) of this model: \(error)")
        }
        // An older version of the same model is fine (it migrates when the store reopens); a store sharing no
        // entity with the configuration is another model's, whatever an inferred migration could do with it.
        let shared = compatibility.report.entities.contains { $0.kind != .added && $0.kind != .removed }
        guard compatibility.report.verdict != .incompatible, shared else {
            let why = shared
                ? compatibility.report.blockingReasons.joined(separator: "; ")
                : "it shares no entity with configuration \(store.configurationName) of this model"
            throw StoreFileOperationError.failed(
                operation: operation, path: target.path, configuration: store.configurationName,
                reason: "\(source.path) was written with a model this coordinator's cannot take: \(why)")
        }
        let partial = Self.partialURL(for: target)
        StoreFileSet.remove(at: partial, type: store.type)
        do {
            if sourceType == store.type {
                // Copied as it is, so opened with the model it was written with (its model cache): an older version
                // of this model migrates when the store reopens below, and opened read-only with this one it was
                // refused ("opened read-only: open it writable once to migrate it").
                let (opened, _) = try StoreSplitter.openReadOnly(source, model: nil, fallback: model)
                try backup(opened, to: partial, compact: false)
            } else {
                let (opened, _) = try StoreSplitter.openReadOnly(source, model: model)
                try Self.writeConverted(
                    source, into: partial, type: store.type, model: model, configuration: store.configurationName,
                    identifier: opened.identifier, verify: true, progress: nil)
            }
            try store.closeForFiles()
            try MigrationChainRunner.replace(target, with: partial, type: store.type)
        } catch {
            StoreFileSet.remove(at: partial, type: store.type)
            throw Self.fileError(error, operation: operation, store: store)
        }
        let reopened = try openMigrating(
            StoreDescription(store.type, configuration: store.configurationName, url: target, options: options ?? Self.reopeningOptions(of: store)),
            progress: nil)
        try substitute(store, with: reopened, followed: false)
        logger.info("store replaced", metadata: ["store": "\(target.path)", "from": "\(source.path)"])
        return reopened
    }

    /// Removes `store` from the coordinator and deletes every file it has (SQLite sidecars and support folder,
    /// the LMDB directory); a memory store is emptied. Refused while another coordinator of this process has the
    /// store (`StoreFileOperationError.failed`), as are `moveStore` and `replaceStore`: it would go on using files
    /// that are gone.
    public func destroyStore(_ store: any PersistentStore) throws {
        try checkInCoordinator(store)
        try checkNotOpenElsewhere(store, operation: "destroy store")
        // Before the store leaves the coordinator: refused, it stays as it was.
        try (store as? BulkCopyStore)?.refuseInsideOwnTransaction("destroy the store")
        try removeStore(store)
        try store.destroy()
        logger.info("store destroyed", metadata: ["store": "\(store.displayPath)", "configuration": "\(store.configurationName)"])
    }

    // MARK: - Helpers

    /// `url.switchyard-partial` (or `-tag`): where an operation writes before renaming into place; a leftover
    /// from a killed run is removed by the next one.
    package static func partialURL(for url: URL, tag: String = "partial") -> URL {
        url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".switchyard-\(tag)")
    }

    private func fileBacked(_ store: any PersistentStore, operation: String) throws -> URL {
        guard store.type != .memory, let url = store.url else {
            throw StoreFileOperationError.memoryStore(operation: operation, configuration: store.configurationName)
        }
        guard store.type.isFileBased else {
            throw StoreFileOperationError.failed(
                operation: operation, path: store.displayPath, configuration: store.configurationName,
                reason: "a \(store.type.rawValue) store lives on its server, not in files this process can move or copy")
        }
        return url
    }

    private func checkInCoordinator(_ store: any PersistentStore) throws {
        guard stores.contains(where: { $0 === store }) else { throw CoordinatorError.storeNotInCoordinator(path: store.displayPath) }
    }

    /// Refuses to delete, replace or move the files of a store another coordinator of this process has open
    /// (`OpenStoreFiles`): on SQLite it would go on saving into deleted files, on LMDB its environment would close.
    private func checkNotOpenElsewhere(_ store: any PersistentStore, operation: String) throws {
        guard let url = store.url, store.type.isFileBased, let inUse = OpenStoreFiles.inUse(url, by: self) else { return }
        throw StoreFileOperationError.failed(operation: operation, path: store.displayPath, configuration: store.configurationName, reason: inUse)
    }

    /// Refuses an existing destination and a directory that is missing or read-only.
    private func checkDestination(_ url: URL, type: StoreType, operation: String) throws {
        try Self.checkStillFree(url, type: type, operation: operation)
        // The tools tell a store's backend by its extension: a name claiming the other backend would mislead them.
        let claimed: StoreType? = ["sqlite": .sqlite, "lmdb": .lmdb][url.pathExtension.lowercased()]
        if let claimed, claimed != type {
            throw StoreFileOperationError.failed(
                operation: operation, path: url.path, configuration: "-",
                reason: "the name ends in .\(url.pathExtension) but the store would be \(type.rawValue)")
        }
        if let problem = DiskDiagnosis.folderProblem(url.deletingLastPathComponent().path, probing: true) {
            throw StoreFileOperationError.destinationNotWritable(operation: operation, path: url.path, reason: problem)
        }
    }

    private static func checkStillFree(_ url: URL, type: StoreType, operation: String) throws {
        if FileManager.default.fileExists(atPath: url.path) {
            throw StoreFileOperationError.destinationExists(operation: operation, path: url.path)
        }
    }

    private func backup(_ store: any PersistentStore, to url: URL, compact: Bool) throws {
        switch store {
        case let sqlite as SQLiteStore: try sqlite.backup(to: url, compact: compact)
        case let lmdb as LMDBStore: try lmdb.backup(to: url, compact: compact)
        default: throw StoreFileOperationError.memoryStore(operation: "copy store", configuration: store.configurationName)
        }
    }

    /// Splits (one destination) the closed store at `source` into a new store of `type` at `url`, then gives
    /// it `identifier` and drops the split's own metadata keys.
    @discardableResult
    private static func writeConverted(
        _ source: URL, into url: URL, type: StoreType, model: ObjectModel, configuration: String, identifier: UUID, verify: Bool,
        progress: ((SplitProgress) -> Void)?
    ) throws -> SplitReport {
        let splitter = try StoreSplitter(
            source: source, targetModel: model, destinations: [SplitDestination(configuration: configuration, url: url, type: type)])
        let report = try splitter.run(try splitter.plan(), options: SplitOptions(verifyContent: verify), progress: progress)
        let converted: any PersistentStore & BulkCopyStore = type == .lmdb
            ? try LMDBStore(url: url, model: model, configuration: configuration)
            : try SQLiteStore(url: url, model: model, configuration: configuration)
        var metadata = try converted.metadata()
        metadata.uuid = identifier
        metadata.additional = metadata.additional.filter { !$0.key.hasPrefix("SwitchyardSplit") }
        try converted.setMetadata(metadata)
        try converted.closeFiles()
        return report
    }

    private static func fileError(_ error: any Error, operation: String, store: any PersistentStore) -> any Error {
        if error is StoreFileOperationError || error is StoreError || error is SplitError || error is CoordinatorError { return error }
        return StoreFileOperationError.failed(
            operation: operation, path: store.displayPath, configuration: store.configurationName, reason: "\(error)")
    }

    private func perform(_ operation: String, _ store: any PersistentStore, _ body: () throws -> Void) throws {
        do { try body() } catch { throw Self.fileError(error, operation: operation, store: store) }
    }
}

extension PersistentStore {
    /// Flushes and closes the store's files so they can be renamed (SQLite: the WAL checkpointed away).
    package func closeForFiles() throws {
        guard let bulk = self as? BulkCopyStore else { return }
        try bulk.closeFiles()
    }
}

extension StoreCoordinator {
    /// The options a store is reopened with after a move or replacement when the caller gives none: read-only
    /// as it was, and still recording persistent history if it did.
    static func reopeningOptions(of store: any PersistentStore) -> StoreOptions {
        StoreOptions(readOnly: store.isReadOnly, persistentHistory: (store as? any HistoryTrackingStore)?.tracksHistory ?? false)
    }
}

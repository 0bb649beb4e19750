import Foundation
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - DisposalDecision

/// What happens to a disposable store whose model cannot be migrated.
public enum DisposalDecision: Sendable, Hashable {
    /// Delete the store's files and create it again, empty, for its configuration.
    case recreate
    /// Move the store's files aside (`<name>.quarantined-<time>.<ext>`) and create it again, empty.
    case quarantine
    /// Leave the store alone: adding it fails with `StoreError.incompatibleModel`.
    case keep
}

/// Decides about a disposable store that cannot be migrated, given its description and the report.
public typealias DisposalHandler = @Sendable (StoreDescription, CompatibilityReport) -> DisposalDecision

// MARK: - Opening with migration and disposal

extension StoreCoordinator {
    /// Called before a disposable store that cannot be migrated is recreated; it may veto (`.keep`) or ask for
    /// quarantine. Without a handler the store's `StoreOptions.quarantine` decides.
    public var disposalHandler: DisposalHandler? {
        get { disposal.withLock { $0 } }
        set { disposal.withLock { $0 = newValue } }
    }

    /// Opens the described store: migrates it when its stored model differs and every change is inferable;
    /// when not, recreates (or quarantines) it if it is disposable, else throws `StoreError.incompatibleModel`
    /// carrying the report (the store untouched).
    package func openMigrating(_ d: StoreDescription, progress: (@Sendable (StoreLoadEvent) -> Void)?) throws -> any PersistentStore {
        try openMigrating(d, progress: progress, isCancelled: nil).store
    }

    /// `openMigrating` that also says what happened (loaded, migrated with its report, recreated). When
    /// `isCancelled` returns true at a migration batch, the migration throws `CancellationError` and its
    /// transaction rolls back: the store is left as it was.
    package func openMigrating(
        _ d: StoreDescription, progress: (@Sendable (StoreLoadEvent) -> Void)?, isCancelled: (@Sendable () -> Bool)?
    ) throws -> (store: any PersistentStore, outcome: StoreLoadResult.Outcome) {
        let path = d.displayLocation
        var migrationProgress: MigrationProgressHandler?
        if progress != nil || isCancelled != nil {
            migrationProgress = { @Sendable (step: MigrationProgress) in
                progress?(.migrating(path: step.path, entity: step.entity, done: step.done, total: step.total))
                if isCancelled?() == true { throw CancellationError() }
            }
        }
        try checkNotMigratingUnderAnotherCoordinator(d)
        do {
            traceCompatibility(d)
            // A migration chain's steps (when one is set) run first; what they changed is reported as a migration.
            var chainReport: CompatibilityReport?
            if let prepare = storePreparation.withLock({ $0 }) {
                let logger = self.logger
                chainReport = try prepare(d, migrationProgress) { event in
                    if case let .migrationStep(path, configuration, from, to, custom) = event {
                        logger.info("migration step", metadata: [
                            "path": "\(path)", "configuration": "\(configuration)", "from": "\(from)", "to": "\(to)",
                            "kind": "\(custom ? "custom" : "inferred")",
                        ])
                    }
                    progress?(event)
                }
            }
            let store = try openStore(d, migrationProgress: migrationProgress)
            if let report = (store as? any MigratingStore)?.migrationReport {
                logger.info("migrated store", metadata: ["path": "\(path)", "configuration": "\(d.configuration)", "changes": "\(report.summary)"])
            }
            let reports = [chainReport, (store as? any MigratingStore)?.migrationReport].compactMap { $0 }
            guard let first = reports.first else { return (store, .loaded) }
            return (store, .migrated(CompatibilityReport(configuration: first.configuration, entities: reports.flatMap(\.entities))))
        } catch let error as StoreError where d.options.disposable && !d.options.readOnly {
            let storePath: String, configuration: String, report: CompatibilityReport
            switch error {
            case let .incompatibleModel(p, c, r):
                (storePath, configuration, report) = (p, c, r)
            case .schemaMismatch:
                // A store without a model cache whose tables do not fit: the layout report says why.
                guard let url = d.url, let layout = try? StoreCompatibility.check(d.type, at: url, model: model, configuration: d.configuration),
                    layout.report.verdict == .incompatible
                else { throw error }
                (storePath, configuration, report) = (url.path, d.configuration, layout.report)
            default:
                throw error
            }
            let decision = disposalHandler?(d, report) ?? (d.options.quarantine ? .quarantine : .recreate)
            guard let url = d.url, decision != .keep else {
                throw StoreError.incompatibleModel(path: storePath, configuration: configuration, report: report)
            }
            // Another coordinator of this process using the files would lose them (SQLite: go on saving into the
            // deleted file, every save lost), so the store is not recreated while it is open there.
            if let inUse = OpenStoreFiles.inUse(url, by: self) {
                throw StoreError.openFailed(
                    path: storePath, configuration: configuration,
                    reason: "its model cannot be migrated to this one (\(report.blockingReasons.joined(separator: "; "))), and it is not "
                        + "\(decision == .quarantine ? "quarantined" : "recreated") although disposable: \(inUse)")
            }
            let reason: String
            if decision == .quarantine {
                let moved = try Self.quarantine(url, type: d.type, configuration: d.configuration)
                reason = "model cannot be migrated (\(report.blockingReasons.joined(separator: "; "))); old files moved to \(moved.path)"
            } else {
                try Self.removeStoreFiles(url, type: d.type, configuration: d.configuration)
                reason = "model cannot be migrated (\(report.blockingReasons.joined(separator: "; "))); old store deleted"
            }
            logger.notice("recreated disposable store", metadata: ["path": "\(path)", "reason": "\(reason)"])
            let store = try openStore(d, migrationProgress: nil)
            progress?(.recreated(path: path, configuration: d.configuration, reason: reason))
            return (store, .recreated(report))
        }
    }

    /// Refuses to migrate a store another coordinator of this process has open (`OpenStoreFiles`): that one would
    /// go on with the old schema (a user trial: after a rename and a removal migrated in place, its SQLite saves and
    /// fetches failed with "table ZPERSON has no column named ZAGE"). The stored model is read only when the store
    /// is open elsewhere; an identical or compatible one (no change to stored data) opens as before.
    private func checkNotMigratingUnderAnotherCoordinator(_ d: StoreDescription) throws {
        guard d.type.isFileBased, !d.options.readOnly, let url = d.url, let inUse = OpenStoreFiles.inUse(url, by: self) else { return }
        // A store that cannot be compared (gone, damaged, not a store) is left to the open, which says what it is
        // (`notAStore`) or makes a new store where none is; neither migrates anything.
        guard let check = try? StoreCompatibility.check(d.type, at: url, model: model, configuration: d.configuration) else { return }
        let verdict = check.report.verdict
        // An incompatible store is refused, or recreated when disposable (which checks for itself), unless a
        // migration chain is set: its steps would migrate it.
        guard verdict == .migratable || (verdict == .incompatible && storePreparation.withLock({ $0 }) != nil) else { return }
        throw StoreError.openFailed(
            path: url.path, configuration: d.configuration,
            reason: "it needs a migration to this model (\(check.report.summary)), which is not run while \(inUse)")
    }

    /// Logs, at `.info`, how the stored model compares with this coordinator's (identical, compatible,
    /// migratable, incompatible) and on what basis, before a store on disk is opened. Reads the store's
    /// metadata and model cache once more, so only when the logger lets `.info` through.
    private func traceCompatibility(_ d: StoreDescription) {
        guard logger.logLevel <= .info, d.type.isFileBased, let url = d.url, FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            let check = try StoreCompatibility.check(d.type, at: url, model: model, configuration: d.configuration)
            logger.info("stored model compared", metadata: [
                "path": "\(url.path)", "configuration": "\(d.configuration)", "verdict": "\(check.report.verdict.rawValue)",
                "basis": "\(check.basis.rawValue)", "changes": "\(check.report.summary)",
            ])
        } catch {
            logger.info("stored model not compared", metadata: ["path": "\(url.path)", "reason": "\(error.localizedDescription)"])
        }
    }

    /// The files of a store: a SQLite file with its sidecars and its support folder (external binary data),
    /// or an LMDB directory.
    package static func storeFiles(_ url: URL, type: StoreType) -> [URL] {
        StoreFileSet.files(of: url, type: type)
    }

    private static func removeStoreFiles(_ url: URL, type: StoreType, configuration: String) throws {
        for file in storeFiles(url, type: type) {
            do {
                try FileManager.default.removeItem(at: file)
            } catch {
                throw StoreError.openFailed(path: url.path, configuration: configuration, reason: "cannot delete \(file.path) to recreate the disposable store: \(error)")
            }
        }
    }

    /// Moves the store's files to `<name>.quarantined-<UTC time>.<ext>` (sidecars keep their suffixes, so the
    /// quarantined copy still opens) and returns the new location of the store.
    private static func quarantine(_ url: URL, type: StoreType, configuration: String) throws -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss"
        let stem = url.deletingPathExtension().lastPathComponent
        let ext = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        let directory = url.deletingLastPathComponent()
        var target = directory.appendingPathComponent("\(stem).quarantined-\(formatter.string(from: Date()))\(ext)")
        var n = 1
        while FileManager.default.fileExists(atPath: target.path) {
            n += 1
            target = directory.appendingPathComponent("\(stem).quarantined-\(formatter.string(from: Date()))-\(n)\(ext)")
        }
        for file in storeFiles(url, type: type) {
            // The support folder takes the quarantined store's name; sidecars keep their suffixes.
            let destination = StoreFileSet.counterpart(of: file, store: url, at: target, type: type).path
            do {
                try FileManager.default.moveItem(atPath: file.path, toPath: destination)
            } catch {
                throw StoreError.openFailed(path: url.path, configuration: configuration, reason: "cannot move \(file.path) into quarantine: \(error)")
            }
        }
        return target
    }
}

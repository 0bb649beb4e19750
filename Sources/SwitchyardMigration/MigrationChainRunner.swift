import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SwitchyardContext
import SwitchyardCoordinator
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardSQLite
import SwitchyardStores

// MARK: - MigrationChainRunner

/// Brings one store from the chain version that wrote it to the chain's last version, a step at a time,
/// before the coordinator opens it. Inferred steps migrate in place in one transaction; custom steps write a
/// new store beside the old one (`<store>.migrating`, or for PostgreSQL the schema `<schema>_migrating`) and
/// put it in the old one's place (SQLite: rename the database file after both are checkpointed; LMDB: rename
/// `data.mdb`; PostgreSQL: move the tables in one transaction), so a kill at any moment leaves the store fully
/// at one version of the chain.
package struct MigrationChainRunner {
    package let chain: MigrationChain

    /// Migrates the described store up to the chain's last version. A store the chain does not know (or a
    /// memory, missing or read-only store) is left to the coordinator's usual inferred migration.
    package func run(
        _ description: StoreDescription, migrationProgress: MigrationProgressHandler?,
        events: (@Sendable (StoreLoadEvent) -> Void)?
    ) throws -> CompatibilityReport? {
        guard description.type != .memory, !description.options.readOnly, let url = description.url else { return nil }
        let temporary = Self.temporaryURL(for: url, type: description.type)
        Self.remove(temporary, type: description.type, options: description.options)
        guard try StoreFileSet.storeExists(at: url, type: description.type, options: description.options) else { return nil }
        let configuration = description.configuration
        let path = StoreDescription.displayLocation(type: description.type, url: url, configuration: configuration)
        let state: (metadata: StoreMetadata, model: ObjectModel?)
        switch description.type {
        case .sqlite: state = try SQLiteStore.storedState(at: url, configuration: configuration)
        case .lmdb: state = try LMDBStore.storedState(at: url, configuration: configuration)
        case .postgreSQL:
            // Opened with no entities, it reads nothing but its metadata and model cache; with the description's
            // connection options (TLS, pool size), read-only.
            var probe = description.options
            (probe.readOnly, probe.disposable, probe.persistentHistory) = (true, false, false)
            let store = try ServerStoreOpeners.opener(for: .postgreSQL, url: url, configuration: configuration)(
                url, try ObjectModel(entities: []), ConfigurationDescription.defaultName, probe, nil)
            state = (try store.metadata(), try store.storedModel())
        case .memory: return nil
        }
        guard let start = chain.versionIndex(hashes: state.metadata.versionHashes, storedModel: state.model, configuration: configuration),
            start < chain.versions.count - 1
        else { return nil }
        // What every step changed, in order (an inferred step's store reports its own; a custom step's is the
        // difference between its two versions).
        var changes: [EntityChange] = []
        for index in start..<(chain.versions.count - 1) {
            let (from, to) = (chain.versions[index], chain.versions[index + 1])
            guard from.model.configurationNames.contains(configuration), to.model.configurationNames.contains(configuration) else {
                throw MigrationError.stepFailed(
                    path: path, configuration: configuration, from: from.name, to: to.name,
                    reason: "configuration \(configuration) is missing from one of the two versions")
            }
            let custom = chain.customStep(to: to.name)
            events?(.migrationStep(path: path, configuration: configuration, from: from.name, to: to.name, custom: custom != nil))
            do {
                if let custom {
                    try runCustom(custom, description, from: from, to: to, temporary: temporary, progress: migrationProgress)
                    changes += ModelDiff.compare(from: from.model, to: to.model, configuration: configuration).entities
                } else {
                    // The store's own in-place migration, to this version instead of the last.
                    let store = try Self.open(description, model: to.model, at: url, progress: migrationProgress)
                    changes += ((store as? any MigratingStore)?.migrationReport?.entities ?? [])
                }
            } catch let error as StoreError {
                throw error
            } catch let error as MigrationError {
                if case .stepFailed = error { throw error }
                throw MigrationError.stepFailed(
                    path: path, configuration: configuration, from: from.name, to: to.name, reason: error.localizedDescription)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw MigrationError.stepFailed(
                    path: path, configuration: configuration, from: from.name, to: to.name, reason: "\(error)")
            }
        }
        return CompatibilityReport(configuration: configuration, entities: changes)
    }

    // MARK: - Custom steps

    private func runCustom(
        _ step: CustomMigration, _ description: StoreDescription, from: ModelVersion, to: ModelVersion, temporary: URL,
        progress: MigrationProgressHandler?
    ) throws {
        guard let url = description.url else { return }
        let old = try Self.open(description, model: from.model, at: url, progress: nil)
        if let willMigrate = step.willMigrate { try Self.withContext(old, model: from.model, willMigrate) }
        let new: BulkCopyStore
        do {
            new = try Self.open(description, model: to.model, at: temporary, progress: nil)
        } catch {
            Self.remove(temporary, type: description.type, options: description.options)
            throw error
        }
        do {
            try CustomMigrationRunner(
                old: old, new: new, from: from, to: to, configuration: description.configuration, step: step, progress: progress
            ).run()
            let oldMetadata = try old.metadata()
            var metadata = try new.metadata()
            metadata.uuid = oldMetadata.uuid
            metadata.additional = oldMetadata.additional.merging(metadata.additional) { _, new in new }
            try new.setMetadata(metadata)
            if let didMigrate = step.didMigrate { try Self.withContext(new, model: to.model, didMigrate) }
            try new.closeFiles()
            try old.closeFiles()
            try Self.replace(url, with: temporary, type: description.type, options: description.options)
        } catch {
            try? new.closeFiles()
            Self.remove(temporary, type: description.type, options: description.options)
            throw error
        }
    }

    /// Runs a hook on an object context over `store` alone, saving what it left unsaved.
    private static func withContext(
        _ store: BulkCopyStore, model: ObjectModel, _ body: @Sendable (ObjectContext) throws -> Void
    ) throws {
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(store)
        let context = ObjectContext(coordinator: coordinator)
        try body(context)
        if context.hasChanges { try context.save() }
        try coordinator.removeStore(store)
    }

    // MARK: - Files

    package static func open(_ description: StoreDescription, model: ObjectModel, at url: URL, progress: MigrationProgressHandler?) throws -> BulkCopyStore {
        var options = description.options
        options.readOnly = false
        switch description.type {
        case .lmdb:
            return try LMDBStore(url: url, model: model, configuration: description.configuration, options: options, migrationProgress: progress)
        case .postgreSQL:
            let store = try ServerStoreOpeners.opener(for: .postgreSQL, url: url, configuration: description.configuration)(
                url, model, description.configuration, options, progress)
            guard let bulk = store as? BulkCopyStore else {
                throw MigrationError.invalidChain(reason: "\(store.displayPath): this store kind cannot take a custom migration step")
            }
            return bulk
        default:
            return try SQLiteStore(url: url, model: model, configuration: description.configuration, options: options, migrationProgress: progress)
        }
    }

    /// Where a custom step writes the new store: `<store>.migrating` beside a file, `<schema>_migrating` beside a
    /// PostgreSQL schema.
    package static func temporaryURL(for url: URL, type: StoreType = .sqlite) -> URL {
        if type == .postgreSQL { return ServerStoreLocations.sibling(of: url, type: type, suffix: "_migrating") }
        return URL(fileURLWithPath: url.path + ".migrating")
    }

    package static func remove(_ url: URL, type: StoreType, options: StoreOptions = .default) {
        StoreFileSet.remove(at: url, type: type, options: options)
    }

    /// Puts the closed new store in the old one's place with one `rename(2)`: the SQLite file (the old file's
    /// sidecars removed first, as both stores were checkpointed, so they never apply to the new file), or
    /// LMDB's `data.mdb` inside the store directory; a PostgreSQL schema's tables, connecting with `options`.
    package static func replace(_ url: URL, with temporary: URL, type: StoreType, options: StoreOptions = .default) throws {
        if type == .postgreSQL {
            // The new schema's tables take the old ones' place in one transaction.
            return try ServerStoreOpeners.locations(for: type, url: url, configuration: "").replace(url, temporary, options)
        }
        let (source, target): (String, String)
        var adopted: Set<String>?
        if type == .lmdb {
            (source, target) = (temporary.appendingPathComponent("data.mdb").path, url.appendingPathComponent("data.mdb").path)
        } else {
            for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            (source, target) = (temporary.path, url.path)
            // The new store's external data files join the old store's first, so either store finds its own.
            do {
                adopted = try SQLiteExternalData.adoptFiles(from: temporary, into: url)
            } catch {
                throw MigrationError.invalidChain(reason: "cannot move the external data files of \(temporary.path): \(error)")
            }
        }
        guard rename(source, target) == 0 else {
            throw MigrationError.invalidChain(reason: "cannot rename \(source) to \(target): \(String(cString: strerror(errno)))")
        }
        if let adopted { SQLiteExternalData.removeFiles(of: url, except: adopted) }
        remove(temporary, type: type)
    }
}

// MARK: - Migration chains
import SwitchyardCoordinator

extension StoreCoordinator {
    /// Makes every store added from now on migrate through `chain` (see `MigrationChain`) before it opens;
    /// nil goes back to inferring one migration from the stored model to this coordinator's model.
    ///
    /// The chain's last version must be this coordinator's model (the same version hashes), else
    /// `MigrationError.chainDoesNotEndAtModel`.
    public func setMigrationChain(_ chain: MigrationChain?) throws {
        guard let chain else {
            storePreparation.withLock { $0 = nil }
            return
        }
        guard chain.current.model.versionHashes == model.versionHashes else {
            let mine = model.versionHashes, theirs = chain.current.model.versionHashes
            let differing = Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
            throw MigrationError.chainDoesNotEndAtModel(
                lastVersion: chain.current.name, reason: "entities that differ: \(differing.prefix(5).joined(separator: ", "))")
        }
        let runner = MigrationChainRunner(chain: chain)
        storePreparation.withLock {
            $0 = { description, migrationProgress, events in
                try runner.run(description, migrationProgress: migrationProgress, events: events)
            }
        }
    }
}

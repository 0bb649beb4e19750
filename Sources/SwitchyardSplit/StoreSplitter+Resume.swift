import Foundation
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - Finishing an interrupted split

extension StoreSplitter {
    /// Metadata key: the run that wrote an output (a UUID per `run`).
    package static let runMetadataKey = "SwitchyardSplitRun"
    /// Metadata key: what the output is an output of (source store, configurations, paths and types), so a
    /// rerun of the same command recognizes the outputs of an earlier run.
    package static let planMetadataKey = "SwitchyardSplitPlan"

    /// The fingerprint stored under `planMetadataKey`: the source's path and store UUID, and every
    /// destination's configuration, final path and type.
    package func planFingerprint(_ plan: SplitPlan) -> String {
        var text = "\(plan.source.standardizedFileURL.path)\n\(source.identifier.uuidString)\n"
        for destination in plan.destinations {
            text += "\(destination.configuration)\t\(destination.type.isFileBased ? destination.url.standardizedFileURL.path : destination.displayPath)\t\(destination.type.rawValue)\n"
        }
        return SHA256.hash(Data(text.utf8)).hexString
    }

    /// The split marks in a store's metadata, nil when it has none or cannot be read.
    package static func splitMarks(_ url: URL, type: StoreType, configuration: String) -> (run: String, plan: String)? {
        let metadata: StoreMetadata?
        switch type {
        case .lmdb: metadata = try? LMDBStore.storedState(at: url, configuration: configuration).metadata
        case .postgreSQL:
            metadata = try? ServerStoreOpeners.opener(for: type, url: url, configuration: configuration)(
                url, try ObjectModel(entities: []), ConfigurationDescription.defaultName, .readOnly, nil).metadata()
        default: metadata = try? SQLiteStore.storedState(at: url, configuration: configuration).metadata
        }
        guard let metadata,
            case .string(let run)? = metadata.additional[runMetadataKey],
            case .string(let plan)? = metadata.additional[planMetadataKey]
        else { return nil }
        return (run, plan)
    }

    /// The run to finish when a previous run of this same plan was killed while renaming its outputs into
    /// place: every final output that exists carries that run's marks, at least one is missing, and each
    /// missing one waits, verified, under its temporary name with the same marks (renames start only after
    /// every output was verified). Nil otherwise.
    package func interruptedRun(_ plan: SplitPlan) throws -> String? {
        let fingerprint = planFingerprint(plan)
        var run: String?
        var missing = 0
        for destination in plan.destinations {
            let atFinal = try Self.exists(destination.url, type: destination.type)
            let url = atFinal ? destination.url : destination.temporaryURL
            if !atFinal {
                missing += 1
                guard try Self.exists(url, type: destination.type) else { return nil }
            }
            guard let marks = Self.splitMarks(url, type: destination.type, configuration: destination.configuration), marks.plan == fingerprint,
                run == nil || run == marks.run
            else { return nil }
            run = marks.run
        }
        return missing > 0 && missing < plan.destinations.count ? run : nil
    }

    /// Renames the interrupted run's remaining outputs into place and reports what the outputs hold (rows
    /// counted, links counted and checksummed, from the final files).
    package func finishInterruptedRun(_ plan: SplitPlan, started: Date, batchSize: Int) throws -> SplitReport {
        for destination in plan.destinations where !(try Self.exists(destination.url, type: destination.type)) {
            try Self.moveIntoPlace(destination)
        }
        var results = [CopyResult](repeating: CopyResult(), count: plan.entities.count)
        var links = [LinkResult](repeating: LinkResult(), count: plan.links.count)
        for (index, destination) in plan.destinations.enumerated() {
            let store = try Self.openOutput(destination, at: destination.url, model: targetModel)
            defer { try? (store as? BulkCopyStore)?.closeFiles() }
            for (copyIndex, copy) in plan.entities.enumerated() where copy.destination == index {
                results[copyIndex].rows = try store.count(
                    StoreFetchRequest(entityName: copy.targetEntity, includesSubentities: false))
            }
            for (linkIndex, link) in plan.links.enumerated() where link.destination == index {
                let counted = try linkChecksum(linkIndex, plan: plan, store: store, batchSize: batchSize)
                links[linkIndex] = LinkResult(links: counted.links, checksum: counted.checksum)
            }
        }
        return report(plan, results: results, links: links, seconds: Date().timeIntervalSince(started), verified: false)
    }
}

import Foundation
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - Verification

extension StoreSplitter {
    /// Reopens every temporary output read-only and compares row counts (and, with `content`, checksums) per
    /// entity with what was read from the source, `Z_MAX` with the source's and, with `content`, each copied
    /// relationship's links and positions (count and checksum) with the source's.
    package func verify(
        _ plan: SplitPlan, results: inout [CopyResult], links: inout [LinkResult], content: Bool, batchSize: Int
    ) throws {
        var mismatches: [String] = []
        for (index, destination) in plan.destinations.enumerated() {
            let store: PersistentStore
            do {
                store = try Self.openOutput(destination, at: destination.temporaryURL, model: targetModel)
            } catch {
                throw SplitError.verification(["\(SplitDestination.displayPath(destination.temporaryURL, type: destination.type)): cannot reopen the output: \(error)"])
            }
            defer { try? (store as? BulkCopyStore)?.closeFiles() }
            for (copyIndex, copy) in plan.entities.enumerated() where copy.destination == index {
                let copied = results[copyIndex].rows
                let count = try (store as? BulkCopyStore)?.walkingCount(entityName: copy.targetEntity)
                    ?? store.count(StoreFetchRequest(entityName: copy.targetEntity, includesSubentities: false))
                if count != copy.rowCount || copied != copy.rowCount {
                    mismatches.append(
                        "\(copy.targetEntity) in \(destination.configuration): source has \(copy.rowCount) rows, "
                            + "copied \(copied), output holds \(count)")
                    continue
                }
                guard content, let bulk = store as? BulkCopyStore,
                    let entity = targetModel.entity(named: copy.targetEntity)
                else { continue }
                // Rows copied inside SQLite never passed through here: checksum the source's rows as converted.
                let written = try results[copyIndex].checksum
                    ?? sourceChecksum(plan.mappings[copyIndex], plan: plan, batchSize: batchSize)
                results[copyIndex].checksum = written
                var actual = SplitChecksum()
                var after: Int64?
                while true {
                    let batch = try bulk.rowBatch(entityName: copy.targetEntity, after: after, limit: 5_000)
                    guard let last = batch.last else { break }
                    for row in batch { actual.add(row, entity: entity) }
                    after = last.primaryKey
                }
                if actual != written {
                    mismatches.append(
                        "\(copy.targetEntity) in \(destination.configuration): content checksum \(actual.hex) over \(actual.rows) rows, "
                            + "source \(written.hex) over \(written.rows) rows")
                }
            }
            if content {
                for (linkIndex, link) in plan.links.enumerated() where link.destination == index {
                    // Links copied inside SQLite never passed through here: checksum the source's.
                    let expected = try links[linkIndex].checksum.map { (links[linkIndex].links, $0) }
                        ?? linkChecksum(linkIndex, plan: plan, store: source, batchSize: batchSize)
                    links[linkIndex].checksum = expected.1
                    let actual = try linkChecksum(linkIndex, plan: plan, store: store, batchSize: batchSize)
                    if actual.checksum != expected.1 || actual.links != expected.0 {
                        mismatches.append(
                            "\(link.entity).\(link.relationship) in \(destination.configuration): \(actual.links) links, "
                                + "checksum \(actual.checksum.hex) over \(actual.checksum.rows) members; source \(expected.0) links, "
                                + "checksum \(expected.1.hex) over \(expected.1.rows) members")
                    }
                }
            }
            if let bulk = store as? BulkCopyStore {
                let maxima = try bulk.primaryKeyMaxima()
                for (root, expected) in plan.primaryKeyMaxima[index] where (maxima[root] ?? 0) != expected {
                    mismatches.append("\(root) in \(destination.configuration): Z_MAX is \(maxima[root] ?? 0), source has \(expected)")
                }
            }
        }
        if !mismatches.isEmpty { throw SplitError.verification(mismatches) }
    }

    /// The checksum of the source's rows of one entity as the split converts them, read in batches.
    private func sourceChecksum(_ mapping: EntityMapping, plan: SplitPlan, batchSize: Int) throws -> SplitChecksum {
        var checksum = SplitChecksum()
        var after: Int64?
        while true {
            let batch = try readBatch(mapping.sourceEntity.name, after: after, offset: checksum.rows, limit: batchSize)
            guard let last = batch.last else { break }
            for row in try convert(batch, mapping: mapping, plan: plan) { checksum.add(row, entity: mapping.targetEntity) }
            after = last.primaryKey
            if batch.count < batchSize { break }
        }
        return checksum
    }

    /// Opens an output read-only with the target model and its configuration.
    package static func openOutput(_ destination: SplitDestination, at url: URL, model: ObjectModel) throws -> PersistentStore {
        switch destination.type {
        case .lmdb: return try LMDBStore(url: url, model: model, configuration: destination.configuration, options: .readOnly)
        case .postgreSQL:
            return try ServerStoreOpeners.opener(for: .postgreSQL, url: url, configuration: destination.configuration)(
                url, model, destination.configuration, .readOnly, nil)
        default: return try SQLiteStore(url: url, model: model, configuration: destination.configuration, options: .readOnly)
        }
    }

    // MARK: - Report

    package func report(_ plan: SplitPlan, results: [CopyResult], links: [LinkResult], seconds: Double, verified: Bool) -> SplitReport {
        let outputs = plan.destinations.enumerated().map { index, destination in
            SplitReport.Output(
                configuration: destination.configuration, path: destination.displayPath, type: destination.type,
                entities: plan.entities.enumerated().filter { $0.element.destination == index }.map { i, copy in
                    SplitReport.EntityResult(
                        sourceEntity: copy.sourceEntity, targetEntity: copy.targetEntity, rows: results[i].rows,
                        checksum: results[i].checksum?.hex)
                },
                links: plan.links.enumerated().filter { $0.element.destination == index }.map { i, link in
                    SplitReport.LinkResult(
                        entity: link.entity, relationship: link.relationship, links: links[i].links, checksum: links[i].checksum?.hex)
                },
                primaryKeyMaxima: plan.primaryKeyMaxima[index], raisedPrimaryKeyMaxima: plan.raisedPrimaryKeyMaxima[index],
                externalDataFiles: destination.type == .sqlite
                    ? SQLiteExternalData(store: destination.url, configuration: destination.configuration).fileCount() : 0)
        }
        let rows = results.reduce(0) { $0 + $1.rows }
        return SplitReport(
            source: plan.source.path, sourceType: plan.sourceType, sourceModel: plan.sourceModelOrigin, outputs: outputs,
            rowsCopied: rows, seconds: seconds, rowsPerSecond: seconds > 0 ? Double(rows) / seconds : 0,
            contentVerified: verified, conversions: plan.conversions, skipped: plan.skipped, warnings: plan.warnings,
            peakMemoryBytes: Self.peakMemoryBytes())
    }

    /// `VmHWM` from `/proc/self/status`: the peak resident memory of this process since it started.
    package static func peakMemoryBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }
}

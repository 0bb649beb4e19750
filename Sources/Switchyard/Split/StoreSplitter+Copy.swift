import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Running a plan

extension StoreSplitter {
    /// Copies the plan's rows in batches into temporary outputs, copies `Z_MAX` and the source's app metadata
    /// keys, closes the outputs, verifies them (row counts always; content checksums with
    /// `options.verifyContent`) and only then renames each into place. On any failure the temporary outputs
    /// are removed and nothing appears under a final name.
    public func run(
        _ plan: SplitPlan, options: SplitOptions = SplitOptions(), progress: ((SplitProgress) -> Void)? = nil
    ) throws -> SplitReport {
        let started = Date()
        for destination in plan.destinations where Self.exists(destination.url) && !options.force {
            throw SplitError.outputExists(path: destination.url.path)
        }
        var outputs: [BulkCopyStore?] = []
        do {
            for destination in plan.destinations {
                Self.remove(destination.temporaryURL, type: destination.type)
                outputs.append(try Self.create(destination, at: destination.temporaryURL, model: targetModel))
            }
            let checksums = try copyRows(plan, into: outputs.map { $0! }, batchSize: max(1, options.batchSize), progress: progress)
            for (index, output) in outputs.enumerated() {
                guard let output else { continue }
                try output.setPrimaryKeyMaxima(plan.primaryKeyMaxima[index])
                var metadata = try output.metadata()
                metadata.additional.merge(plan.metadataKeys) { _, source in source }
                try output.setMetadata(metadata)
                try output.closeFiles()
                outputs[index] = nil
            }
            try verify(plan, checksums: checksums, content: options.verifyContent)
            for destination in plan.destinations { try Self.moveIntoPlace(destination) }
            let seconds = Date().timeIntervalSince(started)
            return report(plan, checksums: checksums, seconds: seconds, verified: options.verifyContent)
        } catch {
            for output in outputs { try? output?.closeFiles() }
            for destination in plan.destinations { Self.remove(destination.temporaryURL, type: destination.type) }
            if let error = error as? SplitError { throw error }
            throw SplitError.copy(reason: "\(error)")
        }
    }

    // MARK: - Copy

    /// Streams each entity in primary-key batches: read a batch, convert it, save it in one transaction.
    private func copyRows(
        _ plan: SplitPlan, into outputs: [BulkCopyStore], batchSize: Int, progress: ((SplitProgress) -> Void)?
    ) throws -> [SplitChecksum] {
        var checksums = [SplitChecksum](repeating: SplitChecksum(), count: plan.entities.count)
        var copied = 0
        let total = plan.rowCount
        for (index, (copy, mapping)) in zip(plan.entities, plan.mappings).enumerated() {
            let output = outputs[copy.destination]
            var after: Int64?
            var entityCopied = 0
            progress?(SplitProgress(
                entity: copy.targetEntity, configuration: copy.configuration, entityRowsCopied: 0,
                entityRowCount: copy.rowCount, rowsCopied: copied, rowCount: total))
            while true {
                let batch = try readBatch(copy.sourceEntity, after: after, offset: entityCopied, limit: batchSize)
                guard let last = batch.last else { break }
                let rows = try convert(batch, mapping: mapping, plan: plan)
                try output.save(StoreChangeSet(inserts: rows))
                for row in rows { checksums[index].add(row, entity: mapping.targetEntity) }
                after = last.primaryKey
                entityCopied += batch.count
                copied += batch.count
                progress?(SplitProgress(
                    entity: copy.targetEntity, configuration: copy.configuration, entityRowsCopied: entityCopied,
                    entityRowCount: copy.rowCount, rowsCopied: copied, rowCount: total))
                if batch.count < batchSize { break }
            }
        }
        return checksums
    }

    /// A keyset batch where the store offers one, else an offset page (stores without `BulkCopyStore`).
    private func readBatch(_ entity: String, after: Int64?, offset: Int, limit: Int) throws -> [StoreRow] {
        if let bulk = source as? BulkCopyStore {
            return try bulk.rowBatch(entityName: entity, after: after, limit: limit)
        }
        return try source.fetch(StoreFetchRequest(
            entityName: entity, fetchLimit: limit, fetchOffset: offset, includesSubentities: false))
    }

    /// Source rows as target rows: renamed attributes, defaults for new ones, to-ones kept inside the store,
    /// crossing to-ones written as the primary key or the destination's key attribute.
    private func convert(_ batch: [StoreRow], mapping: EntityMapping, plan: SplitPlan) throws -> [StoreRow] {
        var keyed: [RowReference: StoreRow] = [:]
        if mapping.crossings.contains(where: { $0.kind == .key }) {
            var references: Set<RowReference> = []
            for row in batch {
                for crossing in mapping.crossings where crossing.kind == .key {
                    if let reference = row.toOne[crossing.sourceRelationship] { references.insert(reference) }
                }
            }
            for row in try source.rows(for: Array(references)) { keyed[row.reference] = row }
        }
        let target = mapping.targetEntity
        return try batch.map { row in
            var values: [String: AttributeValue] = [:]
            values.reserveCapacity(mapping.attributes.count + mapping.crossings.count)
            for attribute in mapping.attributes {
                guard let name = attribute.source else {
                    if let value = attribute.target.defaultValue, !value.isNull { values[attribute.target.name] = value }
                    continue
                }
                guard let value = row.values[name], !value.isNull else { continue }
                if attribute.convert {
                    guard let converted = value.normalized(for: attribute.target.type) else {
                        throw SplitError.copy(reason:
                            "\(row.entityName)/p\(row.primaryKey).\(name): value \(value) cannot become \(target.name).\(attribute.target.name) "
                                + "of type \(attribute.target.type.rawValue)")
                    }
                    values[attribute.target.name] = converted
                } else {
                    values[attribute.target.name] = value
                }
            }
            for crossing in mapping.crossings {
                guard let reference = row.toOne[crossing.sourceRelationship] else { continue }
                switch crossing.kind {
                case .primaryKey:
                    values[crossing.target.name] = .integer(reference.primaryKey)
                case .key:
                    if let key = crossing.sourceKey, let value = keyed[reference]?.values[key], !value.isNull {
                        values[crossing.target.name] = value.normalized(for: crossing.target.type) ?? value
                    }
                }
            }
            var toOne: [String: RowReference] = [:]
            for relationship in mapping.toOnes {
                guard let reference = row.toOne[relationship.source] else { continue }
                toOne[relationship.target] = RowReference(
                    entityName: plan.entityNames[reference.entityName] ?? reference.entityName, primaryKey: reference.primaryKey)
            }
            return StoreRow(entityName: target.name, primaryKey: row.primaryKey, version: row.version, values: values, toOne: toOne)
        }
    }

    // MARK: - Files

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    /// Removes a store's file with its sidecars, or its directory.
    static func remove(_ url: URL, type: StoreType) {
        if type == .lmdb {
            try? FileManager.default.removeItem(at: url)
        } else {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
    }

    /// Renames the verified temporary output to its final name. An SQLite file replaces its predecessor with
    /// one `rename(2)`; the old file's sidecars are removed first so they never apply to the new file.
    static func moveIntoPlace(_ destination: SplitDestination) throws {
        let temporary = destination.temporaryURL.path, final = destination.url.path
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        if destination.type == .lmdb {
            if exists(destination.url) { try? FileManager.default.removeItem(at: destination.url) }
        } else {
            for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: final + suffix) }
        }
        guard rename(temporary, final) == 0 else {
            throw SplitError.copy(reason: "cannot rename \(temporary) to \(final): \(String(cString: strerror(errno)))")
        }
    }
}

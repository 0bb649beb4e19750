import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - Running a plan

extension StoreSplitter {
    /// Copies the plan's rows in batches into temporary outputs (a PostgreSQL output builds its indexes after
    /// the rows are in), then the links and positions of its to-many
    /// relationships, copies `Z_MAX` and the source's app metadata keys, closes the outputs, verifies them (row
    /// counts always; content and link checksums with `options.verifyContent`) and only then renames each into
    /// place. On any failure the temporary outputs
    /// are removed and nothing appears under a final name. Each output's metadata names the run and the plan
    /// (`SwitchyardSplitRun`, `SwitchyardSplitPlan`): when a run was killed between its renames, running the
    /// same plan again finishes those renames instead of failing with `outputExists`.
    public func run(
        _ plan: SplitPlan, options: SplitOptions = SplitOptions(), progress: ((SplitProgress) -> Void)? = nil
    ) throws -> SplitReport {
        let started = Date()
        // A rerun after a kill between the renames finishes that run; other outputs need --force.
        if try checkOutputs(plan, force: options.force) {
            return try finishInterruptedRun(plan, started: started, batchSize: max(1, options.batchSize))
        }
        let runMarks: [String: PropertyListValue] = [
            Self.runMetadataKey: .string(UUID().uuidString), Self.planMetadataKey: .string(planFingerprint(plan)),
        ]
        var outputs: [BulkCopyStore?] = []
        do {
            let naming = joinTableNaming(plan)
            for (index, destination) in plan.destinations.enumerated() {
                Self.remove(destination.temporaryURL, type: destination.type)
                let output: BulkCopyStore
                do {
                    output = try Self.create(destination, at: destination.temporaryURL, model: targetModel, joinTablesNamedBy: naming[index])
                } catch let error as StoreError {
                    throw SplitError.outputUnavailable(reason: "\(error)")
                }
                outputs.append(output)
                try output.deferIndexes()
            }
            var results = try copyRows(plan, into: outputs.map { $0! }, batchSize: max(1, options.batchSize), progress: progress)
            // Links update rows by primary key: the indexes are back before them.
            for output in outputs { try output?.buildDeferredIndexes() }
            var linkResults = try copyLinks(plan, into: outputs.map { $0! }, batchSize: max(1, options.batchSize))
            for (index, output) in outputs.enumerated() {
                guard let output else { continue }
                try output.setPrimaryKeyMaxima(plan.primaryKeyMaxima[index])
                var metadata = try output.metadata()
                metadata.additional.merge(plan.metadataKeys) { _, source in source }
                metadata.additional.merge(runMarks) { _, mark in mark }
                try output.setMetadata(metadata)
                try output.closeFiles()
                outputs[index] = nil
            }
            try verify(
                plan, results: &results, links: &linkResults, content: options.verifyContent, batchSize: max(1, options.batchSize))
            for destination in plan.destinations { try Self.moveIntoPlace(destination) }
            let seconds = Date().timeIntervalSince(started)
            return report(plan, results: results, links: linkResults, seconds: seconds, verified: options.verifyContent)
        } catch {
            for output in outputs { try? output?.closeFiles() }
            for destination in plan.destinations { Self.remove(destination.temporaryURL, type: destination.type) }
            if let error = error as? SplitError { throw error }
            throw SplitError.copy(reason: "\(error)")
        }
    }

    // MARK: - Copy

    /// What copying one entity produced: rows written and, where the rows passed through this process, the
    /// content checksum of what was written.
    package struct CopyResult {
        package var rows = 0
        package var checksum: SplitChecksum?

        package init(rows: Int = 0, checksum: SplitChecksum? = nil) {
            self.rows = rows
            self.checksum = checksum
        }
    }

    /// True when `entity` has an attribute in Core Data's external storage format in `store`: its rows go
    /// through the decoding copy, so the values (and the files they name) are read and written again.
    package static func hasExternalData(_ entity: String, in store: SQLiteStore) -> Bool {
        store.schema.entities[entity]?.attributes.contains(where: \.isExternal) == true
    }

    /// Copies entity by entity: SQLite to SQLite without decoding rows (`SQLiteStore.copyRows`) where every
    /// attribute keeps its type, else streaming primary-key batches (read and convert here, each saved in one
    /// transaction by a `SplitWriter` while the next batch is read).
    private func copyRows(
        _ plan: SplitPlan, into outputs: [BulkCopyStore], batchSize: Int, progress: ((SplitProgress) -> Void)?
    ) throws -> [CopyResult] {
        var results = [CopyResult](repeating: CopyResult(), count: plan.entities.count)
        var copied = 0
        let total = plan.rowCount
        for (index, (copy, mapping)) in zip(plan.entities, plan.mappings).enumerated() {
            let output = outputs[copy.destination]
            func report(_ entityCopied: Int) {
                progress?(SplitProgress(
                    entity: copy.targetEntity, configuration: copy.configuration, entityRowsCopied: entityCopied,
                    entityRowCount: copy.rowCount, rowsCopied: copied + entityCopied, rowCount: total))
            }
            report(0)
            if let from = source as? SQLiteStore, let to = output as? SQLiteStore, mapping.attributes.allSatisfy({ !$0.convert }),
                !Self.hasExternalData(copy.sourceEntity, in: from), !Self.hasExternalData(copy.targetEntity, in: to)
            {
                let rows = try to.copyRows(
                    Self.bulkSpec(mapping, plan: plan), from: from, batchSize: max(batchSize, 50_000), progress: report)
                results[index].rows = rows
                copied += rows
                continue
            }
            var checksum = SplitChecksum()
            var after: Int64?
            var entityCopied = 0
            var reported = 0
            // The output writes batch n on its own thread while this one reads and converts batch n + 1.
            let writer = SplitWriter()
            do {
                while true {
                    let batch = try readBatch(copy.sourceEntity, after: after, offset: entityCopied, limit: batchSize)
                    guard let last = batch.last else { break }
                    let rows = try convert(batch, mapping: mapping, plan: plan)
                    for row in rows { checksum.add(row, entity: mapping.targetEntity) }
                    after = last.primaryKey
                    entityCopied += batch.count
                    // Bounded resident memory when either side is LMDB: mapped pages read so far are let go.
                    let releasesPages = entityCopied / 50_000 != (entityCopied - batch.count) / 50_000
                    if releasesPages { (source as? BulkCopyStore)?.releaseCachedPages() }
                    try writer.submit {
                        try output.save(StoreChangeSet(inserts: rows))
                        if releasesPages { output.releaseCachedPages() }
                        return rows.count
                    }
                    if writer.written != reported {
                        reported = writer.written
                        report(reported)
                    }
                    if batch.count < batchSize { break }
                }
                try writer.finish()
            } catch {
                writer.waitForWrites()
                throw error
            }
            if reported != entityCopied { report(entityCopied) }
            results[index] = CopyResult(rows: entityCopied, checksum: checksum)
            copied += entityCopied
        }
        return results
    }

    /// The mapping as the SQLite bulk copy takes it.
    package static func bulkSpec(_ mapping: EntityMapping, plan: SplitPlan) -> BulkCopySpec {
        var attributes: [(target: String, value: BulkCopySpec.Value)] = []
        for attribute in mapping.attributes {
            if let source = attribute.source {
                attributes.append((attribute.target.name, .attribute(source)))
            } else if let value = attribute.target.defaultValue, !value.isNull {
                attributes.append((attribute.target.name, .constant(value)))
            }
        }
        for crossing in mapping.crossings {
            switch crossing.kind {
            case .primaryKey: attributes.append((crossing.target.name, .relatedKey(relationship: crossing.sourceRelationship)))
            case .key:
                attributes.append((crossing.target.name, .relatedAttribute(
                    relationship: crossing.sourceRelationship, attribute: crossing.sourceKey ?? "")))
            }
        }
        return BulkCopySpec(
            sourceEntity: mapping.sourceEntity.name, targetEntity: mapping.targetEntity.name, attributes: attributes,
            toOnes: mapping.toOnes.map { ($0.target, $0.source) }, entityNames: plan.entityNames)
    }

    /// A keyset batch where the store offers one, else an offset page (stores without `BulkCopyStore`).
    package func readBatch(_ entity: String, after: Int64?, offset: Int, limit: Int) throws -> [StoreRow] {
        try Self.keyBatch(source, entity, after: after, offset: offset, limit: limit)
    }

    /// Source rows as target rows: renamed attributes, defaults for new ones, to-ones kept inside the store,
    /// crossing to-ones written as the primary key or the destination's key attribute.
    package func convert(_ batch: [StoreRow], mapping: EntityMapping, plan: SplitPlan) throws -> [StoreRow] {
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

    /// Per destination, the target many-to-many ends whose join table the source names after them: an SQLite
    /// output keeps the source's choice of end (Core Data's is not always the one its model rule would pick)
    /// where both ends keep their entity numbers, so table and columns keep their names. Where the numbers
    /// change, the names change anyway and the target model's rule picks the end.
    package func joinTableNaming(_ plan: SplitPlan) -> [Set<String>] {
        var naming = [Set<String>](repeating: [], count: plan.destinations.count)
        guard let from = source as? SQLiteStore else { return naming }
        func sameNumber(_ source: RelationshipEnd, _ target: RelationshipEnd) -> Bool {
            from.schema.entities[source.entityName]?.number == targetModel.entity(named: target.entityName).map { Int64($0.entityNumber) }
        }
        for (link, mapping) in zip(plan.links, plan.linkMappings) where link.kind == .manyToMany {
            guard sameNumber(mapping.source, mapping.target), sameNumber(mapping.sourceInverse, mapping.targetInverse),
                let index = from.schema.joinByEnd[mapping.source.key]
            else { continue }
            let namer = from.schema.joinTables[index].first.key
            if namer == mapping.source.key {
                naming[link.destination].insert(mapping.target.key)
            } else if namer == mapping.sourceInverse.key {
                naming[link.destination].insert(mapping.targetInverse.key)
            }
        }
        return naming
    }

    // MARK: - Files

    /// Checks, writing nothing, that `run` can create the plan's outputs: none exists already unless `force`,
    /// and each one's folder can hold it (`checkFolder`). Returns `true` when the existing outputs were left by
    /// an interrupted run of this plan, which `run` then finishes instead. `run` checks this first; a dry run
    /// (`storesplit --dry-run`) asks too, so a plan it approves does not then fail preparing its outputs.
    /// Throws `SplitError.outputExists` or `.outputUnavailable`, naming the output.
    @discardableResult
    public func checkOutputs(_ plan: SplitPlan, force: Bool) throws -> Bool {
        if !force, try plan.destinations.contains(where: { try Self.exists($0.url, type: $0.type) }) {
            if try interruptedRun(plan) != nil { return true }
            for destination in plan.destinations where try Self.exists(destination.url, type: destination.type) {
                throw SplitError.outputExists(path: destination.displayPath)
            }
        }
        for destination in plan.destinations { try Self.checkFolder(of: destination) }
        return false
    }

    /// Whether a store is at `url`: a file or directory, or a server store's tables.
    package static func exists(_ url: URL, type: StoreType) throws -> Bool {
        do {
            return try StoreFileSet.storeExists(at: url, type: type)
        } catch {
            // A store error names the output already (without a password); anything else gets its name here.
            throw SplitError.outputUnavailable(
                reason: error is StoreError ? "\(error)" : "cannot look for a store at \(SplitDestination.displayPath(url, type: type)): \(error)")
        }
    }

    /// Refuses, before any output is created, one whose folder cannot hold it (missing, a file, read-only, no
    /// permission), with the reason the stores give for it (`DiskDiagnosis.folderProblem`), naming the final
    /// path and configuration rather than a temporary name. An LMDB output's missing folder is created by the
    /// store, so its nearest existing ancestor is judged; an SQLite file's folder must exist.
    package static func checkFolder(of destination: SplitDestination) throws {
        guard destination.url.isFileURL,
            let problem = DiskDiagnosis.folderProblem(
                destination.url.deletingLastPathComponent().path, creatable: destination.type == .lmdb, probing: true)
        else { return }
        throw SplitError.outputUnavailable(reason: "\(destination.displayPath) (configuration \(destination.configuration)): \(problem)")
    }

    /// Removes a store's file with its sidecars, or its directory, or a server store's tables.
    package static func remove(_ url: URL, type: StoreType) {
        StoreFileSet.remove(at: url, type: type)
    }

    /// Renames the verified temporary output to its final name. An SQLite file replaces its predecessor with
    /// one `rename(2)`; the old file's sidecars are removed first so they never apply to the new file. A server
    /// store's tables replace the final store's in one transaction.
    package static func moveIntoPlace(_ destination: SplitDestination) throws {
        if !destination.type.isFileBased {
            do {
                let locations = try ServerStoreOpeners.locations(for: destination.type, url: destination.url, configuration: destination.configuration)
                return try locations.replace(destination.url, destination.temporaryURL, .default)
            } catch {
                throw SplitError.copy(reason: "cannot put \(destination.displayPath) in place: \(error)")
            }
        }
        let temporary = destination.temporaryURL.path, final = destination.url.path
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        var adopted: Set<String>?
        if destination.type == .lmdb {
            if try exists(destination.url, type: .lmdb) { try? FileManager.default.removeItem(at: destination.url) }
        } else {
            for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: final + suffix) }
            // The external data files join the final name's folder first (an older output's files stay until
            // the rename), so whichever store a kill leaves under the final name finds its files.
            do {
                adopted = try SQLiteExternalData.adoptFiles(from: destination.temporaryURL, into: destination.url)
            } catch {
                throw SplitError.copy(reason: "cannot move the external data files of \(temporary): \(error)")
            }
        }
        guard rename(temporary, final) == 0 else {
            throw SplitError.copy(reason: "cannot rename \(temporary) to \(final): \(String(cString: strerror(errno)))")
        }
        if let adopted { SQLiteExternalData.removeFiles(of: destination.url, except: adopted) }
    }
}

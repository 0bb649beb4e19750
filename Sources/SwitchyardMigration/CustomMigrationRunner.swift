import Foundation
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - CustomMigrationRunner

/// Runs one `CustomMigration` from an open old store into a new, empty store of the next version: rows entity
/// by entity in primary-key batches (default copy, then the transform), then many-to-many links and ordered
/// positions, then clears to-ones that point at dropped rows, and sets `Z_MAX`. Memory holds one batch (plus
/// the references of dropped rows).
package struct CustomMigrationRunner {
    package let old: BulkCopyStore
    package let new: BulkCopyStore
    package let from: ModelVersion
    package let to: ModelVersion
    package let configuration: String
    package let step: CustomMigration
    package let progress: MigrationProgressHandler?

    private var oldEntities: [String: EntityDescription] = [:]
    private var newEntities: [EntityDescription] = []
    /// New entity name -> the old entity its rows come from.
    private var sources: [String: String] = [:]
    /// Old entity name -> new entity name, for references held by copied rows.
    private var renamed: [String: String] = [:]

    package init(
        old: BulkCopyStore, new: BulkCopyStore, from: ModelVersion, to: ModelVersion, configuration: String,
        step: CustomMigration, progress: MigrationProgressHandler?
    ) throws {
        (self.old, self.new, self.from, self.to) = (old, new, from, to)
        (self.configuration, self.step, self.progress) = (configuration, step, progress)
        let oldList = try from.model.entities(inConfiguration: configuration)
        for entity in oldList { oldEntities[entity.name] = entity }
        newEntities = try to.model.entities(inConfiguration: configuration)
        let newNames = Set(newEntities.map(\.name))
        for name in step.transforms.keys where !newNames.contains(name) {
            throw MigrationError.unknownEntity(version: to.name, configuration: configuration, entity: name)
        }
        let matching = RenameMatching(
            sources: oldList.map { ($0.name, $0.renamingIdentifier) }, targets: newEntities.map { ($0.name, $0.renamingIdentifier) })
        for entity in newEntities {
            if let explicit = step.transforms[entity.name]?.sourceEntity {
                guard oldEntities[explicit] != nil else {
                    throw MigrationError.unknownEntity(version: from.name, configuration: configuration, entity: explicit)
                }
                sources[entity.name] = explicit
            } else if let name = matching.sourceName(of: entity.name) {
                sources[entity.name] = name
            }
        }
        // References keep their primary keys, so they follow the entity that kept its name (else any taker).
        for (target, source) in sources.sorted(by: { $0.key < $1.key }) where renamed[source] == nil || target == source {
            renamed[source] = target
        }
        try checkKeys()
    }

    /// Copies everything, in this order: rows, links and orders, dangling to-ones, `Z_MAX`.
    package func run() throws {
        var maxima: [String: Int64] = [:]
        let oldMaxima = try old.primaryKeyMaxima()
        for entity in newEntities where entity.isRoot {
            let roots = Set(entity.selfAndDescendantNames.compactMap { sources[$0] }.compactMap { oldEntities[$0]?.rootName })
            maxima[entity.name] = roots.compactMap { oldMaxima[$0] }.max() ?? 0
        }
        // Keys for inserted rows come after every kept key.
        try new.setPrimaryKeyMaxima(maxima)
        var dropped = Set<RowReference>()
        for entity in newEntities where !entity.isAbstract {
            try copyRows(of: entity, dropped: &dropped)
        }
        for entity in newEntities where !entity.isAbstract {
            try copyLinksAndOrders(of: entity, dropped: dropped)
        }
        if !dropped.isEmpty {
            for entity in newEntities where !entity.isAbstract { try clearReferences(in: entity, to: dropped) }
        }
        var final = try new.primaryKeyMaxima()
        for (root, key) in try new.largestPrimaryKeys() where key > final[root] ?? 0 { final[root] = key }
        try new.setPrimaryKeyMaxima(final)
    }

    // MARK: - Rows

    private func copyRows(of entity: EntityDescription, dropped: inout Set<RowReference>) throws {
        guard let sourceName = sources[entity.name], let source = oldEntities[sourceName] else { return }
        let total = try old.walkingCount(entityName: sourceName)
        let served = Set(newEntities.map(\.name))
        var keyPool: [String: ClosedRange<Int64>] = [:]
        var after: Int64?
        var done = 0
        // Which old attribute and relationship each new one continues, decided once for the entity, not per row.
        let matching = (attributes: RenameMatching(attributesOf: source, entity), relationships: RenameMatching(relationshipsOf: source, entity))
        while true {
            let batch = try old.rowBatch(entityName: sourceName, after: after, limit: step.batchSize)
            guard let last = batch.last else { break }
            after = last.primaryKey
            var inserts: [StoreRow] = []
            for row in batch {
                let target = MigrationTargetObject(
                    versionName: to.name, entity: entity, row: defaultCopy(row, from: source, into: entity, matching: matching), model: to.model,
                    served: served,
                    allocateKey: { name in try allocate(name, pool: &keyPool) },
                    insertRow: { inserts.append($0) })
                try step.transforms[entity.name]?.body(
                    MigrationSourceObject(versionName: from.name, entity: source, row: row), target)
                if target.isDropped {
                    dropped.insert(target.reference)
                } else {
                    inserts.append(target.row)
                }
            }
            for row in inserts { try checkRequired(row) }
            try new.save(StoreChangeSet(inserts: inserts))
            done += batch.count
            if done / 50_000 != (done - batch.count) / 50_000 {
                // Bounded resident memory on LMDB: the pages both maps have read so far go back to the page cache.
                old.releaseCachedPages()
                new.releaseCachedPages()
            }
            try progress?(MigrationProgress(path: new.displayPath, entity: entity.name, done: done, total: total))
        }
    }

    /// The new row as the default copy fills it: same key and `Z_OPT`; the attributes each continues
    /// (`RenameMatching`) converted to the new type where they can be, else the new default; to-ones whose target
    /// entity survives. `matching` pairs `entity`'s attributes and relationships with `source`'s.
    private func defaultCopy(
        _ row: StoreRow, from source: EntityDescription, into entity: EntityDescription,
        matching: (attributes: RenameMatching, relationships: RenameMatching)
    ) -> StoreRow {
        var copy = StoreRow(entityName: entity.name, primaryKey: row.primaryKey, version: row.version)
        for attribute in entity.persistentAttributes {
            let former = matching.attributes.sourceName(of: attribute.name).flatMap(source.attribute(named:))
            guard let former, !former.isTransient else {
                if let value = attribute.defaultValue, !value.isNull { copy.values[attribute.name] = value }
                continue
            }
            let value = row[former.name]
            if value.isNull { continue }
            copy.values[attribute.name] = value.normalized(for: attribute.type) ?? attribute.defaultValue ?? .null
        }
        for relationship in entity.persistentToOneRelationships {
            let former = matching.relationships.sourceName(of: relationship.name)
                .flatMap(source.relationship(named:))
            guard let former, !former.isToMany, let reference = row.toOne[former.name],
                let target = renamed[reference.entityName],
                to.model.entity(target, isKindOf: relationship.destinationEntityName)
            else { continue }
            copy.toOne[relationship.name] = RowReference(entityName: target, primaryKey: reference.primaryKey)
        }
        return copy
    }

    private func checkRequired(_ row: StoreRow) throws {
        guard let entity = to.model.entity(named: row.entityName) else { return }
        for attribute in entity.persistentAttributes where !attribute.isOptional && row[attribute.name].isNull {
            throw MigrationError.missingValue(version: to.name, entity: entity.name, property: attribute.name, primaryKey: row.primaryKey)
        }
    }

    private func allocate(_ entityName: String, pool: inout [String: ClosedRange<Int64>]) throws -> Int64 {
        let root = to.model.entity(named: entityName)?.rootName ?? entityName
        if let range = pool[root], !range.isEmpty {
            pool[root] = range.count == 1 ? (range.upperBound + 1)...range.upperBound : (range.lowerBound + 1)...range.upperBound
            return range.lowerBound
        }
        let range = try new.allocatePrimaryKeys(for: root, count: 256)
        pool[root] = (range.lowerBound + 1)...range.upperBound
        return range.lowerBound
    }

    // MARK: - Links and orders

    /// Many-to-many links and ordered positions of `entity`'s to-many relationships that the old entity had
    /// (matched by `RenameMatching`), members mapped like to-ones and dropped rows left out.
    private func copyLinksAndOrders(of entity: EntityDescription, dropped: Set<RowReference>) throws {
        guard let sourceName = sources[entity.name], let source = oldEntities[sourceName] else { return }
        let matching = RenameMatching(relationshipsOf: source, entity)
        let relationships = entity.allRelationships.filter { relationship in
            guard relationship.isToMany, !relationship.isTransient else { return false }
            let inverse = relationship.inverseName.flatMap { to.model.entity(named: relationship.destinationEntityName)?.relationship(named: $0) }
            return relationship.isOrdered || inverse?.isToMany == true
        }
        guard !relationships.isEmpty else { return }
        var after: Int64?
        while true {
            let batch = try old.rowBatch(entityName: sourceName, after: after, limit: step.batchSize)
            guard let last = batch.last else { break }
            after = last.primaryKey
            let owners = batch.map(\.reference).filter { !dropped.contains(RowReference(entityName: entity.name, primaryKey: $0.primaryKey)) }
            var changes = StoreChangeSet()
            for relationship in relationships {
                let former = matching.sourceName(of: relationship.name)
                    .flatMap(source.relationship(named:))
                guard let former, former.isToMany, !owners.isEmpty else { continue }
                let inverse = relationship.inverseName.flatMap { to.model.entity(named: relationship.destinationEntityName)?.relationship(named: $0) }
                let members = try old.relatedReferences(of: owners, relationship: former.name)
                for owner in owners {
                    let newOwner = RowReference(entityName: entity.name, primaryKey: owner.primaryKey)
                    let kept = (members[owner] ?? []).compactMap { member -> RowReference? in
                        guard let name = renamed[member.entityName], to.model.entity(name, isKindOf: relationship.destinationEntityName) else { return nil }
                        let reference = RowReference(entityName: name, primaryKey: member.primaryKey)
                        return dropped.contains(reference) ? nil : reference
                    }
                    if inverse?.isToMany == true {
                        changes.linkInserts += kept.map { RelationshipLink(source: newOwner, relationship: relationship.name, destination: $0) }
                    }
                    if relationship.isOrdered, former.isOrdered, !kept.isEmpty {
                        changes.orders.append(RelationshipOrder(source: newOwner, relationship: relationship.name, members: kept))
                    }
                }
            }
            if !changes.isEmpty { try new.save(changes) }
        }
    }

    // MARK: - Dropped rows

    /// Clears to-one relationships of `entity`'s rows that point at a dropped row.
    private func clearReferences(in entity: EntityDescription, to dropped: Set<RowReference>) throws {
        let relationships = entity.persistentToOneRelationships
        guard !relationships.isEmpty else { return }
        var after: Int64?
        while true {
            let batch = try new.rowBatch(entityName: entity.name, after: after, limit: step.batchSize)
            guard let last = batch.last else { break }
            after = last.primaryKey
            var updates: [RowUpdate] = []
            for row in batch {
                var cleared: [String: RowReference?] = [:]
                for relationship in relationships {
                    if let target = row.toOne[relationship.name], dropped.contains(target) { cleared[relationship.name] = .some(nil) }
                }
                if !cleared.isEmpty {
                    updates.append(RowUpdate(
                        entityName: row.entityName, primaryKey: row.primaryKey, expectedVersion: row.version, values: [:], toOne: cleared))
                }
            }
            if !updates.isEmpty { try new.save(StoreChangeSet(updates: updates)) }
        }
    }

    // MARK: - Checks

    /// Rows keep their primary keys, so one hierarchy of the new version may only take rows of one old hierarchy.
    private func checkKeys() throws {
        var byRoot: [String: Set<String>] = [:]
        for entity in newEntities {
            guard let source = sources[entity.name], let root = oldEntities[source]?.rootName else { continue }
            byRoot[entity.rootName, default: []].insert(root)
        }
        for (root, sourceRoots) in byRoot where sourceRoots.count > 1 {
            throw MigrationError.conflictingKeys(version: to.name, entity: root, sources: sourceRoots.sorted())
        }
    }
}

import Foundation
import SwitchyardSQLite
import SwitchyardStores

// MARK: - Copying to-many links

extension StoreSplitter {
    /// What copying one relationship's links produced: links (or positioned members) written and, where they
    /// passed through this process, the checksum of what was written.
    package struct LinkResult {
        package var links = 0
        package var checksum: SplitChecksum?

        package init(links: Int = 0, checksum: SplitChecksum? = nil) {
            self.links = links
            self.checksum = checksum
        }
    }

    /// One walk over a relationship's owners in one store: the owners' entities, the to-many read, and how the
    /// members are written and checksummed.
    package struct LinkPass {
        /// Each owner entity as the walked store names it, and its target model name.
        package var entities: [(read: String, target: String)]
        /// The to-many as the walked store's model names it.
        package var relationship: String
        /// The to-many in the target model.
        package var targetRelationship: String
        /// "Entity.relationship" in the target model: what the checksum records.
        package var label: String
        /// Positions are written and compared.
        package var ordered: Bool
        /// Links are written (a many-to-many's owning end; the other end and an ordered to-many with a to-one
        /// inverse only take positions).
        package var writesLinks: Bool
    }

    /// Copies every planned relationship after all rows are in place (links and positions refer to rows of
    /// both ends): inside SQLite where both stores are SQLite, else in owner batches through
    /// `relatedReferences` and saves of `linkInserts` and `orders`.
    package func copyLinks(_ plan: SplitPlan, into outputs: [BulkCopyStore], batchSize: Int) throws -> [LinkResult] {
        var results: [LinkResult] = []
        for (index, (link, mapping)) in zip(plan.links, plan.linkMappings).enumerated() {
            let output = outputs[link.destination]
            if link.kind != .withoutInverse, let from = source as? SQLiteStore, let to = output as? SQLiteStore {
                let spec = BulkLinkCopySpec(
                    targetEnd: mapping.target, sourceEnd: mapping.source, targetInverse: mapping.targetInverse,
                    sourceInverse: mapping.sourceInverse, ordered: link.ordered, inverseOrdered: link.inverseOrdered)
                results.append(LinkResult(links: try to.copyLinks(spec, from: from, batchSize: max(batchSize, 50_000)), checksum: nil))
                continue
            }
            var result = LinkResult(links: 0, checksum: SplitChecksum())
            for pass in linkPasses(index, plan: plan, inSource: true) {
                try walk(pass, in: source, plan: plan, destination: link.destination, batchSize: batchSize) { owners in
                    var changes = StoreChangeSet()
                    for (owner, members) in owners {
                        if pass.writesLinks {
                            changes.linkInserts += members.map {
                                RelationshipLink(source: owner, relationship: pass.targetRelationship, destination: $0)
                            }
                        }
                        if pass.ordered, !members.isEmpty {
                            changes.orders.append(RelationshipOrder(source: owner, relationship: pass.targetRelationship, members: members))
                        }
                        if pass.writesLinks || link.kind == .order { result.links += members.count }
                        for (position, member) in members.enumerated() {
                            result.checksum?.add(member: member, of: owner, relationship: pass.label, position: pass.ordered ? position + 1 : 0)
                        }
                    }
                    if !changes.isEmpty { try output.save(changes) }
                }
            }
            results.append(result)
        }
        return results
    }

    /// The walks that copy or checksum link `index`: its owning end, then, for a many-to-many ordered from the
    /// other side, that side (positions only). `inSource` names entities and relationships as the source does.
    package func linkPasses(_ index: Int, plan: SplitPlan, inSource: Bool) -> [LinkPass] {
        let link = plan.links[index], mapping = plan.linkMappings[index]
        func owners(_ sourceEntity: String) -> [(read: String, target: String)] {
            plan.entities.filter { $0.destination == link.destination && sourceModel.entity($0.sourceEntity, isKindOf: sourceEntity) }
                .map { (inSource ? $0.sourceEntity : $0.targetEntity, $0.targetEntity) }
        }
        var passes = [LinkPass(
            entities: owners(mapping.source.entityName),
            relationship: (inSource ? mapping.source : mapping.target).relationship.name,
            targetRelationship: mapping.target.relationship.name, label: mapping.target.key, ordered: link.ordered,
            writesLinks: link.kind != .order)]
        if link.inverseOrdered {
            passes.append(LinkPass(
                entities: owners(mapping.sourceInverse.entityName),
                relationship: (inSource ? mapping.sourceInverse : mapping.targetInverse).relationship.name,
                targetRelationship: mapping.targetInverse.relationship.name, label: mapping.targetInverse.key, ordered: true,
                writesLinks: false))
        }
        return passes
    }

    /// Reads `pass`'s owners from `store` in primary-key batches and hands each batch to `visit` with its
    /// members, in the relationship's order, as target-model references. Members the output does not receive
    /// (an entity not copied, or copied elsewhere) are left out.
    package func walk(
        _ pass: LinkPass, in store: PersistentStore, plan: SplitPlan, destination: Int, batchSize: Int,
        visit: ([(owner: RowReference, members: [RowReference])]) throws -> Void
    ) throws {
        let isSource = store === source
        let received = Set(plan.entities.filter { $0.destination == destination }.map(\.targetEntity))
        for entity in pass.entities {
            var after: Int64?
            var read = 0
            while true {
                let batch = try Self.keyBatch(store, entity.read, after: after, offset: read, limit: batchSize)
                guard let last = batch.last else { break }
                let members = try store.relatedReferences(of: batch.map(\.reference), relationship: pass.relationship)
                let owners = batch.map { row -> (owner: RowReference, members: [RowReference]) in
                    let mapped = (members[row.reference] ?? []).compactMap { member -> RowReference? in
                        let name = isSource ? plan.entityNames[member.entityName] : member.entityName
                        guard let name, received.contains(name) else { return nil }
                        return RowReference(entityName: name, primaryKey: member.primaryKey)
                    }
                    return (RowReference(entityName: entity.target, primaryKey: row.primaryKey), mapped)
                }
                try visit(owners)
                after = last.primaryKey
                read += batch.count
                if batch.count < batchSize { break }
            }
        }
    }

    /// The checksum of link `index` as `store` holds it (the source, with names mapped to the target model,
    /// or an output), and how many links (or positioned members) its owning end has.
    package func linkChecksum(_ index: Int, plan: SplitPlan, store: PersistentStore, batchSize: Int) throws -> (links: Int, checksum: SplitChecksum) {
        var checksum = SplitChecksum()
        var links = 0
        for (number, pass) in linkPasses(index, plan: plan, inSource: store === source).enumerated() {
            try walk(pass, in: store, plan: plan, destination: plan.links[index].destination, batchSize: batchSize) { owners in
                for (owner, members) in owners {
                    if number == 0 { links += members.count }
                    for (position, member) in members.enumerated() {
                        checksum.add(member: member, of: owner, relationship: pass.label, position: pass.ordered ? position + 1 : 0)
                    }
                }
            }
        }
        return (links, checksum)
    }

    /// A keyset batch of `entity`'s rows where the store offers one, else an offset page.
    package static func keyBatch(_ store: PersistentStore, _ entity: String, after: Int64?, offset: Int, limit: Int) throws -> [StoreRow] {
        if let bulk = store as? BulkCopyStore {
            return try bulk.rowBatch(entityName: entity, after: after, limit: limit)
        }
        return try store.fetch(StoreFetchRequest(entityName: entity, fetchLimit: limit, fetchOffset: offset, includesSubentities: false))
    }
}

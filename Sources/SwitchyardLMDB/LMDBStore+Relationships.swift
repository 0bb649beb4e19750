import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - To-many members

extension LMDBStore {
    /// Members of a to-many relationship for a batch of sources, in one read transaction: a prefix walk of
    /// `links` per source for a many-to-many, the inverse's index otherwise; positions from `links` when ordered.
    public func relatedReferences(of sources: [RowReference], relationship: String) throws -> [RowReference: [RowReference]] {
        try checkOpen()
        guard let first = sources.first else { return [:] }
        let end = try toManyEnd(relationship, of: first.entityName)
        guard let destination = schema.layout(named: end.relationship.destinationEntityName) else {
            throw StoreError.entityNotInStore(path: path, configuration: configurationName, entity: end.relationship.destinationEntityName)
        }
        let isManyToMany = model.isLinkBackedToMany(end.relationship)
        guard isManyToMany || model.isInverseBackedToMany(end.relationship) else {
            throw StoreError.unknownProperty(path: path, configuration: configurationName, entity: first.entityName, property: relationship)
        }
        return try environment.read { txn in
            let reader = LMDBReader(store: self, transaction: txn)
            let links = databases.links.map { LMDBLinks(database: $0, transaction: txn) }
            var result: [RowReference: [RowReference]] = [:]
            for source in sources where result[source] == nil {
                var members: [RowReference] = []
                var positions: [Int64: Int64] = [:]
                if isManyToMany {
                    for (pk, position) in try links?.members(end.key, source: source.primaryKey) ?? [] {
                        guard let name = try reader.entityName(root: destination.rootNumber, primaryKey: pk),
                            model.entity(name, isKindOf: destination.name)
                        else { continue }
                        members.append(RowReference(entityName: name, primaryKey: pk))
                        if let position { positions[pk] = position }
                    }
                } else {
                    let item = StoreRow(entityName: source.entityName, primaryKey: source.primaryKey)
                    members = try reader.related(item, end.relationship, from: source.entityName).map(\.reference)
                    if end.relationship.isOrdered {
                        for (pk, position) in try links?.members(end.key, source: source.primaryKey) ?? [] {
                            if let position { positions[pk] = position }
                        }
                    }
                }
                result[source] = RelationshipMembers.sorted(members, positions: end.relationship.isOrdered ? positions : [:])
            }
            return result
        }
    }

    /// The declaring end of persistent to-many `relationship` of `entityName`, or `StoreError.unknownProperty`.
    package func toManyEnd(_ relationship: String, of entityName: String) throws -> RelationshipEnd {
        guard let end = model.end(of: relationship, from: entityName), end.relationship.isToMany, !end.relationship.isTransient else {
            throw StoreError.unknownProperty(path: path, configuration: configurationName, entity: entityName, property: relationship)
        }
        return end
    }

    /// Inside a save's write transaction, after the row changes: drops the links of deleted rows, then applies
    /// link deletes, link inserts and orders.
    package func applyRelationshipChanges(_ changes: StoreChangeSet, deleted: [RowReference], txn: LMDBTransaction) throws {
        let needsLinks = !changes.linkInserts.isEmpty || !changes.linkDeletes.isEmpty || !changes.orders.isEmpty
        guard let database = databases.links else {
            if needsLinks { throw StoreError.readOnly(path: path, configuration: configurationName, operation: "write relationship links") }
            return
        }
        let links = LMDBLinks(database: database, transaction: txn)
        if !deleted.isEmpty {
            for end in model.toManysWithoutInverse(touching: entities) {
                for row in deleted {
                    if model.entity(row.entityName, isKindOf: end.relationship.destinationEntityName),
                        let owner = try links.owner(end.key, member: row.primaryKey)
                    {
                        try links.unlink(end.key, owner: owner, member: row.primaryKey)
                    }
                    if model.entity(row.entityName, isKindOf: end.entityName) {
                        for (member, _) in try links.members(end.key, source: row.primaryKey) {
                            try links.unlink(end.key, owner: row.primaryKey, member: member)
                        }
                    }
                }
            }
            let pairs = model.manyToManyPairs(touching: entities)
            for row in deleted {
                for (first, second) in pairs {
                    for (mine, theirs) in [(first, second), (second, first)] where model.entity(row.entityName, isKindOf: mine.entityName) {
                        for (member, _) in try links.members(mine.key, source: row.primaryKey) {
                            try links.remove(mine.key, source: row.primaryKey, member: member)
                            try links.remove(theirs.key, source: member, member: row.primaryKey)
                        }
                    }
                }
            }
        }
        for link in changes.linkDeletes {
            if let end = try link.endWithoutInverse(in: model, path: path, configuration: configurationName) {
                try links.unlink(end.key, owner: link.source.primaryKey, member: link.destination.primaryKey)
                continue
            }
            let (mine, theirs) = try ends(of: link)
            try links.remove(mine.key, source: link.source.primaryKey, member: link.destination.primaryKey)
            try links.remove(theirs.key, source: link.destination.primaryKey, member: link.source.primaryKey)
        }
        for link in changes.linkInserts {
            if let end = try link.endWithoutInverse(in: model, path: path, configuration: configurationName) {
                try links.link(end.key, owner: link.source.primaryKey, member: link.destination.primaryKey)
                continue
            }
            let (mine, theirs) = try ends(of: link)
            try links.add(mine.key, source: link.source.primaryKey, member: link.destination.primaryKey)
            try links.add(theirs.key, source: link.destination.primaryKey, member: link.source.primaryKey)
        }
        for order in changes.orders {
            let end = try toManyEnd(order.relationship, of: order.source.entityName)
            guard end.relationship.isOrdered else {
                throw StoreError.unknownProperty(path: path, configuration: configurationName, entity: order.source.entityName, property: order.relationship)
            }
            let positions = Dictionary(order.members.enumerated().map { ($1.primaryKey, Int64($0 + 1)) }, uniquingKeysWith: { a, _ in a })
            let existing = try links.members(end.key, source: order.source.primaryKey)
            if model.isLinkBackedToMany(end.relationship) {
                // Only linked members take a position; the others are not in the relationship.
                for (member, _) in existing {
                    try links.setPosition(end.key, source: order.source.primaryKey, member: member, position: positions[member])
                }
            } else {
                for (member, _) in existing { try links.remove(end.key, source: order.source.primaryKey, member: member) }
                for (member, position) in positions {
                    try links.setPosition(end.key, source: order.source.primaryKey, member: member, position: position)
                }
            }
        }
    }

    /// Both ends of a link's many-to-many relationship, the source's first; `StoreError.unknownProperty` otherwise.
    private func ends(of link: RelationshipLink) throws -> (RelationshipEnd, RelationshipEnd) {
        guard let pair = model.manyToManyEnds(of: link.relationship, from: link.source.entityName),
            let mine = model.end(of: link.relationship, from: link.source.entityName)
        else {
            throw StoreError.unknownProperty(path: path, configuration: configurationName, entity: link.source.entityName, property: link.relationship)
        }
        return mine.key == pair.first.key ? (pair.first, pair.second) : (pair.second, pair.first)
    }
}

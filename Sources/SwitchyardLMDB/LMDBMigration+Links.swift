import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Links

extension LMDBMigration {
    /// What happens to the `links` entries of one old relationship end.
    private enum LinkFate {
        /// Moved under the new end key (the same key when nothing was renamed), positions kept or cleared.
        case keep(newKey: String, keepsPositions: Bool)
        /// Deleted: the relationship is gone or no longer keeps links.
        case delete
    }

    /// Brings `links` in line with the new model inside the migration's transaction: entries of a removed
    /// relationship (or one that no longer keeps links) are deleted; entries of a renamed relationship or
    /// entity move under the new end key (`Entity.relationship`); an end that is no longer ordered loses its
    /// positions. An added many-to-many needs nothing (no entries read as no members), nor does an end that
    /// became ordered (members without a position read after the others, by primary key).
    package func migrateLinks(_ databases: LMDBStoreDatabases, links: LMDBDatabase, schema: LMDBSchema, served: [EntityDescription], txn: LMDBTransaction) throws {
        let moves = StoreMigration.inverseMoves(report: report, old: old, new: new)
        // A to-many gaining a to-one inverse: its members' owners (about to go) become their keys first.
        try keyMembersByOwner(moves, databases: databases, links: links, schema: schema, txn: txn)
        for entity in old.entities {
            for relationship in entity.relationships where keepsLinks(relationship, in: old) {
                let oldKey = RelationshipEnd(entityName: entity.name, relationship: relationship).key
                let fate = fate(of: entity.name, relationship)
                if old.isToManyWithoutInverse(relationship) {
                    // The members' owners, kept under their own key, follow the members while the end stays without
                    // inverse, and go otherwise.
                    switch fate {
                    case .keep(let newKey, _) where newKey != oldKey && staysWithoutInverse(newKey):
                        try rewrite(LMDBLinks.ownerKey(oldKey), .keep(newKey: LMDBLinks.ownerKey(newKey), keepsPositions: false), links: links, txn: txn)
                    case .keep(let newKey, _) where staysWithoutInverse(newKey): break
                    default: try rewrite(LMDBLinks.ownerKey(oldKey), .delete, links: links, txn: txn)
                    }
                }
                // Same key, and positions kept or never stored: nothing to rewrite.
                if case .keep(let newKey, let keepsPositions) = fate, newKey == oldKey, keepsPositions || !relationship.isOrdered {
                    continue
                }
                try rewrite(oldKey, fate, links: links, txn: txn)
            }
        }
        try linkFormerToOnes(links, schema: schema, rows: databases.rows, served: served, txn: txn)
        // A to-many losing its to-one inverse: the removed to-one's keys become its members' owners.
        try ownMembersByFormerKeys(moves, links: links, schema: schema, rows: databases.rows, txn: txn)
    }

    /// For each end of a new many-to-many that was a to-one: one link (both ends) per row whose retired key is
    /// set. The key's bytes are still in the rows (a retired position), so the rows are read, not rewritten;
    /// positions the other end kept as an ordered to-many are already under its key and stay (`add` keeps them).
    private func linkFormerToOnes(
        _ links: LMDBDatabase, schema: LMDBSchema, rows: LMDBDatabase, served: [EntityDescription], txn: LMDBTransaction
    ) throws {
        let store = LMDBLinks(database: links, transaction: txn)
        let servedRoots = Set(served.map(\.rootName))
        for (first, second) in new.manyToManyPairs(touching: served)
        where [first, second].allSatisfy({ new.entity(named: $0.entityName).map { servedRoots.contains($0.rootName) } == true }) {
            for (end, other) in first.key == second.key ? [(first, second)] : [(first, second), (second, first)] {
                guard let former = StoreMigration.formerEnd(of: end, report: report, old: old), !former.relationship.isToMany,
                    let entity = new.entity(named: end.entityName)
                else { continue }
                var done = 0
                try forEachRetiredKey(former.relationship.name, of: entity, schema: schema, rows: rows, txn: txn) { pairs in
                    for (source, member) in pairs {
                        try store.add(end.key, source: source, member: member)
                        try store.add(other.key, source: member, member: source)
                    }
                    done += pairs.count
                    try progress?(MigrationProgress(path: path, entity: end.entityName, done: done, total: done))
                }
            }
        }
    }

    /// Walks the rows of `entity` and its subentities a batch at a time, handing `body` each batch's rows whose
    /// retired to-one `former` (removed by this migration: its bytes are still in the rows, at a retired
    /// position) is set, with its target's primary key.
    func forEachRetiredKey(
        _ former: String, of entity: EntityDescription, schema: LMDBSchema, rows: LMDBDatabase, txn: LMDBTransaction,
        _ body: ([(source: Int64, member: Int64)]) throws -> Void
    ) throws {
        guard let root = schema.numbers[entity.rootName] else { return }
        let retired = Self.retiredPrefix + former
        let family = Set(entity.selfAndDescendantNames.compactMap { schema.numbers[$0] })
        var after: Int64? = nil
        repeat {
            var pairs: [(source: Int64, member: Int64)] = []
            try txn.withCursor(rows) { cursor in
                let start = after.map { LMDBRowKey.make(root: root, primaryKey: $0 &+ 1) } ?? LMDBRowKey.prefix(root: root)
                var entry = try cursor.seek(atLeast: start)
                after = nil
                var scanned = 0
                while let current = entry, LMDBRowKey.root(of: current.key) == root, scanned < StoreMigration.batchSize {
                    let key = LMDBRowKey.primaryKey(of: current.key)
                    if family.contains(try LMDBRowCoding.entityNumber(of: current.value)) {
                        let image = try LMDBIndexing.decodeImage(current.value, primaryKey: key, schema: schema, path: path)
                        // The last position of that name: a name removed, added again and removed again is retired
                        // twice, and the earlier position holds the first relationship's old targets.
                        if let position = image.layout.toOneNames.lastIndex(of: retired), let target = image.toOnes[position] {
                            pairs.append((key, target.primaryKey))
                        }
                    }
                    after = key
                    scanned += 1
                    entry = try cursor.next()
                }
                if scanned < StoreMigration.batchSize { after = nil }
            }
            try body(pairs)
        } while after != nil
    }

    /// True when the new model's end `key` (`Entity.relationship`) is a to-many without inverse.
    private func staysWithoutInverse(_ key: String) -> Bool {
        let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let end = new.end(of: parts[1], from: parts[0]) else { return false }
        return new.isToManyWithoutInverse(end.relationship)
    }

    /// True for an end whose store keeps entries in `links`: a many-to-many, a to-many without inverse, or an
    /// ordered to-many with a to-one inverse (its positions).
    private func keepsLinks(_ relationship: RelationshipDescription, in model: ObjectModel) -> Bool {
        model.isLinkBackedToMany(relationship) || (relationship.isOrdered && model.isInverseBackedToMany(relationship))
    }

    private func fate(of entityName: String, _ relationship: RelationshipDescription) -> LinkFate {
        let removed = report.entities.contains { $0.kind == .removed && $0.name == entityName }
        let newEntity = entityRenames[entityName] ?? entityName
        guard !removed, let change = report.entities.first(where: { $0.name == newEntity && $0.kind != .added }) else {
            return .delete
        }
        let newName = change.properties.first { $0.isRelationship && $0.kind == .renamed && $0.oldName == relationship.name }?.name
            ?? relationship.name
        guard !change.properties.contains(where: { $0.isRelationship && $0.kind == .removed && $0.name == relationship.name }),
            let end = new.end(of: newName, from: newEntity), end.entityName == newEntity
        else { return .delete }
        if old.isToManyWithoutInverse(relationship) {
            // Kept while it stays without inverse (renamed or not). Gaining a to-one inverse keeps only the
            // positions of an ordered one (its members are the inverse's keys now: `keyMembersByOwner`).
            if new.isToManyWithoutInverse(end.relationship) {
                return .keep(newKey: end.key, keepsPositions: end.relationship.isOrdered)
            }
            return end.relationship.isOrdered && new.isInverseBackedToMany(end.relationship)
                ? .keep(newKey: end.key, keepsPositions: true) : .delete
        }
        let wasManyToMany = old.isManyToMany(relationship)
        if wasManyToMany && new.isManyToMany(end.relationship) {
            return .keep(newKey: end.key, keepsPositions: end.relationship.isOrdered)
        }
        if !wasManyToMany && end.relationship.isOrdered && new.isInverseBackedToMany(end.relationship) {
            return .keep(newKey: end.key, keepsPositions: true)
        }
        if !wasManyToMany && new.isManyToMany(end.relationship) {
            // An ordered to-many whose to-one inverse became to-many: its positions are already keyed
            // (source, member) like the links `linkFormerToOnes` adds next to them.
            return .keep(newKey: end.key, keepsPositions: end.relationship.isOrdered)
        }
        if !wasManyToMany && new.isToManyWithoutInverse(end.relationship) {
            // An ordered to-many that lost its to-one inverse: its positions stay, and `ownMembersByFormerKeys`
            // links the members beside them.
            return .keep(newKey: end.key, keepsPositions: end.relationship.isOrdered)
        }
        return .delete
    }

    /// Applies `fate` to every entry under `oldKey`, a batch at a time (bounded memory), with progress.
    private func rewrite(_ oldKey: String, _ fate: LinkFate, links: LMDBDatabase, txn: LMDBTransaction) throws {
        var prefix = Array(oldKey.utf8)
        prefix.append(0)
        var start = prefix
        var done = 0
        while true {
            var batch: [(key: [UInt8], value: [UInt8])] = []
            try txn.withCursor(links) { cursor in
                var entry = try cursor.seek(atLeast: start)
                while let current = entry, current.key.starts(with: prefix), batch.count < StoreMigration.batchSize {
                    batch.append((Array(current.key), Array(current.value)))
                    entry = try cursor.next()
                }
            }
            guard let last = batch.last else { break }
            for (key, value) in batch {
                switch fate {
                case .delete:
                    try txn.delete(links, key)
                case .keep(let newKey, let keepsPositions):
                    var moved = Array(newKey.utf8)
                    moved += key[(prefix.count - 1)...]
                    if moved != key { try txn.delete(links, key) }
                    try txn.put(links, moved, keepsPositions ? value : [])
                }
            }
            done += batch.count
            try progress?(MigrationProgress(path: path, entity: String(oldKey.prefix { $0 != "." }), done: done, total: done))
            // Past the last entry handled: entries moved under another key or rewritten in place are not met again.
            start = last.key + [0]
        }
    }
}

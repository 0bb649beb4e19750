import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Inverses gained or lost

extension LMDBMigration {
    /// For each to-many that gains a to-one inverse: every member's owner, kept under the owner key of `links`
    /// while it had none, becomes the member row's key (with the owner's entity number), its indexes kept in
    /// step; a batch at a time. Runs before `links` drops the owner entries.
    func keyMembersByOwner(
        _ moves: [StoreMigration.InverseMove], databases: LMDBStoreDatabases, links: LMDBDatabase, schema: LMDBSchema,
        txn: LMDBTransaction
    ) throws {
        for move in moves {
            guard case .keysFromOwners(let inverse) = move.conversion,
                let destination = new.entity(named: move.end.relationship.destinationEntityName),
                let owner = new.entity(named: move.end.entityName),
                let memberRoot = schema.numbers[destination.rootName], let ownerRoot = schema.numbers[owner.rootName]
            else { continue }
            let indexes = databases.indexes(root: memberRoot)
            var prefix = Array(LMDBLinks.ownerKey(move.former.key).utf8)
            prefix.append(0)
            var start = prefix
            var done = 0
            var writer = LMDBByteWriter()
            while true {
                // Owner entries: the member as source, its owner as member.
                var pairs: [(member: Int64, owner: Int64)] = []
                var last: [UInt8]? = nil
                try txn.withCursor(links) { cursor in
                    var entry = try cursor.seek(atLeast: start)
                    while let current = entry, current.key.starts(with: prefix), pairs.count < StoreMigration.batchSize {
                        if current.key.count == prefix.count + 16 {
                            pairs.append((
                                Int64(bitPattern: LMDBRowKey.readBigEndian64(current.key, prefix.count)),
                                Int64(bitPattern: LMDBRowKey.readBigEndian64(current.key, prefix.count + 8))))
                        }
                        last = Array(current.key)
                        entry = try cursor.next()
                    }
                }
                guard let last else { break }
                for (member, ownerKey) in pairs {
                    guard let row = try txn.get(databases.rows, LMDBRowKey.make(root: memberRoot, primaryKey: member)),
                        let ownerRow = try txn.get(databases.rows, LMDBRowKey.make(root: ownerRoot, primaryKey: ownerKey))
                    else { continue }
                    let before = try row.withUnsafeBytes { try LMDBIndexing.decodeImage($0, primaryKey: member, schema: schema, path: path) }
                    guard let position = before.layout.toOneIndex[inverse] else { continue }
                    let number = try ownerRow.withUnsafeBytes { try LMDBRowCoding.entityNumber(of: $0) }
                    var image = before
                    image.toOnes[position] = LMDBRowImage.Target(number: number, primaryKey: ownerKey)
                    writer.bytes.removeAll(keepingCapacity: true)
                    LMDBRowCoding.encode(image, into: &writer)
                    try txn.put(databases.rows, LMDBRowKey.make(root: memberRoot, primaryKey: member), writer.bytes)
                    try LMDBIndexing.update(from: before, to: image, databases: indexes, txn: txn)
                    try checkConstraints(of: image, changed: [.toOne(position)], indexes: indexes, rows: databases.rows, schema: schema, txn: txn)
                }
                done += pairs.count
                try progress?(MigrationProgress(path: path, entity: destination.name, done: done, total: done))
                start = last + [0]
            }
        }
    }

    /// For each to-many that loses its to-one inverse (removed with it): every member whose retired key names
    /// an owner is linked to it as a to-many without inverse keeps its members (owner entries included); an
    /// ordered one's positions are already under its key and stay.
    func ownMembersByFormerKeys(
        _ moves: [StoreMigration.InverseMove], links: LMDBDatabase, schema: LMDBSchema, rows: LMDBDatabase, txn: LMDBTransaction
    ) throws {
        let store = LMDBLinks(database: links, transaction: txn)
        for move in moves {
            guard case .ownersFromKeys(let former) = move.conversion,
                let destination = new.entity(named: move.end.relationship.destinationEntityName)
            else { continue }
            var done = 0
            try forEachRetiredKey(former, of: destination, schema: schema, rows: rows, txn: txn) { pairs in
                for (member, owner) in pairs { try store.link(move.end.key, owner: owner, member: member) }
                done += pairs.count
                try progress?(MigrationProgress(path: path, entity: destination.name, done: done, total: done))
            }
        }
    }
}

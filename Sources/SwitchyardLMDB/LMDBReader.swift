import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - LMDBReader

/// Reads rows inside one transaction (a snapshot for fetches, the write transaction during a save): single
/// rows by key, a table in key order, or an index's candidates. Counts the rows it decodes for a fetch.
package final class LMDBReader {
    package let store: LMDBStore
    package let transaction: LMDBTransaction
    /// Rows decoded as fetch candidates (not rows read to follow relationships). Unchecked exclusivity: a
    /// reader is used by one thread, and the run-time check cost more than the increment.
    @exclusivity(unchecked) package private(set) var rowsVisited = 0
    private let builder: LMDBRowBuilder

    package init(store: LMDBStore, transaction: LMDBTransaction) {
        self.store = store
        self.transaction = transaction
        builder = LMDBRowBuilder(schema: store.schema, path: store.path)
    }

    package var schema: LMDBSchema { store.schema }

    // MARK: - Rows

    /// The row with this primary key in the table of root number `root`, or `nil`.
    package func row(root: Int, primaryKey: Int64) throws -> StoreRow? {
        guard let bytes = try encodedRow(root: root, primaryKey: primaryKey) else { return nil }
        return try builder.row(bytes, primaryKey: primaryKey)
    }

    /// The concrete entity of the row with this key, reading only its entity number; `nil` when missing.
    package func entityName(root: Int, primaryKey: Int64) throws -> String? {
        guard let bytes = try encodedRow(root: root, primaryKey: primaryKey) else { return nil }
        guard let number = try? LMDBRowCoding.entityNumber(of: bytes) else {
            throw StoreError.notAStore(path: store.path, expected: .lmdb, reason: "damaged row p\(primaryKey)")
        }
        return schema.layout(number: number)?.name
    }

    /// The row by position (for saves), or `nil`.
    package func image(root: Int, primaryKey: Int64) throws -> LMDBRowImage? {
        guard let bytes = try encodedRow(root: root, primaryKey: primaryKey) else { return nil }
        return try LMDBIndexing.decodeImage(bytes, primaryKey: primaryKey, schema: schema, path: store.path)
    }

    /// The stored bytes of a row (pointing into the map: valid until the transaction next writes), with its
    /// entity and `Z_OPT` read from its header, or `nil` when missing. For updates that patch a row.
    /// `cursor` (on the rows database) is left on the row, for `LMDBCursor.replaceCurrent`.
    package func storedRow(
        root: Int, primaryKey: Int64, cursor: LMDBCursor
    ) throws -> (bytes: UnsafeRawBufferPointer, layout: LMDBEntityLayout, version: Int64)? {
        guard let bytes = try LMDBRowKey.withKey(root: root, primaryKey: primaryKey, { try cursor.seek(exactly: $0) })?.value
        else { return nil }
        let header = try LMDBRowCoding.reportingDamage(path: store.path, primaryKey: primaryKey) {
            var r = LMDBByteReader(bytes)
            return try LMDBRowCoding.readHeader(&r, primaryKey: primaryKey, schema: schema)
        }
        return (bytes, header.layout, header.version)
    }

    private func encodedRow(root: Int, primaryKey: Int64) throws -> UnsafeRawBufferPointer? {
        try LMDBRowKey.withKey(root: root, primaryKey: primaryKey) { try transaction.get(store.databases.rows, $0) }
    }

    /// `true` at the entity numbers of `layout` (and its subentities when `includesSubentities`).
    package func family(of layout: LMDBEntityLayout, includesSubentities: Bool) -> [Bool] {
        includesSubentities ? layout.withSubentities : layout.alone
    }

    /// Feeds `body` the rows of table `root` whose entity is in `family`, in primary-key order, either all of
    /// them (a cursor walk) or those `lookup` names; `body` returns `false` to stop early.
    /// A walk starts at primary key `from` (the predicate's own lower bound on `SELF`, so a batch of
    /// `ObjectContext.forEach` reads from where the last one ended).
    package func candidates(
        root: Int, family: [Bool], lookup: LMDBQueryPlanner.IndexLookup?, from firstKey: Int64 = 0,
        _ body: (consuming StoreRow) throws -> Bool
    ) throws {
        if let lookup {
            let databases = store.databases.indexes(root: root)
            guard lookup.index < databases.count, let database = databases[lookup.index] else { return }
            /// Reads the row an index entry names; `false` stops the walk.
            func visit(_ key: Int64) throws -> Bool {
                guard let bytes = try encodedRow(root: root, primaryKey: key), try isInFamily(bytes, family, key)
                else { return true }
                rowsVisited += 1
                return try body(try builder.row(bytes, primaryKey: key))
            }
            if lookup.values.count == 1 {
                // One value: its entries are already in primary-key order; read each row as the cursor passes.
                let prefix = LMDBIndexKey.prefix(lookup.values[0])
                try transaction.withCursor(database) { cursor in
                    var entry = try cursor.seek(atLeast: prefix)
                    while let current = entry, current.key.starts(with: prefix) {
                        if let key = LMDBIndexKey.primaryKey(of: current.key), !(try visit(key)) { return }
                        entry = try cursor.next()
                    }
                }
                return
            }
            var keys = Set<Int64>()
            for value in lookup.values {
                keys.formUnion(try LMDBIndexing.primaryKeys(withPrefix: LMDBIndexKey.prefix(value), in: database, txn: transaction))
            }
            for key in keys.sorted() where !(try visit(key)) { return }
            return
        }
        // When the family is the whole table, every row qualifies: the entity number is not read twice.
        let wholeTable = schema.layout(number: root).map { $0.withSubentities == family } ?? false
        try scan(root: root, from: firstKey) { key, bytes in
            guard try wholeTable || isInFamily(bytes, family, key) else { return true }
            rowsVisited += 1
            return try body(try builder.row(bytes, primaryKey: key))
        }
    }

    /// Counts the rows of table `root` whose entity is in `family`, reading only each row's entity number.
    package func count(root: Int, family: [Bool]) throws -> Int {
        var total = 0
        try scan(root: root) { key, bytes in
            if try isInFamily(bytes, family, key) { total += 1 }
            return true
        }
        return total
    }

    /// Counts the rows of table `root` whose entity is in `family` and that `matches` selects. The closure does
    /// not escape, so the state it captures is reached without a dynamic exclusivity check per row.
    package func count(root: Int, family: [Bool], where matches: (Int64, UnsafeRawBufferPointer) throws -> Bool) throws -> Int {
        var total = 0
        // Every row's entity number is checked here, also for a whole table: `matches` may not read it (a
        // predicate on SELF), and a damaged row of an unknown or foreign entity is skipped, as a fetch skips it.
        try scan(root: root) { key, bytes in
            guard try isInFamily(bytes, family, key) else { return true }
            rowsVisited += 1
            do {
                if try matches(key, bytes) { total += 1 }
            } catch where error is LMDBRowCoding.DecodingError || error is LMDBByteReader.Overrun {
                throw LMDBRowCoding.damagedRow(path: store.path, primaryKey: key, error)
            }
            return true
        }
        return total
    }

    /// Counts the rows of table `root` that `scan` selects (it checks each row's entity itself, once per change
    /// of entity number), asking `general` for a row `scan` cannot decide. One loop around the cursor: the
    /// closures `scan(root:)` and a counting closure would add per row were a tenth of a count's work.
    package func count(
        root: Int, scan: inout LMDBBytePredicate.Scan, general: (Int64, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Int {
        var total = 0
        var rowsLeft = Self.rowsBeforePageReleases
        try transaction.withCursor(store.databases.rows) { cursor in
            try LMDBRowKey.prefix(root: root).withUnsafeBytes { start in
                try cursor.walk(from: start) { key, bytes in
                    guard LMDBRowKey.root(of: key) == root else { return false }
                    releasePagesNow(&rowsLeft)
                    let primaryKey = LMDBRowKey.primaryKey(of: key)
                    do {
                        if let matches = try scan.matches(bytes, primaryKey: primaryKey) {
                            if matches { total += 1 }
                        } else if try general(primaryKey, bytes) {
                            total += 1
                        }
                    } catch where error is LMDBRowCoding.DecodingError || error is LMDBByteReader.Overrun {
                        throw LMDBRowCoding.damagedRow(path: store.path, primaryKey: primaryKey, error)
                    }
                    return true
                }
            }
        }
        return total
    }

    /// A walk of a table gives the store file's pages back once it has read this many rows (`releasePagesNow`)…
    static let rowsBeforePageReleases = 150_000
    /// …and again every this many rows after that.
    static let rowsBetweenPageReleases = 50_000

    /// Counts down one row walked in `rowsLeft` (start it at `rowsBeforePageReleases`), and in a long walk drops
    /// the store file's mapped pages from resident memory now and then
    /// (`LMDBEnvironment.releaseMappedPagesInTransaction`: the walk is inside a transaction). Rows are decoded
    /// into their own storage, so the pages read so far are not needed again: a fetch or count of a million
    /// rows, a migration or a split holds what it made, not also the file (about 140 MB of mapped pages for a
    /// million rows of the bench entity). A shorter walk keeps them: a table read again and again would
    /// otherwise fault every page back in each time. Pages still pointed into read back from the page cache.
    @inline(__always)
    private func releasePagesNow(_ rowsLeft: inout Int) {
        rowsLeft &-= 1
        if rowsLeft == 0 {
            rowsLeft = Self.rowsBetweenPageReleases
            store.environment.releaseMappedPagesInTransaction()
        }
    }

    /// Walks every row of table `root` in key order; `body` gets the primary key and encoded row. Gives the
    /// store file's pages back as it goes (`releasePagesNow`).
    package func scan(root: Int, from firstKey: Int64 = 0, _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool) throws {
        var rowsLeft = Self.rowsBeforePageReleases
        try transaction.withCursor(store.databases.rows) { cursor in
            let start = firstKey > 0 ? LMDBRowKey.make(root: root, primaryKey: firstKey) : LMDBRowKey.prefix(root: root)
            try start.withUnsafeBytes { start in
                try cursor.walk(from: start) { key, value in
                    guard LMDBRowKey.root(of: key) == root else { return false }
                    releasePagesNow(&rowsLeft)
                    return try body(LMDBRowKey.primaryKey(of: key), value)
                }
            }
        }
    }

    private func isInFamily(_ bytes: UnsafeRawBufferPointer, _ family: [Bool], _ key: Int64) throws -> Bool {
        let number: Int
        do {
            number = try LMDBRowCoding.entityNumber(of: bytes)
        } catch {
            throw LMDBRowCoding.damagedRow(path: store.path, primaryKey: key, error)
        }
        return number >= 0 && number < family.count && family[number]
    }

    // MARK: - Relationships

    /// The rows a relationship of `item` reaches, as `MemoryRowSubject` finds them: a to-one by its target's
    /// key, a to-many through the inverse to-one's index (members in primary-key order).
    package func related(_ item: StoreRow, _ relationship: RelationshipDescription, from entityName: String) throws -> [StoreRow] {
        guard let destination = schema.layout(named: relationship.destinationEntityName) else { return [] }
        let root = destination.rootNumber
        if !relationship.isToMany {
            guard let target = item.toOne[relationship.name] else { return [] }
            return try row(root: root, primaryKey: target.primaryKey).map { [$0] } ?? []
        }
        if let end = store.model.end(of: relationship.name, from: item.entityName), store.model.isLinkBackedToMany(end.relationship) {
            guard let database = store.databases.links else { return [] }
            let links = LMDBLinks(database: database, transaction: transaction)
            return try links.members(end.key, source: item.primaryKey).compactMap { member, _ -> StoreRow? in
                guard let row = try row(root: root, primaryKey: member),
                    let number = schema.numbers[row.entityName], number < destination.withSubentities.count,
                    destination.withSubentities[number]
                else { return nil }
                return row
            }
        }
        guard let inverse = relationship.inverseName, destination.relationships[inverse]?.isToMany == false else {
            throw StoreError.unsupportedPredicate(
                path: store.path, configuration: store.configurationName, reason: "to-many \(entityName).\(relationship.name) has no to-one inverse to search by")
        }
        let family = destination.withSubentities
        func isMember(_ row: StoreRow) -> Bool {
            guard let number = schema.numbers[row.entityName], number < family.count, family[number] else { return false }
            return row.toOne[inverse]?.primaryKey == item.primaryKey
        }
        var members: [StoreRow] = []
        let databases = store.databases.indexes(root: root)
        if let index = destination.indexByFirstProperty[name: inverse], index < databases.count, let database = databases[index] {
            let prefix = LMDBIndexKey.prefix(.integer(item.primaryKey))
            for key in try LMDBIndexing.primaryKeys(withPrefix: prefix, in: database, txn: transaction) {
                if let member = try row(root: root, primaryKey: key), isMember(member) { members.append(member) }
            }
        } else {
            // No index (a read-only store written before the index existed): scan the table.
            try scan(root: root) { key, bytes in
                let member = try builder.row(bytes, primaryKey: key)
                if isMember(member) { members.append(member) }
                return true
            }
        }
        return members.sorted { $0.primaryKey < $1.primaryKey }
    }
}

@available(*, unavailable, message: "a reader lives inside one transaction")
extension LMDBReader: Sendable {}

// MARK: - LMDBRowSubject

/// An LMDB row seen by the predicate evaluator: follows to-one references and finds to-many members through
/// the inverse to-one, inside the reader's transaction. Mirrors `MemoryRowSubject` rule for rule.
package struct LMDBRowSubject: PredicateSubject {
    package let row: StoreRow
    package let reader: LMDBReader

    package func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        let schema = reader.schema
        // The common case, an attribute of the row itself, without building the general walk.
        if keyPath.count == 1, let layout = schema.layout(named: row.entityName), layout.attributeIndex[name: keyPath[0]] != nil {
            return .single(row[keyPath[0]])
        }
        return try RowKeyPathWalk(
            // `attributeIndex` holds the persistent attributes: a transient one falls through, as in memory.
            isPersistentAttribute: { entity, key in schema.layout(named: entity).map { $0.attributeIndex[name: key] != nil } },
            relationship: { entity, key in schema.layout(named: entity)?.relationships[key] },
            related: { item, relationship in try reader.related(item, relationship, from: item.entityName) }
        ).values(at: keyPath, from: row)
    }
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - LMDBMigration

/// An inferable model change applied inside the bootstrap's write transaction (so a crash leaves the old
/// store): entity and property renames are renames in `meta` (numbers, property positions); removed
/// properties are retired (their positions tombstoned, their bytes skipped); removed entities' rows are
/// deleted; `links` entries follow renamed relationships and go with removed ones (`migrateLinks`); defaults
/// and to-many -> to-one keys are written into the rows in batches, with progress.
package struct LMDBMigration {
    package let old: ObjectModel
    package let new: ObjectModel
    package let report: CompatibilityReport
    package let path: String
    /// The configuration the store is opened for, for errors.
    package let configurationName: String
    package let progress: MigrationProgressHandler?

    /// Entity renames, old name -> new name.
    package var entityRenames: [String: String] {
        var renames: [String: String] = [:]
        for change in report.entities where change.kind == .renamed {
            if let old = change.oldName { renames[old] = change.name }
        }
        return renames
    }

    /// The stored entity numbers with renamed entities under their new names.
    /// All at once, read from `stored`: applied one by one in the dictionary's order, a rename into a name another
    /// rename frees would depend on that order (ModelDiff refuses such chains; this stays right regardless).
    package func renamingNumbers(_ stored: [String: Int]) -> [String: Int] {
        let renames = entityRenames
        var numbers = stored
        for old in renames.keys { numbers.removeValue(forKey: old) }
        for (old, new) in renames {
            if let number = stored[old] { numbers[new] = number }
        }
        return numbers
    }

    /// The `meta` name an entity's stored layout is under (its old name when renamed).
    package func storedLayoutName(of entity: String) -> String {
        entityRenames.first { $0.value == entity }?.key ?? entity
    }

    /// A stored layout adjusted to the new model: renamed properties renamed in place, properties the entity
    /// no longer stores tombstoned (so a later property of the same name gets a fresh position).
    package func adjust(_ layout: LMDBSchema.StoredLayout, for entity: EntityDescription) -> LMDBSchema.StoredLayout {
        var renames: [String: String] = [:]
        for e in [entity] + new.ancestors(of: entity) {
            guard let change = report.entities.first(where: { $0.name == e.name }) else { continue }
            for (newName, oldName) in StoreMigration.oldPropertyNames(change) { renames[oldName] = newName }
        }
        let attributes = Set(entity.persistentAttributes.map(\.name))
        let toOnes = Set(entity.persistentToOneRelationships.map(\.name))
        func adjusted(_ names: [String], live: Set<String>) -> [String] {
            names.map { name in
                if name.hasPrefix(Self.retiredPrefix) { return name }
                let current = renames[name] ?? name
                return live.contains(current) ? current : Self.retiredPrefix + name
            }
        }
        var result = LMDBSchema.StoredLayout(
            attributes: adjusted(layout.attributes, live: attributes), toOnes: adjusted(layout.toOnes, live: toOnes),
            defaults: layout.defaults
        ).extended(by: entity)
        // An added attribute with a default is not written into the rows: its new position reads the default
        // in rows that lack it (O(1) instead of rewriting every row). Indexed ones are written (the index needs
        // an entry per row).
        let indexed = Set(LMDBSchema.indexDefinitions(root: new.entity(named: entity.rootName) ?? entity, model: new).flatMap(\.properties))
        for (name, value) in implicitDefaults(for: entity) where !indexed.contains(name) {
            if let position = result.attributes.firstIndex(of: name) { result.defaults[position] = value }
        }
        return result
    }

    /// Attributes of `entity` this migration adds with a default, with the default normalized (nil when the
    /// default does not fit, which `fillRows` reports).
    package func implicitDefaults(for entity: EntityDescription) -> [(name: String, value: AttributeValue)] {
        var result: [(name: String, value: AttributeValue)] = []
        for e in [entity] + new.ancestors(of: entity) {
            guard let change = report.entities.first(where: { $0.name == e.name }) else { continue }
            for p in change.properties where !p.isRelationship && p.kind == .added {
                guard let attribute = entity.attribute(named: p.name), !attribute.isTransient, let value = attribute.defaultValue,
                    let normalized = value.normalizedForObject(attribute.type), !normalized.isNull,
                    !result.contains(where: { $0.name == p.name })
                else { continue }
                result.append((p.name, normalized))
            }
        }
        return result
    }

    /// Marks a position whose property was removed; never a property name (those cannot hold U+0001).
    package static let retiredPrefix = "\u{1}retired:"

    // MARK: - Rows

    /// Deletes the rows of removed entities (before any index is built from the rows, which could not decode
    /// them). `numbers` are the store's numbers, removed entities included. Returns the root numbers of the
    /// tables that lost rows, whose indexes `pruneIndexes` then cleans.
    @discardableResult
    func deleteRemovedRows(numbers: [String: Int], rows: LMDBDatabase, txn: LMDBTransaction) throws -> Set<Int> {
        var touched: Set<Int> = []
        for change in report.entities where change.kind == .removed {
            guard let entity = old.entity(named: change.name), let number = numbers[change.name] else { continue }
            let rootName = entityRenames[entity.rootName] ?? entity.rootName
            guard let root = numbers[rootName] ?? numbers[entity.rootName] else { continue }
            var deleted = 0
            var after: Int64? = nil
            while true {
                var doomed: [[UInt8]] = []
                try txn.withCursor(rows) { cursor in
                    let start = after.map { LMDBRowKey.make(root: root, primaryKey: $0 &+ 1) } ?? LMDBRowKey.prefix(root: root)
                    var entry = try cursor.seek(atLeast: start)
                    var scanned = 0
                    while let current = entry, LMDBRowKey.root(of: current.key) == root, scanned < StoreMigration.batchSize {
                        after = LMDBRowKey.primaryKey(of: current.key)
                        if (try? LMDBRowCoding.entityNumber(of: current.value)) == number { doomed.append(Array(current.key)) }
                        scanned += 1
                        entry = try cursor.next()
                    }
                    if entry == nil || entry.map({ LMDBRowKey.root(of: $0.key) != root }) == true { after = nil }
                }
                for key in doomed { try txn.delete(rows, key) }
                deleted += doomed.count
                if after == nil { break }
            }
            if deleted > 0 { touched.insert(root) }
            try progress?(MigrationProgress(path: path, entity: change.name, done: deleted, total: deleted))
        }
        return touched
    }

    /// Removes index entries whose row is gone (those of removed entities' rows), so a lookup or a
    /// uniqueness check never meets them.
    package func pruneIndexes(roots: Set<Int>, databases: LMDBStoreDatabases, txn: LMDBTransaction) throws {
        for root in roots {
            for case let index? in databases.indexes(root: root) {
                var stale: [[UInt8]] = []
                try txn.withCursor(index) { cursor in
                    var entry = try cursor.first()
                    while let current = entry {
                        if let key = LMDBIndexKey.primaryKey(of: current.key),
                            try txn.get(databases.rows, LMDBRowKey.make(root: root, primaryKey: key)) == nil
                        {
                            stale.append(Array(current.key))
                        }
                        entry = try cursor.next()
                    }
                }
                for key in stale { try txn.delete(index, key) }
            }
        }
    }

    /// Writes defaults (added or newly required attributes) and to-many -> to-one keys into the rows of every
    /// served entity that needs them, a batch at a time, keeping the indexes in step.
    package func fillRows(schema: LMDBSchema, databases: LMDBStoreDatabases, served: [EntityDescription], txn: LMDBTransaction) throws {
        for entity in served {
            guard let change = report.entities.first(where: { $0.name == entity.name }),
                let layout = schema.layout(named: entity.name)
            else { continue }
            var defaults: [(position: Int, value: AttributeValue)] = []
            var inverseFills: [(position: Int, index: LMDBDatabase, destinationRoot: Int)] = []
            for p in change.properties {
                if !p.isRelationship, p.kind == .added || p.kind == .becameRequired,
                    let attribute = entity.attribute(named: p.name), let value = attribute.defaultValue,
                    let position = layout.attributeIndex[name: p.name]
                {
                    guard let normalized = value.normalizedForObject(attribute.type) else {
                        throw StoreError.invalidValue(
                            path: path, configuration: configurationName, entity: entity.name, attribute: attribute.name, value: "\(value)",
                            expected: "\(attribute.type.rawValue) (the default value used to migrate existing rows)")
                    }
                    // An added attribute whose rows read the default through the layout needs no rewrite.
                    if p.kind == .added, layout.implicitDefaultPositions.contains(position) { continue }
                    defaults.append((position, normalized))
                }
                if p.isRelationship, p.kind == .toManyBecameToOne, let fill = inverseIndex(
                    entity: entity, relationship: p.name, layout: layout, schema: schema, databases: databases)
                {
                    inverseFills.append(fill)
                }
            }
            guard !defaults.isEmpty || !inverseFills.isEmpty else { continue }
            let family = Set(entity.selfAndDescendantNames.compactMap { schema.numbers[$0] })
            let root = layout.rootNumber
            let indexes = databases.indexes(root: root)
            let total = try countRows(root: root, family: family, rows: databases.rows, txn: txn)
            var done = 0
            var after: Int64? = nil
            repeat {
                var batch: [LMDBRowImage] = []
                try txn.withCursor(databases.rows) { cursor in
                    let start = after.map { LMDBRowKey.make(root: root, primaryKey: $0 &+ 1) } ?? LMDBRowKey.prefix(root: root)
                    var entry = try cursor.seek(atLeast: start)
                    after = nil
                    while let current = entry, LMDBRowKey.root(of: current.key) == root, batch.count < StoreMigration.batchSize {
                        let key = LMDBRowKey.primaryKey(of: current.key)
                        if family.contains(try LMDBRowCoding.entityNumber(of: current.value)) {
                            batch.append(try LMDBIndexing.decodeImage(current.value, primaryKey: key, schema: schema, path: path))
                        }
                        after = key
                        entry = try cursor.next()
                    }
                    if batch.count < StoreMigration.batchSize { after = nil }
                }
                var writer = LMDBByteWriter()
                for before in batch {
                    var image = before
                    var changed: Set<LMDBEntityLayout.Slot> = []
                    for (position, value) in defaults where image.attributes[position].isNull {
                        image.attributes[position] = value
                        changed.insert(.attribute(position))
                    }
                    for fill in inverseFills where image.toOnes[fill.position] == nil {
                        let prefix = LMDBIndexKey.prefix(.integer(image.primaryKey))
                        guard let target = try LMDBIndexing.primaryKeys(withPrefix: prefix, in: fill.index, txn: txn).min(),
                            let bytes = try txn.get(databases.rows, LMDBRowKey.make(root: fill.destinationRoot, primaryKey: target))
                        else { continue }
                        let number = try bytes.withUnsafeBytes { try LMDBRowCoding.entityNumber(of: $0) }
                        image.toOnes[fill.position] = LMDBRowImage.Target(number: number, primaryKey: target)
                        changed.insert(.toOne(fill.position))
                    }
                    writer.bytes.removeAll(keepingCapacity: true)
                    LMDBRowCoding.encode(image, into: &writer)
                    try txn.put(databases.rows, LMDBRowKey.make(root: root, primaryKey: image.primaryKey), writer.bytes)
                    try LMDBIndexing.update(from: before, to: image, databases: indexes, txn: txn)
                    try checkConstraints(of: image, changed: changed, indexes: indexes, rows: databases.rows, schema: schema, txn: txn)
                }
                done += batch.count
                try progress?(MigrationProgress(path: path, entity: entity.name, done: done, total: total))
            } while after != nil
        }
    }

    /// A row the migration wrote values into (a member keyed by its owner through a new inverse, an added
    /// attribute's default, a to-many made a to-one) breaks no uniqueness constraint over a `changed` slot:
    /// when the index was built those values were not there yet, so the rows were never checked against them.
    /// Equal values stop the migration, naming the constraint and the values, and the transaction leaves the store
    /// as it was, as SQL stores refuse it and as a constraint added over stored duplicates is refused.
    func checkConstraints(
        of image: LMDBRowImage, changed: Set<LMDBEntityLayout.Slot>, indexes: [LMDBDatabase?], rows: LMDBDatabase,
        schema: LMDBSchema, txn: LMDBTransaction
    ) throws {
        guard !changed.isEmpty else { return }
        for constraint in image.layout.constraints where constraint.slots.contains(where: changed.contains) {
            guard constraint.index < indexes.count, let index = indexes[constraint.index],
                let refusal = try LMDBIndexing.duplicateRefusal(
                    of: image, constraint: constraint, index: index, rows: rows, schema: schema, txn: txn, path: path,
                    configuration: configurationName)
            else { continue }
            throw refusal
        }
    }

    /// The index of the destination's inverse to-one, for filling a to-many that became a to-one.
    private func inverseIndex(
        entity: EntityDescription, relationship name: String, layout: LMDBEntityLayout, schema: LMDBSchema,
        databases: LMDBStoreDatabases
    ) -> (position: Int, index: LMDBDatabase, destinationRoot: Int)? {
        guard let position = layout.toOneIndex[name], let relationship = entity.relationship(named: name),
            let inverse = relationship.inverseName, let destination = new.entity(named: relationship.destinationEntityName),
            let root = schema.numbers[destination.rootName],
            let index = schema.indexes[destination.rootName]?.firstIndex(where: { $0.properties == [inverse] }),
            let database = databases.indexes(root: root)[safe: index]
        else { return nil }
        return (position, database, root)
    }

    private func countRows(root: Int, family: Set<Int>, rows: LMDBDatabase, txn: LMDBTransaction) throws -> Int {
        try txn.withCursor(rows) { cursor in
            var count = 0
            var entry = try cursor.seek(atLeast: LMDBRowKey.prefix(root: root))
            while let current = entry, LMDBRowKey.root(of: current.key) == root {
                if family.contains(try LMDBRowCoding.entityNumber(of: current.value)) { count += 1 }
                entry = try cursor.next()
            }
            return count
        }
    }
}

extension Array {
    /// The element at `index`, or nil outside the array (flattening an optional element).
    fileprivate subscript<T>(safe index: Int) -> T? where Element == T? {
        index >= 0 && index < count ? self[index] : nil
    }
}

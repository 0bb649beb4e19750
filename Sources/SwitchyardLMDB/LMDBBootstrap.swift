import Foundation
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - LMDBBootstrap

/// Opening a store's databases: creates them in a new environment, recognizes an existing Switchyard store
/// (and refuses any other LMDB environment), loads metadata and entity numbers, and builds any index the
/// model declares that the store does not have yet from the rows already there.
package struct LMDBBootstrap {
    package let model: ObjectModel
    /// The configuration the store is opened for (recorded when the store is created, and what the stored
    /// model is compared with `model` for).
    package let configuration: String
    package let served: [EntityDescription]
    package let path: String
    package var progress: MigrationProgressHandler? = nil
    /// The store was opened read-only: nothing is created, migrated or written, even when another store of
    /// this process shares the environment writable.
    package var readOnly = false
    /// Create the `history` database when the store has none (`StoreOptions.persistentHistory`).
    package var persistentHistory = false

    /// What `run` found or created.
    package struct Opened {
        package var metadata: StoreMetadata
        /// The configuration the store was created for; nil for a store created before it was recorded.
        package var createdConfiguration: String?
        package var schema: LMDBSchema
        package var databases: LMDBStoreDatabases
        /// The report of the migration this open ran; nil when nothing was migrated.
        package var migrationReport: CompatibilityReport? = nil
    }

    /// Opens everything in one transaction: a write transaction normally (creating what is missing), a
    /// committed read transaction for a read-only store (which must already be complete).
    package func run(in environment: LMDBEnvironment) throws -> Opened {
        if readOnly || environment.isReadOnly {
            return try environment.readKeepingDatabases { try open($0, writable: false) }
        }
        return try environment.write { try open($0, writable: true) }
    }

    private func open(_ txn: LMDBTransaction, writable: Bool) throws -> Opened {
        guard let main = try LMDBDatabase.open(nil, in: txn) else {
            throw notAStore("the environment has no main database")
        }
        var isNew = false
        let meta: LMDBDatabase
        if let existing = try LMDBDatabase.open("meta", in: txn) {
            meta = existing
        } else {
            // Only a blank environment becomes a store; someone else's LMDB data is left alone.
            guard try txn.entryCount(main) == 0 else {
                throw notAStore("an LMDB environment whose databases are not a Switchyard store's (no meta database)")
            }
            guard writable else { throw notAStore("the LMDB environment is empty: no Switchyard store was created here") }
            meta = try required("meta", txn, create: true)
            isNew = true
        }
        let rows = try required("rows", txn, create: writable)
        let modelCache = try required("modelcache", txn, create: writable)
        let links = writable ? try required("links", txn, create: true) : try LMDBDatabase.open("links", in: txn)

        let metadata: StoreMetadata
        if let bytes = try txn.get(meta, Array(LMDBStoreDatabases.metadataKey.utf8)) {
            metadata = try Self.decodeMetadata(Data(bytes), path: path)
        } else if isNew {
            metadata = StoreMetadata(
                storeType: StoreType.lmdb.rawValue, versionHashes: model.versionHashes,
                versionIdentifiers: model.versionIdentifiers)
            try txn.put(meta, Array(LMDBStoreDatabases.metadataKey.utf8), Array(try metadata.binaryPropertyList()))
            // The model that created the store, so a later open can tell what changed.
            try txn.put(modelCache, Array(LMDBStoreDatabases.modelCacheKey.utf8), Array(try ModelCache.encode(model)))
            // The configuration it holds, so a tool opening it without knowing (storeinspect) reads the right entities.
            try txn.put(meta, Array(LMDBStoreDatabases.configurationKey.utf8), Array(configuration.utf8))
        } else {
            throw notAStore("meta has no metadata entry")
        }
        let migration = writable && !isNew ? try migration(metadata: metadata, modelCache: modelCache, txn: txn) : nil
        // Read-only, the rows cannot be migrated, and reading them through the new layout would give wrong values
        // (an added attribute's default missing, a renamed one empty): refused, as SQLite refuses it.
        if !writable, !isNew, let reason = StoreMigration.readOnlyMigrationReason(
            storedHashes: metadata.versionHashes, storedModel: { try storedModel(modelCache, txn) }, model: model,
            configuration: configuration, path: path)
        {
            throw StoreError.schemaMismatch(path: path, configuration: configuration, reason: reason)
        }

        var stored: [String: Int] = [:]
        if let bytes = try txn.get(meta, Array(LMDBStoreDatabases.entityNumbersKey.utf8)) {
            guard let numbers = bytes.withUnsafeBytes({ LMDBSchema.decodeNumbers($0) }) else { throw notAStore("meta's entity numbers are damaged") }
            stored = numbers
        }
        let storedNumbers = stored
        if let migration { stored = migration.renamingNumbers(stored) }
        let numbers = LMDBSchema.numbers(model: model, stored: stored)
        if writable, numbers != storedNumbers {
            try txn.put(meta, Array(LMDBStoreDatabases.entityNumbersKey.utf8), LMDBSchema.encodeNumbers(numbers))
        }
        var storedLayouts: [String: LMDBSchema.StoredLayout] = [:]
        // What `meta` holds under each entity's name now, to write back only what changed.
        var written: [String: LMDBSchema.StoredLayout] = [:]
        for entity in model.entities {
            let storedName = migration?.storedLayoutName(of: entity.name) ?? entity.name
            guard let bytes = try txn.get(meta, LMDBSchema.layoutKey(storedName)) else { continue }
            guard let layout = bytes.withUnsafeBytes({ LMDBSchema.decodeLayout($0) }) else {
                throw notAStore("meta's property layout of \(entity.name) is damaged")
            }
            storedLayouts[entity.name] = migration?.adjust(layout, for: entity) ?? layout
            if storedName == entity.name { written[entity.name] = layout } else { try txn.delete(meta, LMDBSchema.layoutKey(storedName)) }
        }
        let prunedRoots = try migration?.deleteRemovedRows(numbers: numbers, rows: rows, txn: txn) ?? []
        let schema = LMDBSchema(model: model, served: served, numbers: numbers, stored: storedLayouts)
        if writable {
            for (name, order) in schema.orders where written[name] != order {
                try txn.put(meta, LMDBSchema.layoutKey(name), LMDBSchema.encodeLayout(order))
            }
        }

        var indexes: [Int: [LMDBDatabase?]] = [:]
        // The index databases kept up to date until now (nil: a store written before they were recorded, whose
        // existing index databases are taken as up to date, as they were).
        let maintainedKey = Array(LMDBStoreDatabases.maintainedIndexesKey.utf8)
        let maintainedList = try txn.get(meta, maintainedKey).map { String(decoding: $0, as: UTF8.self) }
        let maintained = maintainedList.map { Set($0.split(separator: "\n").map(String.init)) }
        var wanted: [String] = []
        for root in schema.servedRoots {
            var databases: [LMDBDatabase?] = []
            var missing: [Int] = []
            for (position, definition) in (schema.indexes[root] ?? []).enumerated() {
                wanted.append(definition.databaseName)
                if let database = try LMDBDatabase.open(definition.databaseName, in: txn) {
                    databases.append(database)
                    // Left behind by a model version that stopped listing it, and listed again: its entries miss
                    // the rows written since (fetches through it would skip them), so it is rebuilt, and a
                    // uniqueness constraint it enforces is checked against the rows.
                    if writable, !isNew, let maintained, !maintained.contains(definition.databaseName) {
                        try txn.empty(database)
                        missing.append(position)
                    }
                } else if writable {
                    databases.append(try required(definition.databaseName, txn, create: true))
                    missing.append(position)
                } else {
                    databases.append(nil)
                }
            }
            if let number = schema.numbers[root] { indexes[number] = databases }
            if !missing.isEmpty, !isNew {
                try backfill(missing, root: root, schema: schema, rows: rows, databases: databases, txn: txn)
            }
        }
        let list = wanted.sorted().joined(separator: "\n")
        if writable, list != maintainedList { _ = try txn.put(meta, maintainedKey, Array(list.utf8)) }
        var history = try LMDBDatabase.open(LMDBStoreDatabases.historyName, in: txn)
        if history == nil, writable, persistentHistory { history = try required(LMDBStoreDatabases.historyName, txn, create: true) }
        let databases = LMDBStoreDatabases(
            rows: rows, meta: meta, modelCache: modelCache, links: links, indexes: indexes, history: history)
        let created = try txn.get(meta, Array(LMDBStoreDatabases.configurationKey.utf8)).map { String(decoding: $0, as: UTF8.self) }
        if let migration {
            try migration.pruneIndexes(roots: prunedRoots, databases: databases, txn: txn)
            if let links { try migration.migrateLinks(databases, links: links, schema: schema, served: served, txn: txn) }
            try migration.fillRows(schema: schema, databases: databases, served: served, txn: txn)
            let migrated = StoreMigration.migratedMetadata(metadata, model: model)
            try txn.put(meta, Array(LMDBStoreDatabases.metadataKey.utf8), Array(try migrated.binaryPropertyList()))
            try txn.put(modelCache, Array(LMDBStoreDatabases.modelCacheKey.utf8), Array(try ModelCache.encode(model)))
            return Opened(
                metadata: migrated, createdConfiguration: created, schema: schema, databases: databases,
                migrationReport: migration.report)
        }
        return Opened(metadata: metadata, createdConfiguration: created, schema: schema, databases: databases)
    }

    /// The migration to run when the stored model differs from `model` and every change is inferable; nil
    /// when nothing needs migrating; `StoreError.incompatibleModel` (the transaction aborts: nothing written)
    /// when a change cannot be inferred.
    private func migration(metadata: StoreMetadata, modelCache: LMDBDatabase, txn: LMDBTransaction) throws -> LMDBMigration? {
        let pending = try StoreMigration.pendingMigration(
            storedHashes: metadata.versionHashes, storedModel: { try storedModel(modelCache, txn) }, model: model,
            configuration: configuration, path: path)
        guard let (old, report) = pending else { return nil }
        return LMDBMigration(
            old: old, new: model, report: report, path: path, configurationName: configuration, progress: progress)
    }

    /// The model the store was last written with (its model cache), nil when it has none this library can read.
    private func storedModel(_ modelCache: LMDBDatabase, _ txn: LMDBTransaction) throws -> ObjectModel? {
        guard let blob = try txn.get(modelCache, Array(LMDBStoreDatabases.modelCacheKey.utf8)), !blob.isEmpty else { return nil }
        return try? ModelCache.decode(Data(blob), source: "\(path) model cache")
    }

    /// Builds new indexes from the table's existing rows (a model that gained an index, or a store written
    /// before one existed).
    private func backfill(
        _ positions: [Int], root: String, schema: LMDBSchema, rows: LMDBDatabase, databases: [LMDBDatabase?],
        txn: LMDBTransaction
    ) throws {
        guard let rootNumber = schema.numbers[root] else { return }
        let cursor = try LMDBCursor(rows, in: txn)
        defer { cursor.close() }
        var entry = try cursor.seek(atLeast: LMDBRowKey.prefix(root: rootNumber))
        while let current = entry, LMDBRowKey.root(of: current.key) == rootNumber {
            let key = LMDBRowKey.primaryKey(of: current.key)
            let image = try LMDBIndexing.decodeImage(current.value, primaryKey: key, schema: schema, path: path)
            // A uniqueness constraint new to the store (a model version added it): rows that already break it make
            // the open fail, and the transaction aborts (nothing written), as on SQLite.
            for constraint in image.layout.constraints where positions.contains(constraint.index) {
                guard let database = databases[constraint.index],
                    let refusal = try LMDBIndexing.duplicateRefusal(
                        of: image, constraint: constraint, index: database, rows: rows, schema: schema, txn: txn, path: path,
                        configuration: configuration)
                else { continue }
                throw refusal
            }
            for position in positions {
                guard let database = databases[position], let indexKey = LMDBIndexing.entry(of: image, index: position) else { continue }
                try txn.put(database, indexKey, [])
            }
            entry = try cursor.next()
        }
    }

    private func required(_ name: String, _ txn: LMDBTransaction, create: Bool) throws -> LMDBDatabase {
        guard let database = try LMDBDatabase.open(name, flags: create ? [.create] : [], in: txn) else {
            throw notAStore("the \(name) database is missing")
        }
        return database
    }

    /// Decodes the metadata plist, or `StoreError.notAStore` saying what is wrong with it.
    package static func decodeMetadata(_ data: Data, path: String) throws -> StoreMetadata {
        let decoded: StoreMetadata?
        do {
            decoded = try StoreMetadata.decode(data)
        } catch {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "the metadata is not a property list: \(error)")
        }
        guard let metadata = decoded else {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "the metadata lacks NSStoreType or NSStoreUUID")
        }
        return metadata
    }

    private func notAStore(_ reason: String) -> StoreError {
        StoreError.notAStore(path: path, expected: .lmdb, reason: reason)
    }
}

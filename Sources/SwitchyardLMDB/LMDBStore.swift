import Foundation
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores
import Synchronization

// MARK: - LMDBStore

/// A store in an LMDB environment: one directory holding `data.mdb` and `lock.mdb`, with the named databases
/// `rows` (every object, keyed by root entity number and primary key, values in `LMDBRowCoding`), `links`
/// (many-to-many links and ordered to-many positions, `LMDBLinks`), `meta`
/// (metadata plist, entity numbers, property positions, `max:<Root>` key counters, the configuration the store
/// was created for), `modelcache`, and one
/// `index:` database per secondary index (`LMDBIndexDefinition`). Predicates are evaluated in memory over a
/// cursor; an equality or IN on an indexed property reads only the rows its index names. Readers see
/// snapshots; writes are one transaction each; the map grows on `MDB_MAP_FULL`.
///
/// ```swift
/// let store = try LMDBStore(url: dir.appendingPathComponent("Cache.lmdb"), model: model, configuration: "Cache")
/// let keys = try store.allocatePrimaryKeys(for: "Avatar", count: 1)
/// try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Avatar", primaryKey: keys.lowerBound,
///                                                  values: ["accountID": "a1"])]))
/// ```
public final class LMDBStore: PersistentStore, ConfigurationRecordingStore, MigratingStore, TracingStore {
    /// Always `.lmdb`.
    public let type: StoreType = .lmdb
    /// The store's directory.
    public var url: URL? { location }
    /// The configuration whose entities this store holds.
    public let configurationName: String
    /// The whole model the store was opened with.
    public let model: ObjectModel
    /// The entities of `configurationName`, in entity-number order.
    public let entities: [EntityDescription]
    /// `NSStoreUUID` from the metadata.
    public var identifier: UUID { state.withLock { $0.identifier } }
    /// Whether the store was opened with `StoreOptions.readOnly`.
    public let isReadOnly: Bool
    /// The configuration the store was created for (it may since be opened for another that holds the same
    /// entities); nil for a store created before Switchyard recorded it.
    package let createdConfiguration: String?

    package let location: URL
    /// `location.path`, computed once: every error names it, and `URL.path` is not free.
    package let path: String
    /// The directory's path, as errors show it (kept from opening: rows name it for every value they check).
    public var displayPath: String { path }
    package let environment: LMDBEnvironment
    package let schema: LMDBSchema
    package let databases: LMDBStoreDatabases
    package let state: Locked<LMDBStoreState>
    /// Set once by `destroy` or `closeFiles`; read by every operation (an atomic, not `state`: a lock round trip
    /// was about 130 instructions of an indexed lookup in callgrind).
    let closed = Atomic<Bool>(false)
    /// Rows decoded by the last `fetch` or `count` (see `lastFetchRowsVisited`); atomic for the same reason.
    let rowsVisited = Atomic<Int>(0)
    /// The report of the migration run when this store was opened; nil when nothing was migrated.
    package let migrationReport: CompatibilityReport?
    /// Trace output (`StoreOptions.traceLevel`).
    package let tracer: StoreTracer

    /// Opens the store in the directory `url`, creating the directory and an empty store when it does not
    /// exist (or is empty).
    ///
    /// Throws `StoreError.notAStore` for a plain file at `url`, a directory of other files, a `data.mdb` that is
    /// not a complete LMDB file, or an LMDB environment that is not a Switchyard store;
    /// `StoreError.openFailed` when a read-only store does not exist; `StoreError.lmdb` for LMDB failures; and
    /// `ModelError.unknownConfiguration` for a configuration the model does not declare.
    ///
    /// A store written with another model is compared structurally (see `ModelDiff`); inferable changes are
    /// migrated in place in the opening write transaction, reporting to `migrationProgress`; otherwise
    /// `StoreError.incompatibleModel` and nothing is written.
    public init(
        url: URL, model: ObjectModel, configuration: String, options: StoreOptions = .default,
        migrationProgress: MigrationProgressHandler? = nil
    ) throws {
        let entities = try model.entities(inConfiguration: configuration)
        let path = url.path
        try Self.prepareDirectory(path, configuration: configuration, readOnly: options.readOnly)
        let roots = Set(entities.map(\.rootName)).compactMap { model.entity(named: $0) }
        let indexCount = roots.reduce(0) { $0 + LMDBSchema.indexDefinitions(root: $1, model: model).count }
        let environment = try LMDBEnvironment.shared(
            path: path, configuration: configuration, mapSize: options.initialMapSize, maxDatabases: max(64, 2 * (indexCount + 4)),
            readOnly: options.readOnly, writeTimeout: options.writeTimeout)
        let opened = try LMDBBootstrap(
            model: model, configuration: configuration, served: entities, path: path, progress: migrationProgress,
            readOnly: options.readOnly, persistentHistory: options.persistentHistory
        ).run(in: environment)
        self.location = url
        self.path = path
        self.configurationName = configuration
        self.model = model
        self.entities = entities
        self.isReadOnly = options.readOnly
        self.createdConfiguration = opened.createdConfiguration
        self.environment = environment
        self.schema = opened.schema
        self.databases = opened.databases
        self.state = Locked(LMDBStoreState(identifier: opened.metadata.uuid, history: opened.databases.history))
        self.migrationReport = opened.migrationReport
        self.tracer = StoreTracer(level: options.traceLevel, store: path)
    }

    /// A store directory may be absent (created here), empty or hold our two files; anything else is refused
    /// so a mistyped path never scatters LMDB files into an unrelated folder.
    private static func prepareDirectory(_ path: String, configuration: String, readOnly: Bool) throws {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists, !isDirectory.boolValue {
            throw StoreError.notAStore(
                path: path, expected: .lmdb, reason: "it is a file; an LMDB store is a directory holding data.mdb and lock.mdb")
        }
        if !exists {
            if readOnly {
                throw StoreError.openFailed(path: path, configuration: configuration, reason: "no LMDB store exists at this path")
            }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                let cause = DiskDiagnosis.folderProblem((path as NSString).deletingLastPathComponent, creatable: true)
                    ?? (error as NSError).localizedDescription
                throw StoreError.openFailed(path: path, configuration: configuration, reason: "cannot create the directory: \(cause)")
            }
            return
        }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard !contents.contains("data.mdb") else { return }
        let others = contents.filter { $0 != "lock.mdb" }
        if !others.isEmpty {
            throw StoreError.notAStore(
                path: path, expected: .lmdb,
                reason: "the directory holds other files (\(others.sorted().prefix(3).joined(separator: ", "))) and no data.mdb")
        }
        if readOnly {
            throw StoreError.openFailed(path: path, configuration: configuration, reason: "the directory has no data.mdb")
        }
    }

    // MARK: - Metadata

    /// The metadata stored under `metadata` in `meta`.
    public func metadata() throws -> StoreMetadata {
        try checkOpen()
        return try environment.read { txn in
            guard let bytes = try txn.get(databases.meta, Array(LMDBStoreDatabases.metadataKey.utf8)) else {
                throw StoreError.notAStore(path: path, expected: .lmdb, reason: "meta has no metadata entry")
            }
            return try LMDBBootstrap.decodeMetadata(Data(bytes), path: path)
        }
    }

    /// The model recovered from the `modelcache` database; nil when the store has none.
    public func storedModel() throws -> ObjectModel? {
        try checkOpen()
        let blob: [UInt8]? = try environment.read { txn in
            try txn.get(databases.modelCache, Array(LMDBStoreDatabases.modelCacheKey.utf8))
        }
        guard let blob, !blob.isEmpty else { return nil }
        return try ModelCache.decode(Data(blob), source: "\(path) model cache")
    }

    /// Replaces the metadata (the caller passes the app keys it wants kept).
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try checkWritable("set metadata")
        let plist: Data
        do {
            plist = try metadata.binaryPropertyList()
        } catch {
            throw StoreError.invalidValue(
                path: path, configuration: configurationName, entity: "meta", attribute: LMDBStoreDatabases.metadataKey,
                value: "\(metadata.additional.keys.sorted())", expected: "property-list values (\(error))")
        }
        try environment.write { txn in
            try txn.put(databases.meta, Array(LMDBStoreDatabases.metadataKey.utf8), Array(plist))
        }
        state.withLock { $0.identifier = metadata.uuid }
    }

    // MARK: - Destroy

    /// Closes the environment (waiting for running transactions) and deletes the store's directory.
    public func destroy() throws {
        try checkWritable("destroy the store")
        // Refused before anything changes: only this thread can enter or leave its own transactions.
        try environment.refuseInsideOwnTransaction("destroy the store")
        closed.store(true, ordering: .releasing)
        environment.close()
        do {
            try FileManager.default.removeItem(at: location)
        } catch {
            throw StoreError.openFailed(
                path: path, configuration: configurationName, reason: "cannot delete the store directory: \(error)")
        }
    }

    // MARK: - Diagnostics

    /// Rows decoded by the last `fetch` or `count`: how tests see whether an index was used.
    package var lastFetchRowsVisited: Int { rowsVisited.load(ordering: .relaxed) }

    /// The current size of the memory map in bytes.
    package var mapSize: Int { environment.mapSize }

    // MARK: - Access helpers

    /// The layout of an entity whose table this store holds (any entity of a served inheritance tree, as the
    /// memory store accepts), or `StoreError.entityNotInStore`.
    package func servedLayout(_ entityName: String) throws -> LMDBEntityLayout {
        guard let layout = schema.layout(named: entityName), layout.isServed else {
            throw StoreError.entityNotInStore(path: path, configuration: configurationName, entity: entityName)
        }
        return layout
    }

    package func checkOpen() throws {
        if closed.load(ordering: .acquiring) { throw StoreError.closed(path: path, configuration: configurationName) }
    }

    package func checkWritable(_ operation: String) throws {
        try checkOpen()
        if isReadOnly { throw StoreError.readOnly(path: path, configuration: configurationName, operation: operation) }
    }
}

// MARK: - LMDBStoreState

/// What changes after open: the UUID (`setMetadata`) and the history database.
package struct LMDBStoreState: Sendable {
    package var identifier: UUID
    /// The persistent-history database; nil while the store has none (see `LMDBStore+History`).
    package var history: LMDBDatabase? = nil
}

// MARK: - LMDBStoreDatabases

/// The named databases of an open store.
package struct LMDBStoreDatabases: Sendable {
    package static let metadataKey = "metadata"
    package static let modelCacheKey = "model"
    package static let entityNumbersKey = "entities"
    package static let configurationKey = "configuration"
    /// The index databases the last writable open kept up to date, one name per line: an index database that
    /// exists but is not listed was left behind by a model version that stopped listing it, so its entries miss
    /// the rows written since, and it is rebuilt.
    package static let maintainedIndexesKey = "maintainedIndexes"
    /// The persistent-history database (see `LMDBStore+History`).
    package static let historyName = "history"

    package let rows: LMDBDatabase
    package let meta: LMDBDatabase
    package let modelCache: LMDBDatabase
    /// To-many links and positions (`LMDBLinks`); `nil` where a store opened read-only predates it.
    package let links: LMDBDatabase?
    /// Index databases by root entity number (an array: every save and lookup needs them), each list aligned
    /// with `LMDBSchema.indexes`; `nil` where a store opened read-only lacks an index (its lookups scan).
    private let indexesByRoot: [[LMDBDatabase?]]
    /// Persistent history; `nil` when the store does not record it.
    package let history: LMDBDatabase?

    package init(
        rows: LMDBDatabase, meta: LMDBDatabase, modelCache: LMDBDatabase, links: LMDBDatabase?, indexes: [Int: [LMDBDatabase?]],
        history: LMDBDatabase? = nil
    ) {
        self.rows = rows
        self.history = history
        self.links = links
        self.meta = meta
        self.modelCache = modelCache
        var byRoot = [[LMDBDatabase?]](repeating: [], count: (indexes.keys.max() ?? 0) + 1)
        for (root, list) in indexes { byRoot[root] = list }
        indexesByRoot = byRoot
    }

    /// The index databases of the table whose root entity has number `root`.
    package func indexes(root: Int) -> [LMDBDatabase?] {
        root >= 0 && root < indexesByRoot.count ? indexesByRoot[root] : []
    }

    /// The `meta` key of a table's `Z_MAX`.
    package static func maxKey(root: String) -> [UInt8] { Array("max:\(root)".utf8) }
}

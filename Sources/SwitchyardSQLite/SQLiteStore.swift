import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardQuery
import SwitchyardStores

// MARK: - SQLiteStore

/// A store in Core Data's own SQLite layout (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`, one `Z<ROOT>` table
/// per inheritance tree), so real Core Data stores open and split. WAL journal; readers see snapshots.
///
/// ```swift
/// let store = try SQLiteStore(url: url, model: model, configuration: "Cloud")
/// let keys = try store.allocatePrimaryKeys(for: "Message", count: 1)
/// try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Message", primaryKey: keys.lowerBound,
///                                                  values: ["text": "hello"])]))
/// let rows = try store.fetch(StoreFetchRequest(entityName: "Message"))
/// ```
public final class SQLiteStore: PersistentStore, MigratingStore, TracingStore {
    /// Always `.sqlite`.
    public let type: StoreType = .sqlite
    /// The database file (its `-wal` and `-shm` sidecars live next to it).
    public var url: URL? { location }
    /// The file's path, as errors show it: kept from opening, since encoding a row names it for every value it
    /// checks.
    public let displayPath: String
    /// The configuration whose entities this store holds.
    public let configurationName: String
    /// The whole model the store was opened with.
    public let model: ObjectModel
    /// The entities of `configurationName`, in entity-number order.
    public let entities: [EntityDescription]
    /// `NSStoreUUID` from `Z_METADATA`.
    public var identifier: UUID { state.identifier }
    /// Whether the store was opened with `StoreOptions.readOnly`.
    public let isReadOnly: Bool

    package let location: URL
    let pool: DatabasePool
    package let schema: SQLiteSchema
    package let servedEntityNames: Set<String>
    package let state: SQLiteStoreState
    /// The report of the migration run when this store was opened; nil when nothing was migrated.
    package let migrationReport: CompatibilityReport?
    /// Trace output (`StoreOptions.traceLevel`).
    package let tracer: StoreTracer
    /// Whether saves record persistent history (`StoreOptions.persistentHistory`, or history tables present —
    /// also when another connection created them after this store opened).
    package var tracksHistory: Bool { state.tracksHistory }
    /// `ACHANGE.ZCOLUMNS` layouts of the served entities (the only ones a save records), by name.
    package let historyColumns: [String: HistoryColumns]
    /// The support folder's external binary data files.
    package let externalData: SQLiteExternalData

    /// Opens the store at `url`, creating it (and its tables for `configuration`) when the file does not exist.
    ///
    /// Throws `StoreError.notAStore` for a file that is not a Core Data SQLite store (foreign, empty, truncated),
    /// `StoreError.schemaMismatch` when a table or column the model needs is missing, and
    /// `ModelError.unknownConfiguration` for a configuration the model does not declare.
    ///
    /// A store written with another model is compared structurally (see `ModelDiff`); inferable changes are
    /// migrated in place, reporting to `migrationProgress`; otherwise `StoreError.incompatibleModel`.
    public convenience init(
        url: URL, model: ObjectModel, configuration: String, options: StoreOptions = .default,
        migrationProgress: MigrationProgressHandler? = nil
    ) throws {
        try self.init(
            url: url, model: model, configuration: configuration, options: options, migrationProgress: migrationProgress,
            joinTablesNamedBy: [])
    }

    /// `joinTablesNamedBy`: for a new store, the many-to-many ends (`RelationshipEnd.key`) whose join table is
    /// named after them rather than after the end the model's rule picks (a split keeping its source's names).
    package init(
        url: URL, model: ObjectModel, configuration: String, options: StoreOptions = .default,
        migrationProgress: MigrationProgressHandler? = nil, joinTablesNamedBy: Set<String>
    ) throws {
        let entities = try model.entities(inConfiguration: configuration)
        let tracer = StoreTracer(level: options.traceLevel, store: url.path)
        let opened = try Self.open(
            url: url, model: model, configuration: configuration, entities: entities, options: options,
            progress: migrationProgress, joinTablesNamedBy: joinTablesNamedBy, tracer: tracer)
        self.tracer = tracer
        self.externalData = SQLiteExternalData(store: url, configuration: configuration)
        self.location = url
        self.displayPath = url.path
        self.configurationName = configuration
        self.model = model
        self.entities = entities
        self.isReadOnly = options.readOnly
        self.pool = opened.pool
        let tracksHistory: Bool
        do {
            tracksHistory = try SQLiteHistory.prepare(opened.pool, enable: options.persistentHistory, readOnly: options.readOnly)
        } catch {
            try? opened.pool.close()
            throw Self.mapError(error, path: url.path, configuration: configuration)
        }
        self.historyColumns = HistoryColumns.table(entities)
        self.schema = opened.schema
        self.servedEntityNames = Set(entities.map(\.name))
        self.state = SQLiteStoreState(identifier: opened.identifier)
        self.state.tracksHistory = tracksHistory
        self.migrationReport = opened.migrationReport
    }

    // MARK: - Metadata

    /// The metadata in `Z_METADATA.Z_PLIST`.
    public func metadata() throws -> StoreMetadata {
        try read { db in try Self.readMetadata(db, path: displayPath) }
    }

    /// The model recovered from `Z_MODELCACHE` (Core Data's keyed archive or Switchyard's XML);
    /// nil when the store has no model cache (stores written by very old framework versions).
    public func storedModel() throws -> ObjectModel? {
        let blob: Data? = try read { db in
            guard try db.tableExists("Z_MODELCACHE") else { return nil }
            return try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE WHERE Z_CONTENT IS NOT NULL LIMIT 1")
        }
        guard let blob, !blob.isEmpty else { return nil }
        return try ModelCache.decode(blob, source: "\(displayPath) model cache")
    }

    /// Replaces `Z_METADATA`'s property list (the caller passes the app keys it wants kept).
    public func setMetadata(_ metadata: StoreMetadata) throws {
        let plist: Data
        do {
            plist = try metadata.binaryPropertyList()
        } catch {
            throw StoreError.invalidValue(
                path: displayPath, configuration: configurationName, entity: "Z_METADATA", attribute: "Z_PLIST", value: "\(metadata.additional.keys.sorted())",
                expected: "property-list values (\(error))")
        }
        try write("set metadata") { db in
            let version = try Int64.fetchOne(db, sql: "SELECT Z_VERSION FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") ?? 1
            try db.execute(
                sql: "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)",
                arguments: [version, metadata.uuid.uuidString, plist])
        }
        state.identifier = metadata.uuid
    }

    /// The first `Z_METADATA` row's property list, decoded. Core Data keeps the UUID in the `Z_UUID` column and
    /// may leave `NSStoreUUID` out of the plist, so the column fills it in (and `NSStoreType` defaults to SQLite).
    static func readMetadata(_ db: Database, path: String) throws -> StoreMetadata {
        let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        guard let row else {
            throw StoreError.notAStore(path: path, expected: .sqlite, reason: "Z_METADATA has no row")
        }
        guard case .blob(let plist) = (row[1] as DatabaseValue).storage else {
            throw StoreError.notAStore(path: path, expected: .sqlite, reason: "Z_METADATA.Z_PLIST is not a BLOB")
        }
        var dictionary: [String: PropertyListValue]
        do {
            guard let decoded = try PropertyListValue.decodeMetadataDictionary(plist, source: "\(path) Z_METADATA.Z_PLIST") else {
                throw StoreError.notAStore(path: path, expected: .sqlite, reason: "Z_METADATA.Z_PLIST is not a dictionary")
            }
            dictionary = decoded
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.notAStore(
                path: path, expected: .sqlite, reason: "Z_METADATA.Z_PLIST is not a property list: \(error)")
        }
        if dictionary[StoreMetadata.uuidKey] == nil, case .string(let uuid) = (row[0] as DatabaseValue).storage {
            dictionary[StoreMetadata.uuidKey] = .string(uuid)
        }
        if dictionary[StoreMetadata.storeTypeKey] == nil {
            dictionary[StoreMetadata.storeTypeKey] = .string(StoreType.sqlite.rawValue)
        }
        guard let metadata = StoreMetadata(propertyList: dictionary) else {
            throw StoreError.notAStore(
                path: path, expected: .sqlite, reason: "Z_METADATA has no valid store UUID (Z_UUID or NSStoreUUID)")
        }
        return metadata
    }

    // MARK: - Destroy

    /// The support folder Core Data keeps beside an SQLite store at `url` (`.<name>_SUPPORT`, holding
    /// `_EXTERNAL_DATA`): part of the store, moved, copied and deleted with it.
    package static func supportFolder(of url: URL) -> URL { SQLiteExternalData.supportFolder(of: url) }

    /// Closes the database and deletes it with its `-wal`, `-shm` and `-journal` files and its support folder
    /// (external binary data).
    public func destroy() throws {
        try checkWritable("destroy the store")
        try refuseInsideOwnTransaction("destroy the store")
        state.close()
        do {
            try pool.close()
        } catch {
            throw mapError(error)
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = location.path + suffix
            guard FileManager.default.fileExists(atPath: file) else { continue }
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch {
                throw StoreError.openFailed(
                    path: displayPath, configuration: configurationName, reason: "cannot delete \(file): \(error)")
            }
        }
        let support = SQLiteExternalData.supportFolder(of: location)
        if FileManager.default.fileExists(atPath: support.path) {
            do {
                try FileManager.default.removeItem(at: support)
            } catch {
                throw StoreError.openFailed(
                    path: displayPath, configuration: configurationName, reason: "cannot delete \(support.path): \(error)")
            }
        }
    }

    // MARK: - Access helpers

    /// The layout of an entity this store serves, or `StoreError.entityNotInStore`.
    /// The layout of a served entity; with `forSubentities`, also of an ancestor of a served entity (a fetch of
    /// the parent finds the rows of the subentities this store holds, as on LMDB and memory).
    package func servedLayout(_ entityName: String, forSubentities: Bool = false) throws -> SQLiteEntityLayout {
        if servedEntityNames.contains(entityName), let layout = schema.entities[entityName] { return layout }
        if forSubentities, let layout = schema.entities[entityName], let entity = model.entity(named: entityName),
            entity.descendantNames.contains(where: servedEntityNames.contains)
        {
            return layout
        }
        throw StoreError.entityNotInStore(path: displayPath, configuration: configurationName, entity: entityName)
    }

    package func checkOpen() throws {
        if state.isClosed { throw StoreError.closed(path: displayPath, configuration: configurationName) }
    }

    package func checkWritable(_ operation: String) throws {
        try checkOpen()
        if isReadOnly { throw StoreError.readOnly(path: displayPath, configuration: configurationName, operation: operation) }
    }

    /// Runs `body` in a read transaction (a snapshot), mapping SQLite errors to `StoreError`.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        guard state.enter() else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
        defer { state.leave() }
        do {
            return try pool.read(body)
        } catch {
            throw mapError(error)
        }
    }

    /// Runs `body` in one IMMEDIATE write transaction, rolled back if it throws.
    func write<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        try checkWritable(operation)
        guard state.enter() else { throw StoreError.closed(path: displayPath, configuration: configurationName) }
        defer { state.leave() }
        do {
            return try pool.writeWithoutTransaction { db in
                var result: Result<T, Error>?
                try db.inTransaction(.immediate) {
                    result = .success(try body(db))
                    return .commit
                }
                guard let result else {
                    throw StoreError.sqlite(
                        path: displayPath, configuration: configurationName, sql: "COMMIT", code: 1,
                        message: "transaction ended without a result")
                }
                return try result.get()
            }
        } catch {
            throw mapError(error)
        }
    }

    /// `StoreError`/`QueryError` pass through; a `DatabaseError` becomes `StoreError.sqlite` naming the
    /// file, configuration, SQL and extended result code.
    package func mapError(_ error: Error) -> Error {
        Self.mapError(error, path: displayPath, configuration: configurationName)
    }

    package static func mapError(_ error: Error, path: String, configuration: String) -> Error {
        switch error {
        case is StoreError, is QueryError, is ModelError, is CancellationError:
            return error
        case let error as DatabaseError:
            var message = error.message ?? "\(error.resultCode)"
            // SQLITE_IOERR and SQLITE_FULL: say whether the disk is full or the file size limit reached.
            if error.resultCode == .SQLITE_IOERR || error.resultCode == .SQLITE_FULL,
                let cause = DiskDiagnosis.explain(
                    storeDirectory: (path as NSString).deletingLastPathComponent, dataFile: (path as NSString).lastPathComponent)
            {
                message += " (\(cause))"
            }
            // A predicate nested deeper than this SQLite's parser takes (`SQLPredicateCompiler` takes flat ANDs,
            // ORs and IN lists apart and pushes NOTs down; alternating AND and OR is what is left).
            if message == "parser stack overflow" || message.hasPrefix("Expression tree is too large") {
                return StoreError.unsupportedPredicate(
                    path: path, configuration: configuration,
                    reason: "it nests AND and OR deeper than this SQLite parses (\(message)); Debian's SQLite 3.40 takes about 85 levels of AND and OR alternating")
            }
            if error.resultCode == .SQLITE_BUSY {
                message += " (another connection held the store's lock longer than the write timeout, StoreOptions.writeTimeout)"
            }
            return StoreError.sqlite(
                path: path, configuration: configuration, sql: error.sql ?? "", code: error.extendedResultCode.rawValue,
                message: message)
        default:
            return StoreError.openFailed(path: path, configuration: configuration, reason: "\(error)")
        }
    }
}

// MARK: - SQLiteStoreState

/// The little that changes after open (the UUID after `setMetadata`, closed after `destroy`), behind a lock.
package final class SQLiteStoreState: @unchecked Sendable {
    // `@unchecked Sendable`: every field is read and written under `lock` only.
    private let lock = NSCondition()
    private var _identifier: UUID
    private var _closed = false
    /// The thread of each read and write in flight (`enter`/`leave`), one entry each: closing waits for them,
    /// and refuses when the closing thread is one of them (it would wait for itself).
    private var holders = TransactionThreads()
    private var _tracksHistory = false
    private var _schemaVersion: Int64?
    private var _leadingIndexes: SQLiteLeadingIndexes?

    package init(identifier: UUID) { _identifier = identifier }

    /// The file's indexes as first read (see `SQLiteLeadingIndexes`); nil until then.
    package var leadingIndexes: SQLiteLeadingIndexes? {
        get { lock.withLock { _leadingIndexes } }
        set { lock.withLock { _leadingIndexes = newValue } }
    }

    /// Stops offering `index` to queries: SQLite refused it.
    package func forget(_ index: SQLiteLeadingIndexes.Index) {
        lock.withLock { _leadingIndexes?.forget(index) }
    }

    /// Whether saves record persistent history: set at open, and once another connection creates the tables.
    package var tracksHistory: Bool {
        get { lock.withLock { _tracksHistory } }
        set { lock.withLock { _tracksHistory = newValue } }
    }

    /// Records `version` (`PRAGMA schema_version`) as seen; true when it differs from the last one seen.
    package func schemaChanged(to version: Int64) -> Bool {
        lock.withLock {
            defer { _schemaVersion = version }
            return _schemaVersion != version
        }
    }

    package var identifier: UUID {
        get { lock.withLock { _identifier } }
        set { lock.withLock { _identifier = newValue } }
    }

    package var isClosed: Bool { lock.withLock { _closed } }

    /// Whether the calling thread has a read or write of the store in flight.
    package var isEnteredByCurrentThread: Bool { lock.withLock { holders.containsCurrentThread } }

    /// Counts a read or write in flight; false once the store is closed (the caller throws `StoreError.closed`).
    package func enter() -> Bool {
        lock.withLock {
            if _closed { return false }
            holders.enter()
            return true
        }
    }

    /// Undoes `close` when closing the files failed and the store goes on.
    package func reopen() { lock.withLock { _closed = false } }

    /// Ends a read or write begun with `enter`.
    package func leave() {
        lock.lock()
        holders.leave()
        if holders.isEmpty { lock.broadcast() }
        lock.unlock()
    }

    /// Closes the store to new reads and writes, then waits for those in flight to end: found by a user trial,
    /// a save racing `moveStore` either used the connection after it closed (SQLite error 21) or committed into
    /// the `-wal` after the last checkpoint, which the move then deleted (a save reported done and lost).
    /// Callers first check `isEnteredByCurrentThread`: from inside a read or write of this store on this thread
    /// (a `fetch(_:each:)` closure) it would wait for itself forever.
    package func close() {
        lock.lock()
        _closed = true
        while !holders.isEmpty { lock.wait() }
        lock.unlock()
    }
}

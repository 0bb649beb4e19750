import Foundation
import Logging
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardQuery
import SwitchyardStores

// MARK: - PostgreSQLStore

/// A configuration's entities in a PostgreSQL schema, shared by every process and machine that opens the same
/// URL: Core Data's layout (`Z<ENTITY>` tables with `Z_PK`, `Z_ENT`, `Z_OPT`, join tables `Z_<n><REL>`,
/// `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`) with PostgreSQL's types, every identifier quoted and every value
/// bound as a parameter.
///
/// ```swift
/// import SwitchyardPostgreSQL
/// try coordinator.addStore(.postgreSQL, configuration: "Cloud",
///                          url: URL(string: "postgres://app@db.internal:5432/switchyard?schema=cloud")!)
/// ```
///
/// - **Several processes.** Primary keys come from `Z_PRIMARYKEY` with `UPDATE … RETURNING`, which the server
///   serializes, so two processes never get the same key. A save runs in one transaction; an update or delete
///   checks `Z_OPT` in its `WHERE` clause, so of two processes changing one row, one saves and the other gets
///   `StoreError.conflict` with nothing of its save written.
/// - **Failures.** An unreachable server, a wrong password or a dropped connection is `StoreError.postgreSQL`
///   naming the store without its password; an unfinished save is rolled back by the server; the next call
///   connects again.
/// - **Migration.** A store written with another model is migrated when it opens, when every change is
///   inferable, in the transaction that opens it (PostgreSQL's DDL is transactional): a crash or an error leaves
///   the old store, and a second process opening it meanwhile waits, then finds it migrated.
/// - **Persistent history** (`StoreOptions.persistentHistory`) in Core Data's `ATRANSACTION` / `ACHANGE` tables,
///   written in each save's transaction and numbered in commit order across processes.
/// - **Not yet on PostgreSQL:** batch statements (batch updates and deletes run row by row through the object
///   layer).
public final class PostgreSQLStore: PersistentStore, ConfigurationRecordingStore, MigratingStore, TracingStore {
    public let type: StoreType = .postgreSQL
    public let url: URL?
    public let configurationName: String
    public let model: ObjectModel
    public let entities: [EntityDescription]
    public let identifier: UUID
    public let isReadOnly: Bool

    let pool: PostgreSQLPool
    /// Traces fetches, counts and saves, and (from `StoreTraceLevel.statements`) each statement.
    package let tracer: StoreTracer
    let schema: SQLiteSchema
    let servedEntityNames: Set<String>
    /// Unique indexes by their name in the server (which may be shortened to 63 bytes), for naming the
    /// properties of a uniqueness violation.
    let uniqueIndexes: [String: SQLiteUniqueConstraint]
    /// Whether saves record persistent history (`PostgreSQLStore+History`).
    let historyState: Locked<Bool>
    /// `ACHANGE.ZCOLUMNS` bit layouts by entity name.
    let historyColumns: [String: HistoryColumns]
    /// The configuration the store was created for (its metadata's `PostgreSQLStore.configurationKey`).
    package let createdConfiguration: String?
    /// The changes applied when the store was opened with a model it was not written with; nil when not migrated.
    package let migrationReport: CompatibilityReport?
    /// The metadata key recording the configuration a store was created for.
    static let configurationKey = "SwitchyardConfiguration"

    /// Opens the store at `url` (`postgres://user[:password]@host[:port]/database[?schema=…&sslmode=…&pool_size=…]`,
    /// see the README), creating its tables in one transaction when the schema has none.
    ///
    /// Errors: a URL that is not a PostgreSQL address (`StoreError.openFailed`), a server that cannot be reached
    /// or refuses the login (`StoreError.postgreSQL`), a schema holding other tables (`StoreError.notAStore`), a
    /// store written with another model (`StoreError.schemaMismatch`).
    public init(
        url: URL, model: ObjectModel, configuration: String, options: StoreOptions = .default, logger: Logger? = nil,
        migrationProgress: MigrationProgressHandler? = nil
    ) throws {
        let location = try PostgreSQLLocation(url, configuration: configuration, options: options)
        self.url = url
        self.model = model
        self.configurationName = configuration
        self.entities = try model.entities(inConfiguration: configuration)
        self.isReadOnly = options.readOnly
        let tracer = StoreTracer(level: options.traceLevel, store: location.display)
        self.tracer = tracer
        let pool = PostgreSQLPool(
            location, configuration: configuration,
            logger: logger ?? Logger(label: "switchyard.postgresql") { _ in SwiftLogNoOpLogHandler() }, tracer: tracer)
        self.pool = pool
        let opened = try Self.openOrCreate(
            pool, model: model, entities: entities, readOnly: options.readOnly, disposable: options.disposable && !options.readOnly,
            progress: migrationProgress)
        self.migrationReport = opened.migrationReport
        self.schema = opened.schema
        self.identifier = opened.identifier
        self.createdConfiguration = opened.createdConfiguration
        self.servedEntityNames = Set(entities.map(\.name))
        self.historyColumns = HistoryColumns.table(entities)
        self.historyState = Locked(try PostgreSQLHistory.prepare(pool, enable: options.persistentHistory, readOnly: options.readOnly))
        var unique: [String: SQLiteUniqueConstraint] = [:]
        for table in schema.tables {
            for index in table.indexes where index.isUnique {
                guard let constraint = table.uniqueConstraints.first(where: { $0.columns == index.terms.map(\.column) }) else { continue }
                unique[Self.indexName(index.name)] = constraint
            }
        }
        self.uniqueIndexes = unique
    }

    deinit { pool.shutDown() }

    // MARK: - Metadata

    /// The store's metadata (`Z_METADATA.Z_PLIST`).
    public func metadata() throws -> StoreMetadata {
        try pool.withConnection { connection in try Self.readMetadata(connection) }
    }

    /// Replaces the store's metadata.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try checkWritable("set metadata")
        let plist = try metadata.binaryPropertyList()
        try pool.withTransaction { connection in
            try connection.execute("UPDATE \"Z_METADATA\" SET \"Z_PLIST\" = $1, \"Z_UUID\" = $2", [.blob(plist), .text(metadata.uuid.uuidString)])
        }
    }

    /// The model that created the store, from `Z_MODELCACHE`.
    public func storedModel() throws -> ObjectModel? {
        try pool.withConnection { connection in
            guard let row = try connection.query("SELECT \"Z_CONTENT\" FROM \"Z_MODELCACHE\" LIMIT 1").first,
                case .blob(let blob) = try row.makeRandomAccess().columnValue(0), !blob.isEmpty
            else { return nil }
            return try ModelCache.decode(blob, source: pool.location.display)
        }
    }

    // MARK: - Destroy

    /// Drops the store's tables (the whole schema when it holds nothing else) in one transaction.
    public func destroy() throws {
        try checkWritable("destroy")
        let names = schema.tables.map(\.name) + schema.joinTables.map(\.name) + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
            + PostgreSQLHistory.tables
        try pool.withTransaction { connection in
            for name in names { try connection.execute("DROP TABLE IF EXISTS \(PostgreSQLConnection.quote(name)) CASCADE") }
            if pool.location.schema != "public" {
                try connection.execute("DROP SCHEMA IF EXISTS \(PostgreSQLConnection.quote(pool.location.schema)) RESTRICT")
            }
        }
        pool.shutDown()
    }

    // MARK: - Helpers

    /// The store's URL without its password, as errors show it: kept from opening, since encoding a row names
    /// it for every value it checks (parsing the URL each time would cost more than the row).
    public var displayPath: String { pool.location.display }

    /// The layout of `entityName` when this store serves it (or, `forSubentities`, serves one of its subentities).
    func servedLayout(_ entityName: String, forSubentities: Bool = false) throws -> SQLiteEntityLayout {
        if servedEntityNames.contains(entityName), let layout = schema.entities[entityName] { return layout }
        if forSubentities, let layout = schema.entities[entityName], let entity = model.entity(named: entityName),
            entity.descendantNames.contains(where: servedEntityNames.contains)
        {
            return layout
        }
        throw StoreError.entityNotInStore(path: displayPath, configuration: configurationName, entity: entityName)
    }

    /// Whether a table of a store's schema belongs to the store: Core Data's `Z…` tables and persistent
    /// history's. Removing or recreating a store drops these and leaves anything else in the schema.
    static func ownsTable(_ name: String) -> Bool {
        name.hasPrefix("Z") || PostgreSQLHistory.tables.contains(name)
    }

    func checkWritable(_ operation: String) throws {
        if isReadOnly { throw StoreError.readOnly(path: displayPath, configuration: configurationName, operation: operation) }
    }

    /// An identifier PostgreSQL keeps whole: names over 63 bytes (PostgreSQL's limit, which it would cut
    /// silently, so two long names could collide and a store could not find its own tables again) become a
    /// prefix and a hash of the whole name. Tables, columns and indexes all go through it.
    static func indexName(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let suffix = "_" + String(hash, radix: 16)
        var prefix = ""
        for scalar in name.unicodeScalars {
            guard prefix.utf8.count + String(scalar).utf8.count + suffix.utf8.count <= 63 else { break }
            prefix.unicodeScalars.append(scalar)
        }
        return prefix + suffix
    }
}

import Foundation

// MARK: - StoreType

/// The backends a coordinator can mount.
public enum StoreType: String, Sendable, Hashable, CaseIterable, Codable {
    /// An SQLite file in Core Data's layout.
    case sqlite = "SQLite"
    /// An LMDB environment (a directory).
    case lmdb = "LMDB"
    /// Memory only: gone when the coordinator goes.
    case memory = "InMemory"
    /// A schema in a PostgreSQL database, shared by several processes and machines; its URL is
    /// `postgres://user@host:port/database?schema=name`. Opened by the `SwitchyardPostgreSQL` product
    /// (`StoreCoordinator.addStore(_:configuration:url:options:)`).
    case postgreSQL = "PostgreSQL"

    /// True for the stores whose data lives in local files (SQLite, LMDB).
    public var isFileBased: Bool { self == .sqlite || self == .lmdb }

    /// Infers the type from a path's extension: `.sqlite` (and other SQLite names) or `.lmdb`.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "sqlite", "sqlite3", "db", "store", "moody": self = .sqlite
        case "lmdb", "mdb": self = .lmdb
        default: return nil
        }
    }
}

// MARK: - StoreOptions

/// How a store is opened.
public struct StoreOptions: Sendable, Hashable {
    /// Never write: open read-only (a real Core Data store, a split source). SQLite still honours `-wal`/`-shm`.
    public var readOnly: Bool
    /// The store holds only re-creatable data: if it cannot be migrated it is destroyed and recreated (not while
    /// another coordinator of this process has it open: that open fails with `StoreError.openFailed` instead).
    public var disposable: Bool
    /// Keep a disposable store's old files aside instead of deleting them.
    public var quarantine: Bool
    /// LMDB: the initial map size in bytes (it grows on `MDB_MAP_FULL`).
    public var initialMapSize: Int
    /// How many seconds a write (and a writable open, which writes) waits for a writer in another process
    /// before it gives up: LMDB with `StoreError.lmdb` (`ETIMEDOUT`), SQLite with `StoreError.sqlite`
    /// (`SQLITE_BUSY`, its busy timeout).
    public var writeTimeout: TimeInterval
    /// How much the store traces (see `StoreTraceLevel`); nil takes `SWITCHYARD_TRACE` from the environment.
    public var traceLevel: StoreTraceLevel?
    /// Record persistent history: every save's transaction with its author, time and changed objects, in the
    /// save's own transaction (Core Data's `NSPersistentHistoryTrackingKey`; SQLite keeps Core Data's
    /// `ATRANSACTION` / `ACHANGE` / `ATRANSACTIONSTRING` tables). A store that already has history keeps
    /// recording it even without this option, so the history other processes read stays complete.
    public var persistentHistory: Bool
    /// Server stores (PostgreSQL): the most connections the store opens at once. nil takes the URL's `pool_size`
    /// (default 4).
    public var connectionPoolSize: Int?
    /// Server stores (PostgreSQL): whether and how the connection is encrypted. nil takes the URL's `sslmode` and
    /// `sslrootcert` (default `StoreTLS.prefer`).
    public var tls: StoreTLS?

    /// The default `writeTimeout`: 10 seconds.
    public static let defaultWriteTimeout: TimeInterval = 10

    /// Options; every argument has the everyday default.
    public init(
        readOnly: Bool = false, disposable: Bool = false, quarantine: Bool = false, initialMapSize: Int = 16 << 20,
        writeTimeout: TimeInterval = StoreOptions.defaultWriteTimeout, traceLevel: StoreTraceLevel? = nil,
        persistentHistory: Bool = false, connectionPoolSize: Int? = nil, tls: StoreTLS? = nil
    ) {
        self.persistentHistory = persistentHistory
        self.connectionPoolSize = connectionPoolSize
        self.tls = tls
        self.readOnly = readOnly
        self.disposable = disposable
        self.quarantine = quarantine
        self.initialMapSize = initialMapSize
        self.writeTimeout = writeTimeout
        self.traceLevel = traceLevel
    }

    /// Read-write, not disposable.
    public static let `default` = StoreOptions()
    /// Opened for reading only: saves and migrations are refused.
    public static let readOnly = StoreOptions(readOnly: true)
}

import Foundation
internal import GRDB
#if canImport(Glibc)
import Glibc
#endif
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - Opening and creating

extension SQLiteStore {
    /// What `init` needs from the file.
    package struct OpenedDatabase {
        var pool: DatabasePool
        package var schema: SQLiteSchema
        package var identifier: UUID
        /// The report of the migration this open ran; nil when nothing was migrated.
        package var migrationReport: CompatibilityReport? = nil
    }

    /// What an existing store says about itself.
    private struct Inspection {
        /// `Z_PRIMARYKEY`: `Z_NAME` -> `Z_ENT`.
        var numbers: [String: Int64]
        /// Table name upper-cased -> its columns.
        var columns: [String: [String]]
        var metadata: StoreMetadata
    }

    package static func open(
        url: URL, model: ObjectModel, configuration: String, entities: [EntityDescription], options: StoreOptions,
        progress: MigrationProgressHandler? = nil, joinTablesNamedBy: Set<String> = [], tracer: StoreTracer? = nil
    ) throws -> OpenedDatabase {
        let path = url.path
        // An empty file with no write-ahead log (one an app created with `FileManager.createFile` before adding
        // the store) holds nothing: it becomes a new store, as SQLite and Core Data treat it. It is removed so the
        // new store is linked into place whole, as a missing file's is (another process creating it meanwhile wins).
        if !options.readOnly, isEmptyWithoutLog(path) { removeFiles(path) }
        guard FileManager.default.fileExists(atPath: path) else {
            if options.readOnly {
                throw StoreError.openFailed(
                    path: path, configuration: configuration, reason: "no such file (a read-only store must exist)")
            }
            return try create(
                path: path, model: model, configuration: configuration, entities: entities, joinTablesNamedBy: joinTablesNamedBy,
                busyTimeout: options.writeTimeout, tracer: tracer)
        }
        let isWAL = try checkHeader(path: path, configuration: configuration)
        do {
            var migrator: SQLiteMigrator?
            if !options.readOnly {
                // Look before opening for writing: a writable open switches the file to WAL, which must never
                // happen to a file that turns out not to be a store — nor to one whose model is incompatible.
                let probe = try openingReadOnly(path: path, isWAL: isWAL, sharingMemoryWithWriters: true) {
                    try DatabaseQueue(path: $0, configuration: databaseConfiguration(readOnly: true))
                }
                defer { try? probe.close() }
                migrator = try probe.read { db in
                    _ = try inspect(db, path: path)
                    return try plannedMigration(db, path: path, model: model, configuration: configuration, progress: progress)
                }
            }
            let poolConfiguration = databaseConfiguration(readOnly: options.readOnly, busyTimeout: options.writeTimeout, tracer: tracer)
            let pool = options.readOnly
                ? try openingReadOnly(path: path, isWAL: isWAL) { try DatabasePool(path: $0, configuration: poolConfiguration) }
                : try DatabasePool(path: path, configuration: poolConfiguration)
            if let migrator {
                do {
                    try migrator.run(in: pool)
                } catch {
                    try? pool.close()
                    throw error
                }
            }
            var opened: OpenedDatabase
            do {
                // A file that is not a store says so first. Then rows a migration would change are read wrongly
                // until it runs, which a read-only store cannot have (a retyped, renamed or added attribute, an
                // inverse gained or lost): refused, as on every backend.
                let (inspection, refusal) = try pool.read { db -> (Inspection, String?) in
                    let inspection = try inspect(db, path: path)
                    guard options.readOnly else { return (inspection, nil) }
                    return (inspection, try readOnlyMigrationReason(db, path: path, model: model, configuration: configuration))
                }
                if let refusal { throw StoreError.schemaMismatch(path: path, configuration: configuration, reason: refusal) }
                opened = try openExisting(
                    pool: pool, inspection: inspection, path: path, model: model, configuration: configuration, entities: entities,
                    readOnly: options.readOnly)
            } catch {
                try? pool.close()
                throw error
            }
            opened.migrationReport = migrator?.report
            return opened
        } catch {
            throw classify(error, path: path, configuration: configuration, writable: !options.readOnly)
        }
    }

    /// Opens a store whose file `inspection` read (through `pool`).
    private static func openExisting(
        pool: DatabasePool, inspection: Inspection, path: String, model: ObjectModel, configuration: String,
        entities: [EntityDescription], readOnly: Bool
    ) throws -> OpenedDatabase {
        var inspection = inspection
        var numbers: [String: Int64] = [:]
        for root in SQLiteSchema.roots(of: entities, in: model) {
            for name in root.selfAndDescendantNames {
                guard let entity = model.entity(named: name) else { continue }
                // Real stores may number differently from the model, and keep an entity's former name.
                if let n = inspection.numbers[name] ?? entity.renamingIdentifier.flatMap({ inspection.numbers[$0] }) {
                    numbers[name] = n
                }
            }
        }
        for entity in entities where numbers[entity.name] == nil {
            throw StoreError.schemaMismatch(
                path: path, configuration: configuration,
                reason: "Z_PRIMARYKEY has no row for entity \(entity.name)"
                    + (entity.renamingIdentifier.map { " (nor for its renaming identifier \($0))" } ?? ""))
        }
        // Core Data writes NSPersistenceFrameworkVersion; Switchyard marks the stores it creates. A store with
        // neither was written by Switchyard before it kept Core Data's external storage format: bare bytes.
        let additional = inspection.metadata.additional
        let externalReferences = additional[StoreMetadata.frameworkVersionKey] != nil || additional[StoreMetadata.externalDataFormatKey] != nil
        // A store Switchyard wrote before it kept to-manys without inverse lacks their hidden keys (Core Data's
        // stores have them): a writable open adds the columns and indexes, a read-only one reads them empty.
        let missing = SQLiteSchema.missingHiddenColumns(
            model: model, storeEntities: entities, numbers: numbers, actualColumns: inspection.columns)
        if !missing.isEmpty, !readOnly {
            try pool.write { db in
                for spec in missing {
                    try db.execute(sql: "ALTER TABLE \(SQLiteNames.quote(spec.table)) ADD COLUMN \(SQLiteNames.ddl(spec.column)) INTEGER")
                    if let index = spec.index {
                        try db.execute(sql: index.createSQL.replacingOccurrences(of: "INDEX ", with: "INDEX IF NOT EXISTS ", options: .anchored, range: index.createSQL.range(of: "INDEX ")))
                    }
                }
            }
            inspection = try pool.read { db in try inspect(db, path: path) }
        }
        let schema = try SQLiteSchema.build(
            model: model, storeEntities: entities, numbers: numbers, actualColumns: inspection.columns, path: path,
            configuration: configuration, externalReferences: externalReferences, hiddenKeysMayBeMissing: readOnly)
        if !readOnly { try reconcileUniqueIndexes(pool, schema: schema, path: path, configuration: configuration) }
        return OpenedDatabase(pool: pool, schema: schema, identifier: inspection.metadata.uuid)
    }

    /// Reads `Z_PRIMARYKEY`, the tables' columns and `Z_METADATA`; a database without Core Data's tables is
    /// `StoreError.notAStore`.
    private static func inspect(_ db: Database, path: String) throws -> Inspection {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        let upper = Set(tables.map { $0.uppercased() })
        for required in ["Z_METADATA", "Z_PRIMARYKEY"] where !upper.contains(required) {
            throw StoreError.notAStore(
                path: path, expected: .sqlite,
                reason: "an SQLite database without Core Data's \(required) table (tables: "
                    + (tables.isEmpty ? "none" : tables.sorted().joined(separator: ", ")) + ")")
        }
        let numbers = try Self.entityNumbers(db)
        var columns: [String: [String]] = [:]
        for table in tables {
            columns[table.uppercased()] = try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLiteNames.quote(table)))")
                .compactMap { row -> String? in
                    if case .string(let name) = (row["name"] as DatabaseValue).storage { return name }
                    return nil
                }
        }
        return Inspection(numbers: numbers, columns: columns, metadata: try readMetadata(db, path: path))
    }

    // MARK: - New store

    private static func create(
        path: String, model: ObjectModel, configuration: String, entities: [EntityDescription], joinTablesNamedBy: Set<String>,
        busyTimeout: TimeInterval, tracer: StoreTracer?
    ) throws -> OpenedDatabase {
        var numbers: [String: Int64] = [:]
        for root in SQLiteSchema.roots(of: entities, in: model) {
            for name in root.selfAndDescendantNames {
                if let entity = model.entity(named: name) { numbers[name] = Int64(entity.entityNumber) }
            }
        }
        let schema = try SQLiteSchema.build(
            model: model, storeEntities: entities, numbers: numbers, actualColumns: nil, path: path,
            configuration: configuration, joinTablesNamedBy: joinTablesNamedBy)
        var metadata = StoreMetadata(
            storeType: StoreType.sqlite.rawValue, uuid: UUID(), versionHashes: model.versionHashes,
            versionIdentifiers: model.versionIdentifiers)
        metadata.additional[StoreMetadata.externalDataFormatKey] = .string("CoreData")
        let plist = try metadata.binaryPropertyList()
        // Built complete under a temporary name and linked into place: a process killed while creating leaves
        // no store or a whole one, never an empty or tableless file at `path` (that could not be opened again).
        removeAbandonedCreations(of: path)
        let temporary = path + ".creating-" + UUID().uuidString.prefix(8)
        // Held (flock) until the temporary file is gone, so another creation never mistakes it for abandoned.
        let claim = Self.openDescriptor(temporary, flags: O_RDWR | O_CREAT | O_CLOEXEC)
        if claim >= 0 { _ = flock(claim, LOCK_EX) }
        // Closed before the store opens at `path`: after the link it is the same inode, and closing any
        // descriptor of an inode drops every POSIX lock the process holds on it — SQLite's too, which let
        // another process take the database as unused and delete its WAL under this one.
        var claimOpen = claim >= 0
        func releaseClaim() {
            if claimOpen { close(claim) }
            claimOpen = false
        }
        defer { releaseClaim() }
        do {
            let building = try DatabasePool(path: temporary, configuration: databaseConfiguration(readOnly: false))
            do {
                try building.write { db in try createTables(db, schema: schema, model: model, metadata: metadata, plist: plist) }
                try building.close()   // the last connection checkpoints the WAL into the file and removes it
            } catch {
                try? building.close()
                throw error
            }
            // SQLite ignores a checkpoint that fails while it closes (an I/O error): the tables then live only in
            // the WAL, which must not be dropped with the temporary name.
            let wal = (try? FileManager.default.attributesOfItem(atPath: temporary + "-wal"))?[.size] as? NSNumber
            if let wal, wal.intValue > 0 {
                throw StoreError.openFailed(
                    path: path, configuration: configuration,
                    reason: "the new store could not be written: its write-ahead log was not checkpointed into the file (an I/O error)")
            }
            try synchronize(temporary, configuration: configuration)
        } catch {
            removeFiles(temporary)
            throw classify(error, path: path, configuration: configuration, writable: true)
        }
        // link(2) fails when `path` exists: another process created the store meanwhile, and it is kept.
        let linked = link(temporary, path) == 0
        let linkError = errno
        removeFiles(temporary)
        releaseClaim()
        if !linked, linkError != EEXIST {
            throw StoreError.openFailed(
                path: path, configuration: configuration,
                reason: "cannot create the store file: \(String(cString: strerror(linkError)))")
        }
        try? synchronize((path as NSString).deletingLastPathComponent, configuration: configuration)
        do {
            let pool = try DatabasePool(
                path: path, configuration: databaseConfiguration(readOnly: false, busyTimeout: busyTimeout, tracer: tracer))
            if linked { return OpenedDatabase(pool: pool, schema: schema, identifier: metadata.uuid) }
            let inspection = try pool.read { db in try inspect(db, path: path) }
            return try openExisting(
                pool: pool, inspection: inspection, path: path, model: model, configuration: configuration, entities: entities,
                readOnly: false)
        } catch {
            throw classify(error, path: path, configuration: configuration, writable: true)
        }
    }

    /// Removes `PATH.creating-*` files left by a process killed while it created the store at `path`: those
    /// whose creator's `flock` is gone.
    private static func removeAbandonedCreations(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".creating-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        for name in names where name.hasPrefix(prefix) && !name.hasSuffix("-wal") && !name.hasSuffix("-shm") {
            let candidate = (directory as NSString).appendingPathComponent(name)
            let descriptor = openDescriptor(candidate, flags: O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { removeFiles(candidate) }
            close(descriptor)
        }
    }

    private static func openDescriptor(_ path: String, flags: Int32) -> Int32 {
        #if canImport(Glibc)
        return Glibc.open(path, flags, 0o644)
        #else
        return Darwin.open(path, flags, 0o644)
        #endif
    }

    /// `fsync` of a file or directory, so a rename or link made after it survives a power loss too.
    private static func synchronize(_ path: String, configuration: String) throws {
        let descriptor = openDescriptor(path, flags: O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        if fsync(descriptor) != 0, errno != EINVAL {
            throw StoreError.openFailed(path: path, configuration: configuration, reason: "fsync failed: \(String(cString: strerror(errno)))")
        }
    }

    private static func createTables(
        _ db: Database, schema: SQLiteSchema, model: ObjectModel, metadata: StoreMetadata, plist: Data
    ) throws {
        for table in schema.tables {
            try db.execute(sql: table.createSQL)
            for index in table.indexes { try db.execute(sql: index.createSQL) }
        }
        for join in schema.joinTables {
            try db.execute(sql: join.createSQL)
            try db.execute(sql: join.indexSQL)
        }
        try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        // The model that wrote the store, so a later open can tell what changed (Switchyard's own cache
        // format: the model's XML, raw-DEFLATE compressed like Core Data's archive).
        try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [try ModelCache.encode(model)])
        for layout in schema.entities.values.sorted(by: { $0.number < $1.number }) {
            let parent = model.entity(named: layout.name)?.parentName.flatMap { schema.entities[$0]?.number } ?? 0
            try db.execute(
                sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                arguments: [layout.number, layout.name, parent])
        }
        try db.execute(
            sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
            arguments: [metadata.uuid.uuidString, plist])
    }

    private static func removeFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    // MARK: - Files

    /// Whether `path` is a 0-byte file whose `-wal` is absent or empty too: nothing that could hold a row.
    private static func isEmptyWithoutLog(_ path: String) -> Bool {
        func size(_ file: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return false }
        return size(path) == 0 && (size(path + "-wal") ?? 0) == 0
    }

    /// Checks the 100-byte SQLite header before SQLite sees the file, so an empty or foreign file gets a clear
    /// reason. Returns whether the header says WAL.
    package static func checkHeader(path: String, configuration: String) throws -> Bool {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError.notAStore(path: path, expected: .sqlite, reason: "it is a directory; a SQLite store is a file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError.openFailed(path: path, configuration: configuration, reason: "the file cannot be read")
        }
        defer { try? handle.close() }
        let header: Data
        do {
            header = try handle.read(upToCount: 100) ?? Data()
        } catch {
            throw StoreError.openFailed(path: path, configuration: configuration, reason: "cannot read the file: \(error)")
        }
        if header.isEmpty {
            throw StoreError.notAStore(path: path, expected: .sqlite, reason: "the file is empty (0 bytes)")
        }
        guard header.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw StoreError.notAStore(
                path: path, expected: .sqlite,
                reason: "not an SQLite database (SQLITE_NOTADB): the file does not start with the SQLite header")
        }
        guard header.count == 100 else {
            throw StoreError.notAStore(
                path: path, expected: .sqlite, reason: "truncated SQLite file: \(header.count) bytes, shorter than its header")
        }
        let bytes = [UInt8](header)
        return bytes[18] == 2 && bytes[19] == 2
    }

    /// Opens the file read-only through `open(uri)` with `readOnlyURI`, looking at its sidecars again when SQLite
    /// cannot open it: the URI follows the `-wal` and `-shm` seen a moment before, and a writer that closes in
    /// between (the last connection removes both, as the store a finished `loadStores` releases does) leaves a
    /// URI that no longer fits — SQLITE_CANTOPEN. A few fresh looks settle it; a file that truly cannot be
    /// opened fails with the same error after them.
    package static func openingReadOnly<T>(
        path: String, isWAL: Bool, sharingMemoryWithWriters: Bool = false, _ open: (String) throws -> T
    ) throws -> T {
        var attempt = 0
        while true {
            do {
                return try open(readOnlyURI(path: path, isWAL: isWAL, sharingMemoryWithWriters: sharingMemoryWithWriters))
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CANTOPEN && attempt < 4 {
                attempt += 1
                usleep(UInt32(2_000 * attempt))
            }
        }
    }

    /// A URI that opens the file without ever writing to it or its sidecars: `readonly_shm` when both sidecars
    /// exist and the `-wal` holds frames (rows in the `-wal` are read through the read-only `-shm`), `immutable` for a WAL file without a
    /// `-wal` (nothing else to read, and SQLite would otherwise create both sidecars).
    ///
    /// `sharingMemoryWithWriters` (the look before a writable open) leaves out `readonly_shm`: a connection
    /// that may not write the `-shm` fails with SQLITE_CANTOPEN while another connection is writing.
    package static func readOnlyURI(path: String, isWAL: Bool, sharingMemoryWithWriters: Bool = false) -> String {
        let fm = FileManager.default
        let hasWAL = fm.fileExists(atPath: path + "-wal")
        let hasSHM = fm.fileExists(atPath: path + "-shm")
        var query = "mode=ro"
        if isWAL && !hasWAL {
            query += "&immutable=1"
        } else if hasWAL && hasSHM && !sharingMemoryWithWriters && walHasFrames(path + "-wal") {
            let shared = fileURI(path, query: query + "&readonly_shm=1")
            // A writer killed while it opened the store can leave a `-shm` that a read-only one cannot use
            // (SQLITE_PROTOCOL, until some connection rebuilds it): then read like a plain read-only
            // connection, which rebuilds the WAL index in the `-shm` and writes nothing else.
            return readOnlySHMWorks(shared) ? shared : fileURI(path, query: query)
        }
        return fileURI(path, query: query)
    }

    /// Whether the `-wal` holds more than its 32-byte header. Without frames there is nothing in it to read and
    /// `readonly_shm` only risks SQLite's ten seconds of retries before SQLITE_PROTOCOL on a stale `-shm`.
    private static func walHasFrames(_ walPath: String) -> Bool {
        let size = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? NSNumber)?.intValue ?? 0
        return size > 32
    }

    private static func fileURI(_ path: String, query: String) -> String {
        let escaped = path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3f")
            .replacingOccurrences(of: "#", with: "%23")
        return "file://" + escaped + "?" + query
    }

    /// Whether a connection on `uri` can read the schema; only SQLITE_PROTOCOL counts as "no" (any other
    /// failure is for the real open to report).
    private static func readOnlySHMWorks(_ uri: String) -> Bool {
        do {
            let probe = try DatabaseQueue(path: uri, configuration: databaseConfiguration(readOnly: true))
            defer { try? probe.close() }
            _ = try probe.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return true
        } catch let error as DatabaseError where error.resultCode == .SQLITE_PROTOCOL {
            return false
        } catch {
            return true
        }
    }

    /// GRDB configuration shared by the writer and readers: the match function on every connection, a busy
    /// timeout for other connections' locks (`StoreOptions.writeTimeout`, so SQLite and LMDB give up alike).
    static func databaseConfiguration(
        readOnly: Bool, busyTimeout: TimeInterval = StoreOptions.defaultWriteTimeout, tracer: StoreTracer? = nil
    ) -> Configuration {
        var configuration = Configuration()
        if let tracer, tracer.level >= .statements {
            // Every statement with its duration; its arguments only at level 3.
            configuration.publicStatementArguments = tracer.level >= .arguments
            configuration.prepareDatabase { db in
                db.trace(options: .profile) { event in tracer.emit("SQL \(event)") }
            }
        }
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(max(0, busyTimeout))
        configuration.label = "Switchyard.SQLiteStore"
        configuration.prepareDatabase { db in
            db.add(function: SQLPredicateCompiler.matchFunction)
            db.add(function: SQLPredicateCompiler.listValueFunction)
            for function in coreDataTriggerFunctions { db.add(function: function) }
        }
        return configuration
    }

    /// Core Data's derived-attribute triggers call these functions; no-ops let writes to such tables succeed
    /// (the triggers' own UPDATE still maintains the derived value).
    private static let coreDataTriggerFunctions: [DatabaseFunction] = [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
    ].map { DatabaseFunction($0, argumentCount: nil, pure: false) { _ in nil } }

    /// Turns an open-time SQLite error into what it means: not a database, truncated or corrupt, unopenable.
    /// `writable`: the store was opened or created for writing, so a folder that cannot be written explains a
    /// failure to open (a read-only open needs no more than reading).
    private static func classify(_ error: Error, path: String, configuration: String, writable: Bool) -> Error {
        guard let error = error as? DatabaseError else {
            return mapError(error, path: path, configuration: configuration)
        }
        let detail = "SQLite code \(error.extendedResultCode.rawValue): \(error.message ?? "")"
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return StoreError.notAStore(path: path, expected: .sqlite, reason: "not an SQLite database (SQLITE_NOTADB, \(detail))")
        case .SQLITE_CORRUPT:
            return StoreError.notAStore(
                path: path, expected: .sqlite, reason: "the SQLite file is truncated or corrupt (SQLITE_CORRUPT, \(detail))")
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
            // SQLite says only "unable to open database file"; the folder says why (missing, read-only, no permission).
            let folder = writable ? DiskDiagnosis.folderProblem((path as NSString).deletingLastPathComponent) : nil
            return StoreError.openFailed(
                path: path, configuration: configuration, reason: "cannot open the database (\(detail))" + (folder.map { ": \($0)" } ?? ""))
        default:
            return mapError(error, path: path, configuration: configuration)
        }
    }

    /// `Z_PRIMARYKEY`'s entity numbers by entity name, read as raw values: a damaged row is skipped, never a
    /// decoding trap.
    static func entityNumbers(_ db: Database) throws -> [String: Int64] {
        var numbers: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") {
            guard case .int64(let number) = (row[0] as DatabaseValue).storage,
                case .string(let name) = (row[1] as DatabaseValue).storage
            else { continue }
            numbers[name] = number
        }
        return numbers
    }
}

import Foundation
internal import CLMDB
import SwitchyardModel
import SwitchyardStores

// MARK: - LMDBEnvironment

/// One `MDB_env`: a store directory holding `data.mdb` and `lock.mdb`, opened in `init`, closed in `deinit`
/// (or by `close()` when the store is destroyed).
///
/// LMDB forbids opening the same environment twice in one process (closing either copy drops the other's
/// `fcntl` locks), so stores get their environment from `shared(...)`, which hands out the one open instance
/// per directory. The environment also owns the rules around its handle:
/// - every transaction runs inside a *gate*, because `mdb_env_set_mapsize` may only run while this process has
///   no transaction open: growing the map waits for the gate to empty and holds new transactions back;
/// - writes are serialized by a lock here (LMDB would block them anyway, but inside its own mutex, where a
///   waiting writer would hold the gate open and stall a map growth);
/// - reset read transactions are kept for reuse, saving `mdb_txn_begin`'s allocation and reader-slot search.
///
/// `@unchecked Sendable`: LMDB environments are thread-safe; the handle only changes in `close()`, under the
/// gate, and the rest is behind locks.
package final class LMDBEnvironment: @unchecked Sendable {
    /// The store directory.
    package let path: String
    /// The configuration of the store that opened the environment (for errors).
    package let configuration: String
    /// Opened with `MDB_RDONLY`.
    package let isReadOnly: Bool
    /// The directory with symlinks resolved: the registry key.
    private let canonicalPath: String
    /// The `MDB_env`; read only inside the gate, cleared by `close()`.
    private var handle: OpaquePointer?
    private let gate = TransactionGate()
    private let writeLock = NSLock()
    /// Reset read-only transactions waiting to be renewed.
    private let idleReaders = Locked<[LMDBTransaction]>([])
    /// How long a write waits for a writer in another process before giving up (see `LMDBWriterLock`).
    package let writeTimeout: TimeInterval
    /// `data.mdb`'s descriptor (LMDB's own), locked with `flock` around each write; -1 when read-only.
    private let dataDescriptor: Int32
    /// The device and inode of the `data.mdb` LMDB opened (nil if unknown), to notice the file at the path
    /// being removed or replaced underneath the open environment (see `openedFileStatus`).
    private let openedFile: (device: UInt64, inode: UInt64)?
    /// The largest size `data.mdb` had when a write began, and the newest commit a write saw (see
    /// `changedFileProblem`); read and written only under `writeLock`.
    @exclusivity(unchecked) private var largestDataSize: Int64 = 0
    @exclusivity(unchecked) private var newestCommit: UInt64 = 0

    /// The map never grows beyond this (1 TiB): a runaway write fails with `MDB_MAP_FULL` instead.
    package static let maximumMapSize = 1 << 40
    /// How many reset readers are kept for reuse.
    private static let idleReaderLimit = 8
    private static let registry = Locked<[String: WeakEnvironment]>([:])

    // MARK: - Opening and closing

    /// The open environment for `path`, or a newly opened one. `data.mdb` is checked before LMDB maps it, so a
    /// foreign or truncated file is `StoreError.notAStore` rather than a crash.
    ///
    /// `mdb_env_open` runs before the environment object exists, so a failed open (an empty `data.mdb` opened
    /// read-only, a read-only file system) throws without a `deinit` that would take the registry lock again.
    package static func shared(
        path: String, configuration: String, mapSize: Int, maxDatabases: Int, readOnly: Bool,
        writeTimeout: TimeInterval = StoreOptions.defaultWriteTimeout
    ) throws -> LMDBEnvironment {
        let canonical = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        // Held until after the lock: releasing the environment of a deleted store inside it could run its deinit,
        // which takes the same lock.
        var stale: LMDBEnvironment?
        defer { withExtendedLifetime(stale) {} }
        let (environment, opened) = try registry.withLock { registry -> (LMDBEnvironment, Bool) in
            // An open environment is checked below, outside the lock: a throw there releases it, and if that was
            // the last reference its deinit takes the registry lock (a second take of this mutex would hang).
            // An environment whose whole store was deleted (data.mdb and lock.mdb gone: a disposable store
            // recreated, a store destroyed, by a coordinator after another one removed it but still holds it) maps
            // files nobody can reach: a new store at the path gets an environment of its own. (With lock.mdb
            // still there, two environments would share its locks, which LMDB forbids within a process.)
            if let open = registry[canonical]?.environment {
                if !open.storeWasDeleted { return (open, false) }
                stale = open
            }
            try LMDBFileCheck.validate(directory: path, configuration: configuration, readOnly: readOnly)
            let handle = try openHandle(path: path, configuration: configuration, mapSize: mapSize, maxDatabases: maxDatabases, readOnly: readOnly)
            let environment = LMDBEnvironment(
                path: path, configuration: configuration, canonicalPath: canonical, handle: handle, readOnly: readOnly,
                writeTimeout: writeTimeout)
            registry[canonical] = WeakEnvironment(environment: environment)
            return (environment, true)
        }
        if !opened {
            if environment.isReadOnly, !readOnly {
                throw StoreError.openFailed(
                    path: path, configuration: configuration, reason: "the store is already open read-only in this process")
            }
            // The open environment is handed out only while the path still holds the file it maps, intact:
            // otherwise the new store would read a file nobody sees (removed or replaced) or fault on pages
            // past a truncated end (SIGBUS). The file is checked as at a first open: meta pages, then the pages.
            if let problem = environment.openedFileStatus().problem {
                throw StoreError.openFailed(path: path, configuration: configuration, reason: problem + Self.reopenAdvice)
            }
            try LMDBFileCheck.validate(directory: path, configuration: configuration, readOnly: readOnly)
        }
        // Outside the registry lock: if the walk throws, the environment's deinit takes that lock.
        try environment.walkPages(full: nil)
        return environment
    }

    private init(
        path: String, configuration: String, canonicalPath: String, handle: OpaquePointer, readOnly: Bool, writeTimeout: TimeInterval
    ) {
        self.configuration = configuration
        self.path = path
        self.canonicalPath = canonicalPath
        self.isReadOnly = readOnly
        self.handle = handle
        self.writeTimeout = writeTimeout
        var descriptor: mdb_filehandle_t = -1
        let hasDescriptor = mdb_env_get_fd(handle, &descriptor) == 0
        self.dataDescriptor = readOnly || !hasDescriptor ? -1 : descriptor
        var status = stat()
        let described = hasDescriptor && fstat(descriptor, &status) == 0
        openedFile = described ? (UInt64(status.st_dev), UInt64(status.st_ino)) : nil
        largestDataSize = described ? Int64(status.st_size) : 0
    }

    /// What a store is told when its file changed underneath the open environment.
    private static let reopenAdvice =
        "; nothing was read or written. Close every coordinator of this store in this process (they still hold the old file) and open it again"

    /// `data.mdb` at the store's path against the file this environment maps: `problem` says why it is not that
    /// file any more (removed, or replaced by another), nil while it is; `size` is its length, nil when unknown
    /// (not 0, which a file cut to nothing has).
    /// LMDB keeps using the file it opened, so a save into a removed file would succeed and be lost. Other `stat`
    /// failures (a directory made unreadable) are not taken as a change: the open descriptor still works.
    private func openedFileStatus() -> (problem: String?, size: Int64?) {
        guard let openedFile else { return (nil, nil) }
        var status = stat()
        guard stat(canonicalPath + "/data.mdb", &status) == 0 else {
            let code = errno
            return (code == ENOENT || code == ENOTDIR ? "data.mdb was removed while the store was open in this process" : nil, nil)
        }
        if UInt64(status.st_dev) != openedFile.device || UInt64(status.st_ino) != openedFile.inode {
            return ("data.mdb was replaced by another file while the store was open in this process", Int64(status.st_size))
        }
        return (nil, Int64(status.st_size))
    }

    /// Whether neither `data.mdb` nor `lock.mdb` is at the store's path any more (both removed, or the directory).
    private var storeWasDeleted: Bool {
        guard openedFileStatus().problem != nil else { return false }
        var status = stat()
        return stat(canonicalPath + "/lock.mdb", &status) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }

    /// Why a write must not start: `data.mdb` removed or replaced (`openedFileStatus`), cut shorter than it has
    /// been (LMDB 0.9 never shrinks the file), or holding an older commit than this environment has seen (a copy
    /// written over it in place). Records the size and transaction seen. Runs under `writeLock`, inside the gate.
    private func changedFileProblem(_ env: OpaquePointer) -> String? {
        let status = openedFileStatus()
        if let problem = status.problem { return problem }
        if let size = status.size {
            if size < largestDataSize {
                return "data.mdb was cut to \(size) bytes while the store was open in this process (it had \(largestDataSize))"
            }
            largestDataSize = size
        }
        var info = MDB_envinfo()
        guard mdb_env_info(env, &info) == 0 else { return nil }
        // `me_last_txnid` is a size_t, read bit for bit (a damaged meta page can hold any).
        let committed = UInt64(UInt(bitPattern: info.me_last_txnid))
        if committed < newestCommit {
            return "data.mdb was overwritten with an older copy (commit \(committed), this process had seen \(newestCommit)) while the store was open in this process"
        }
        newestCommit = committed
        return nil
    }

    /// Takes the cross-process writer lock (nil when there is no descriptor to lock).
    private func acquireWriterLock() throws -> LMDBWriterLock? {
        guard dataDescriptor >= 0 else { return nil }
        return try LMDBWriterLock.acquire(descriptor: dataDescriptor, timeout: writeTimeout, path: path, configuration: configuration)
    }

    /// Walks the B-tree pages of the newest snapshot (`LMDBFileCheck.walk`) while a read transaction holds it,
    /// so a writer in another process cannot reuse the pages being read (it could while nothing held them, and
    /// a healthy store then looked damaged). `full` as in `LMDBFileCheck.walk`; true walks every page.
    package func walkPages(full: Bool?) throws {
        for _ in 0..<100 {
            let walked = try read { transaction in
                // `mdb_txn_id` returns a size_t, which Swift reads as Int: the file's 64-bit id, taken bit for bit
                // (a damaged meta page can hold any, and converting a "negative" one trapped).
                let snapshot = UInt64(UInt(bitPattern: mdb_txn_id(transaction.handle)))
                return try LMDBFileCheck.walk(directory: path, configuration: configuration, snapshot: snapshot, full: full)
            }
            if walked { return }
        }
        throw StoreError.openFailed(
            path: path, configuration: configuration,
            reason: "another process commits too fast for the store's pages to be checked (100 tries); try again")
    }

    /// Creates and opens the `MDB_env`; on failure it is closed again and the error thrown.
    private static func openHandle(
        path: String, configuration: String, mapSize: Int, maxDatabases: Int, readOnly: Bool
    ) throws -> OpaquePointer {
        var created: OpaquePointer?
        try LMDB.check(mdb_env_create(&created), operation: "mdb_env_create", path: path, configuration: configuration)
        guard let env = created else {
            throw StoreError.lmdb(path: path, configuration: configuration, call: "mdb_env_create", code: ENOMEM, message: "no environment handle")
        }
        do {
            try LMDB.check(mdb_env_set_maxdbs(env, MDB_dbi(maxDatabases)), operation: "mdb_env_set_maxdbs", path: path, configuration: configuration)
            try LMDB.check(mdb_env_set_maxreaders(env, 256), operation: "mdb_env_set_maxreaders", path: path, configuration: configuration)
            // Smaller than the data already written is fine: LMDB then maps the file's size.
            try LMDB.check(mdb_env_set_mapsize(env, Self.roundedMapSize(mapSize)), operation: "mdb_env_set_mapsize", path: path, configuration: configuration)
            // MDB_NOTLS: a read transaction belongs to its handle, not its thread, so Swift tasks may hop threads
            // and idle readers can be reused by any thread.
            let flags = UInt32(MDB_NOTLS) | (readOnly ? UInt32(MDB_RDONLY) : 0)
            try LMDB.check(mdb_env_open(env, path, flags, 0o644), operation: "mdb_env_open", path: path, configuration: configuration)
            // Reader slots left by a process that was killed would pin old pages forever.
            var dead: Int32 = 0
            _ = mdb_reader_check(env, &dead)
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    deinit {
        // No transaction can be open: each one runs inside a call on a live environment.
        let idle = idleReaders.withLock { readers in
            defer { readers.removeAll() }
            return readers
        }
        for reader in idle { reader.abort() }
        let canonical = canonicalPath
        let env = handle
        Self.registry.withLock { registry in
            // Closing under the registry lock: a new open of this directory waits until the old fds are gone.
            if let env { mdb_env_close(env) }
            if registry[canonical] != nil, registry[canonical]?.environment == nil { registry[canonical] = nil }
        }
    }

    /// Closes the environment now (for `destroy()`, a move, a replace): waits for running transactions, then
    /// every later call throws `StoreError.closed`. Callers first call `refuseInsideOwnTransaction`: from inside
    /// a transaction of this environment the close would wait for itself.
    package func close() {
        gate.close {
            let idle = idleReaders.withLock { readers in
                defer { readers.removeAll() }
                return readers
            }
            for reader in idle { reader.abort() }
            let canonical = canonicalPath
            Self.registry.withLock { registry in
                if let env = handle { mdb_env_close(env) }
                handle = nil
                if registry[canonical]?.environment === self { registry[canonical] = nil }
            }
        }
    }

    // MARK: - Memory

    /// Drops the store file's pages from this process's resident memory (`madvise(MADV_DONTNEED)` over the
    /// mapping of `data.mdb`, found in `/proc/self/maps`; LMDB does not expose its map address unless the map
    /// is fixed). Safe because the map is read-only (no `MDB_WRITEMAP`): its pages are clean copies of the file,
    /// read again from the page cache on the next access. A long walk over a large store (a migration, a split)
    /// calls it between batches so its resident size stays that of a batch, not of the file. Nothing happens
    /// where `/proc` is missing. Outside a transaction only (see `releaseMappedPagesInTransaction`).
    package func releaseMappedPages() {
        guard gate.enter({ handle }) != nil else { return }
        defer { gate.leave() }
        dropMappedPages()
    }

    /// `releaseMappedPages` for a caller inside a transaction of this environment (a long walk). The gate is
    /// not entered again: a map growth or a close waiting for that transaction to end holds new entries back,
    /// so a second entry would wait for itself. None is needed: while the transaction is in flight the map can
    /// be neither moved nor unmapped.
    package func releaseMappedPagesInTransaction() {
        dropMappedPages()
    }

    private func dropMappedPages() {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return }
        let file = canonicalPath + "/data.mdb"
        for line in maps.split(separator: "\n") where line.hasSuffix(file) {
            // "start-end perms offset dev inode path"
            guard let range = line.split(separator: " ").first, let dash = range.firstIndex(of: "-"),
                let start = UInt(range[..<dash], radix: 16), let end = UInt(range[range.index(after: dash)...], radix: 16), end > start,
                let address = UnsafeMutableRawPointer(bitPattern: start)
            else { continue }
            _ = madvise(address, Int(end - start), MADV_DONTNEED)
        }
    }

    // MARK: - Copying

    /// Writes a consistent copy of the environment (the newest committed snapshot, read under a read
    /// transaction, so writers keep going) into the existing empty directory `directory`: `mdb_env_copy2`,
    /// compacted (free pages left out, pages renumbered) with `compact`.
    package func copy(to directory: String, compact: Bool) throws {
        guard let env = gate.enter({ handle }) else { throw StoreError.closed(path: path, configuration: configuration) }
        defer { gate.leave() }
        try LMDB.check(
            mdb_env_copy2(env, directory, compact ? UInt32(MDB_CP_COMPACT) : 0), operation: "mdb_env_copy2(\(directory))", path: path,
            configuration: configuration)
    }

    // MARK: - Transactions

    /// How often a transaction begins again after another process grew the map (MDB_MAP_RESIZED) before the
    /// error is reported: a writer committing steadily can grow it again between the adoption and the begin.
    private static let resizeRetries = 48

    /// Runs `body` in a read-only snapshot. Keep it short: an open reader pins old pages and holds off map growth.
    package func read<R>(_ body: (LMDBTransaction) throws -> R) throws -> R {
        let transaction = try enterBeginning { try checkoutReader($0) }
        defer {
            checkin(transaction)
            gate.leave()
        }
        return try body(transaction)
    }

    /// Enters the gate and begins a read transaction with `begin`; the caller leaves the gate when done. Another
    /// process growing the map (a writer committing) makes the begin fail with MDB_MAP_RESIZED: its size is
    /// adopted outside the gate and the begin tried again, up to `resizeRetries` times.
    private func enterBeginning(_ begin: (OpaquePointer) throws -> LMDBTransaction) throws -> LMDBTransaction {
        var resized = 0
        while true {
            guard let env = gate.enter({ handle }) else { throw StoreError.closed(path: path, configuration: configuration) }
            do {
                return try begin(env)
            } catch let error as StoreError where error.lmdbCode == LMDB.mapResized && resized < Self.resizeRetries {
                gate.leave()
                resized += 1
                try adoptMapSize()
            } catch {
                gate.leave()
                throw error
            }
        }
    }

    /// Runs `body` in one write transaction and commits it; any error aborts everything. On `MDB_MAP_FULL`
    /// (from a put or from the commit) the transaction is aborted, the map doubled and `body` run again from
    /// the start, so `body` must derive everything it writes from its inputs.
    @discardableResult
    package func write<R>(_ body: (LMDBTransaction) throws -> R) throws -> R {
        if isReadOnly { throw StoreError.readOnly(path: path, configuration: configuration, operation: "write") }
        writeLock.lock()
        defer { writeLock.unlock() }
        let crossProcess = try acquireWriterLock()
        defer { crossProcess?.unlock() }
        var retries = 0
        while true {
            guard let env = gate.enter({ handle }) else { throw StoreError.closed(path: path, configuration: configuration) }
            let mapped = Self.mapSize(of: env)
            var transaction: LMDBTransaction?
            do {
                // Before anything is written: a commit into a file the path no longer holds would report success
                // and be lost (one `stat` a save; `mdb_env_info` reads the mapped meta pages).
                if retries == 0, let problem = changedFileProblem(env) {
                    throw StoreError.lmdb(
                        path: path, configuration: configuration, call: "stat(data.mdb)", code: ESTALE, message: problem + Self.reopenAdvice)
                }
                let txn = try LMDBTransaction(environment: self, environmentHandle: env, readOnly: false)
                transaction = txn
                let result = try body(txn)
                try txn.commit()
                gate.leave()
                return result
            } catch let error as StoreError where error.lmdbCode == LMDB.mapFull && retries < 48 {
                transaction?.abort()
                gate.leave()
                retries += 1
                try grow(from: mapped, after: error)
            } catch let error as StoreError where error.lmdbCode == LMDB.mapResized && retries < Self.resizeRetries {
                transaction?.abort()
                gate.leave()
                retries += 1
                try adoptMapSize()
            } catch {
                transaction?.abort()
                gate.leave()
                throw error
            }
        }
    }

    /// Runs `body` in a fresh read-only transaction and commits it, so databases it opens stay open (ending a
    /// read transaction any other way closes them). Serialized with writes: LMDB forbids concurrent
    /// `mdb_dbi_open` calls.
    package func readKeepingDatabases<R>(_ body: (LMDBTransaction) throws -> R) throws -> R {
        writeLock.lock()
        defer { writeLock.unlock() }
        let transaction = try enterBeginning { try LMDBTransaction(environment: self, environmentHandle: $0, readOnly: true) }
        defer { gate.leave() }
        do {
            let result = try body(transaction)
            try transaction.commit()
            return result
        } catch {
            transaction.abort()
            throw error
        }
    }

    // MARK: - Map size

    /// The current size of the memory map in bytes.
    package var mapSize: Int {
        guard let env = gate.enter({ handle }) else { return 0 }
        defer { gate.leave() }
        return Self.mapSize(of: env)
    }

    /// Doubles the map unless it already grew past `mapped` (another process, or an adopted size).
    private func grow(from mapped: Int, after error: StoreError) throws {
        guard mapped < Self.maximumMapSize else { throw error }
        try refuseInsideOwnTransaction("grow the map for this write (\(error.localizedDescription))")
        let grown: Void? = try gate.exclusively({ handle }) { env in
            guard Self.mapSize(of: env) <= mapped else { return }
            let next = Self.roundedMapSize(min(mapped * 2, Self.maximumMapSize))
            try LMDB.check(mdb_env_set_mapsize(env, next), operation: "mdb_env_set_mapsize(\(next))", path: path, configuration: configuration)
        }
        if grown == nil { throw StoreError.closed(path: path, configuration: configuration) }
    }

    /// Adopts the map size another process recorded (`mdb_env_set_mapsize(0)` after `MDB_MAP_RESIZED`).
    private func adoptMapSize() throws {
        try refuseInsideOwnTransaction("adopt the map size another process set")
        let adopted: Void? = try gate.exclusively({ handle }) { env in
            try LMDB.check(mdb_env_set_mapsize(env, 0), operation: "mdb_env_set_mapsize(0)", path: path, configuration: configuration)
        }
        if adopted == nil { throw StoreError.closed(path: path, configuration: configuration) }
    }

    /// Throws `StoreError.insideOwnTransaction` when the calling thread has a transaction of this environment in
    /// flight: a map change waits for every transaction to end (LMDB requires it), this one included.
    package func refuseInsideOwnTransaction(_ operation: String) throws {
        if gate.isEnteredByCurrentThread {
            throw StoreError.insideOwnTransaction(path: path, configuration: configuration, operation: operation)
        }
    }

    private static func mapSize(of env: OpaquePointer) -> Int {
        var info = MDB_envinfo()
        _ = mdb_env_info(env, &info)
        return info.me_mapsize
    }

    /// LMDB wants a multiple of the OS page size; 64 KiB covers every page size in use.
    private static func roundedMapSize(_ size: Int) -> Int {
        let unit = 1 << 16
        return max(unit, (size + unit - 1) / unit * unit)
    }

    // MARK: - Reader reuse

    private func checkoutReader(_ env: OpaquePointer) throws -> LMDBTransaction {
        while let idle = idleReaders.withLock({ $0.popLast() }) {
            do {
                try idle.renew()
                return idle
            } catch let error as StoreError where error.lmdbCode == LMDB.mapResized {
                throw error
            } catch {
                continue   // that handle is gone; try the next or begin a new one
            }
        }
        return try LMDBTransaction(environment: self, environmentHandle: env, readOnly: true)
    }

    private func checkin(_ transaction: LMDBTransaction) {
        transaction.reset()
        guard transaction.state == .reset else { return }
        idleReaders.withLock { readers in
            if readers.count < Self.idleReaderLimit { readers.append(transaction) }
        }
    }
}

// MARK: - Registry entry

/// A weak reference, so the registry never keeps an environment open by itself.
private struct WeakEnvironment {
    weak var environment: LMDBEnvironment?
}

// MARK: - TransactionGate

/// Counts the transactions in flight and lets one caller run alone (map growth, close) once they finish.
/// Writer-preferring: while someone waits to run alone, new transactions wait too, so growth cannot starve.
private final class TransactionGate: @unchecked Sendable {
    private let condition = NSCondition()
    // Every write to the three below, and every read but one, holds `condition`; `exclusively` reads `closed`
    // after unlocking, while its own `exclusive = true` keeps `close` (the only writer of `closed`) waiting, and
    // the lock ordered any earlier write before it. The run-time exclusivity check (swift_beginAccess /
    // swift_endAccess) only ever caught overlapping accesses on one thread, and cost about 120 instructions of
    // a read transaction.
    /// The thread of each transaction in flight.
    @exclusivity(unchecked) private var active = TransactionThreads()
    @exclusivity(unchecked) private var exclusive = false
    @exclusivity(unchecked) private var closed = false

    /// Waits for any exclusive section, then counts one more transaction in flight. Returns the environment's
    /// handle, or `nil` once the environment is closed.
    func enter(_ handle: () -> OpaquePointer?) -> OpaquePointer? {
        condition.lock()
        defer { condition.unlock() }
        while exclusive { condition.wait() }
        guard !closed, let env = handle() else { return nil }
        active.enter()
        return env
    }

    /// Ends a transaction begun with `enter`.
    func leave() {
        condition.lock()
        active.leave()
        if active.isEmpty { condition.broadcast() }
        condition.unlock()
    }

    /// Whether the calling thread has a transaction in flight: an exclusive section or a close asked from there
    /// would wait for itself.
    var isEnteredByCurrentThread: Bool {
        condition.withLock { active.containsCurrentThread }
    }

    /// Runs `body` while no transaction is in flight in this process; `nil` if the environment is closed.
    func exclusively<R>(_ handle: () -> OpaquePointer?, _ body: (OpaquePointer) throws -> R) rethrows -> R? {
        condition.lock()
        while exclusive { condition.wait() }
        exclusive = true
        while !active.isEmpty { condition.wait() }
        condition.unlock()
        defer {
            condition.lock()
            exclusive = false
            condition.broadcast()
            condition.unlock()
        }
        guard !closed, let env = handle() else { return nil }
        return try body(env)
    }

    /// Waits for every transaction, runs `body` (which closes the handle) and refuses all later entries.
    func close(_ body: () -> Void) {
        condition.lock()
        while exclusive { condition.wait() }
        exclusive = true
        while !active.isEmpty { condition.wait() }
        if !closed { body() }
        closed = true
        exclusive = false
        condition.broadcast()
        condition.unlock()
    }
}

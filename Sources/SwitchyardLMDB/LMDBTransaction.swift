import Foundation
internal import CLMDB
import SwitchyardStores

// MARK: - LMDBTransaction

/// One `MDB_txn`: begun in `init`, ended by `commit()` or `abort()`, aborted in `deinit` if still open.
///
/// A read-only transaction can be `reset()` and `renew()`ed so the environment reuses its handle and reader
/// slot (`MDB_NOTLS` ties the slot to the handle, not to a thread). Keys and values returned by `get` and by
/// cursors point into LMDB's memory map: they are valid only until the transaction ends or writes again, so
/// callers decode them at once and never keep them.
package final class LMDBTransaction {
    /// Where a transaction is in its life.
    package enum State {
        case active
        /// Read-only, snapshot released, handle kept for `renew()`.
        case reset
        case finished
    }

    /// Flags for `put`.
    package struct PutFlags: OptionSet {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Fail with `false` instead of replacing an existing key.
        package static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    }

    /// The environment. Unowned: the environment keeps idle readers, and every transaction runs inside a call
    /// on the environment, which therefore outlives it.
    package unowned let environment: LMDBEnvironment
    package let isReadOnly: Bool
    /// The `MDB_txn` pointer; valid until `state` is `.finished`.
    package let handle: OpaquePointer
    /// Transactions, cursors and readers belong to one thread at a time (they are not `Sendable`), so their
    /// hot mutable state skips the run-time exclusivity check, which costs more than the work it guards.
    @exclusivity(unchecked) package private(set) var state: State = .active
    /// Cursors still open in this transaction (unretained: each cursor removes itself when it closes). A write
    /// transaction frees its cursors when it ends, so they are closed here first, never twice. Rarely more than
    /// one or two, so a plain array.
    @exclusivity(unchecked) private var cursors: [Unmanaged<LMDBCursor>] = []
    /// A read-only transaction's idle cursors, one per database, kept across `reset()`/`renew()` and renewed
    /// on next use (`mdb_cursor_renew`): a lookup then costs no `mdb_cursor_open`.
    @exclusivity(unchecked) private var idleCursors: [LMDBCursor] = []
    /// `mdb_put` and `mdb_del` calls made so far (for the level-2 trace of a write transaction).
    @exclusivity(unchecked) package private(set) var puts = 0
    @exclusivity(unchecked) package private(set) var deletes = 0

    /// The store directory, for errors (copied: reading it through the unowned environment costs a retain).
    package let path: String
    /// The configuration of the store that opened the environment, for errors.
    package let configuration: String

    /// Begins a transaction. The environment calls this only while it is open and inside its transaction gate.
    package init(environment: LMDBEnvironment, environmentHandle: OpaquePointer, readOnly: Bool) throws {
        var txn: OpaquePointer?
        let flags: UInt32 = readOnly ? UInt32(MDB_RDONLY) : 0
        try LMDB.check(
            mdb_txn_begin(environmentHandle, nil, flags, &txn), operation: readOnly ? "mdb_txn_begin(read)" : "mdb_txn_begin(write)",
            path: environment.path, configuration: environment.configuration)
        guard let txn else {
            throw StoreError.lmdb(path: environment.path, configuration: environment.configuration, call: "mdb_txn_begin", code: 0, message: "no transaction returned")
        }
        self.environment = environment
        self.path = environment.path
        self.configuration = environment.configuration
        self.isReadOnly = readOnly
        self.handle = txn
    }

    deinit {
        if state != .finished {
            closeCursors()
            mdb_txn_abort(handle)
        }
    }

    // MARK: - Ending

    /// Commits; afterwards the transaction is finished whatever the outcome (LMDB frees it even on failure).
    package func commit() throws {
        try requireActive("mdb_txn_commit")
        closeCursors()
        state = .finished
        try LMDB.check(mdb_txn_commit(handle), operation: "mdb_txn_commit", path: path, configuration: configuration)
    }

    /// Abandons every change (a no-op once finished).
    package func abort() {
        guard state != .finished else { return }
        closeCursors()
        state = .finished
        mdb_txn_abort(handle)
    }

    /// Releases a read-only snapshot but keeps the handle for `renew()`.
    package func reset() {
        guard isReadOnly, state == .active else { return }
        closeCursors(keepingIdle: true)
        mdb_txn_reset(handle)
        state = .reset
    }

    /// Takes a fresh snapshot with a reset read-only handle.
    package func renew() throws {
        guard isReadOnly, state == .reset else {
            throw StoreError.lmdb(path: path, configuration: configuration, call: "mdb_txn_renew", code: EINVAL, message: "the transaction was not reset")
        }
        let rc = mdb_txn_renew(handle)
        if rc != 0 {
            // A failed renew leaves the handle unusable: free it now rather than in a later reset.
            state = .finished
            mdb_txn_abort(handle)
        }
        try LMDB.check(rc, operation: "mdb_txn_renew", path: path, configuration: configuration)
        state = .active
    }

    // MARK: - Data

    /// The value stored under `key`, or `nil`; the bytes live in the map (see the type's comment).
    package func get(_ database: LMDBDatabase, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try requireActive("mdb_get")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(handle, database.handle, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try LMDB.check(rc, operation: database.getCall, path: path, configuration: configuration)
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// The value under `key`, copied out of the map.
    package func get(_ database: LMDBDatabase, _ key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in try get(database, k).map { Array($0) } }
    }

    /// Stores `value` under `key`; with `.noOverwrite`, returns `false` (and writes nothing) if the key exists.
    @discardableResult
    package func put(
        _ database: LMDBDatabase, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: PutFlags = []
    ) throws -> Bool {
        try requireActive("mdb_put")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_put(handle, database.handle, &k, &v, flags.rawValue)
        puts &+= 1
        if rc == MDB_KEYEXIST, flags.contains(.noOverwrite) { return false }
        try LMDB.check(rc, operation: database.putCall, path: path, configuration: configuration)
        return true
    }

    /// Counts a put made through a cursor of this transaction (see `puts`).
    package func countPut() { puts &+= 1 }

    /// `put` for byte arrays.
    @discardableResult
    package func put(_ database: LMDBDatabase, _ key: [UInt8], _ value: [UInt8], flags: PutFlags = []) throws -> Bool {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(database, k, v, flags: flags) } }
    }

    /// Removes `key`; returns `false` if it was not there.
    @discardableResult
    func delete(_ database: LMDBDatabase, _ key: UnsafeRawBufferPointer) throws -> Bool {
        try requireActive("mdb_del")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(handle, database.handle, &k, nil)
        deletes &+= 1
        if rc == MDB_NOTFOUND { return false }
        try LMDB.check(rc, operation: database.deleteCall, path: path, configuration: configuration)
        return true
    }

    /// `delete` for a byte array.
    @discardableResult
    func delete(_ database: LMDBDatabase, _ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete(database, $0) }
    }

    /// Removes every entry of `database`, keeping the database and its handle (`mdb_drop` with `del` 0).
    package func empty(_ database: LMDBDatabase) throws {
        try requireActive("mdb_drop")
        try LMDB.check(mdb_drop(handle, database.handle, 0), operation: "mdb_drop(\(database.name ?? "main"))", path: path, configuration: configuration)
    }

    /// The number of entries in `database` (from its B-tree header, without walking it), at most what the
    /// file's pages could hold: a damaged header can claim any number (fuzzing found one that made a fetch
    /// reserve exabytes).
    package func entryCount(_ database: LMDBDatabase) throws -> Int {
        try requireActive("mdb_stat")
        var stat = MDB_stat()
        try LMDB.check(mdb_stat(handle, database.handle, &stat), operation: "mdb_stat(\(database.name ?? "main"))", path: path, configuration: configuration)
        var info = MDB_envinfo()
        var environmentStat = MDB_stat()
        guard let env = mdb_txn_env(handle), mdb_env_info(env, &info) == 0, mdb_env_stat(env, &environmentStat) == 0 else {
            return 0
        }
        // A leaf node takes at least its 8-byte header.
        let pages = info.me_last_pgno.multipliedReportingOverflow(by: 1).partialValue + 1
        let capacity = pages.multipliedReportingOverflow(by: Int(environmentStat.ms_psize) / 8)
        return capacity.overflow ? stat.ms_entries : min(stat.ms_entries, capacity.partialValue)
    }

    // MARK: - Cursors

    /// Runs `body` with a cursor on `database`: a read-only transaction's idle one if it has one (a nested use
    /// gets its own), else a new one, closed afterwards in a write transaction and kept idle in a read-only one.
    package func withCursor<R>(_ database: LMDBDatabase, _ body: (LMDBCursor) throws -> R) throws -> R {
        try requireActive("mdb_cursor_open")
        let cursor: LMDBCursor
        if let i = idleCursors.firstIndex(where: { $0.database.handle == database.handle }) {
            cursor = idleCursors.remove(at: i)
            try cursor.renewIfNeeded()
        } else {
            cursor = try LMDBCursor(database, in: self)
        }
        defer {
            if isReadOnly, state == .active, cursor.isOpen { idleCursors.append(cursor) } else { cursor.close() }
        }
        return try body(cursor)
    }

    /// Called by `LMDBCursor.init`.
    package func register(_ cursor: LMDBCursor) {
        cursors.append(Unmanaged.passUnretained(cursor))
    }

    /// Called by `LMDBCursor.close()`.
    package func unregister(_ cursor: LMDBCursor) {
        if let i = cursors.lastIndex(where: { $0.toOpaque() == Unmanaged.passUnretained(cursor).toOpaque() }) {
            cursors.remove(at: i)
        }
    }

    /// Closes the open cursors before the transaction ends (or, `keepingIdle`, all but the idle ones, which
    /// are marked for renewal). Handles are closed from here, never by calling back into a cursor that would
    /// reach this transaction while it is being deinitialized.
    private func closeCursors(keepingIdle: Bool = false) {
        if keepingIdle {
            for cursor in idleCursors { cursor.markStale() }
            if cursors.count == idleCursors.count { return }   // the usual case: every open cursor is idle
            cursors.removeAll { registered in
                let object = registered.takeUnretainedValue()
                if idleCursors.contains(where: { $0 === object }) { return false }
                object.closeHandle()
                return true
            }
        } else {
            for registered in cursors { registered.takeUnretainedValue().closeHandle() }
            cursors = []
            idleCursors = []
        }
    }

    package func requireActive(_ operation: String) throws {
        guard state == .active else {
            throw StoreError.lmdb(path: path, configuration: configuration, call: operation, code: EINVAL, message: "the transaction has ended")
        }
    }
}

@available(*, unavailable, message: "an LMDB transaction belongs to the code that began it")
extension LMDBTransaction: Sendable {}

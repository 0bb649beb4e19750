import Foundation
internal import CLMDB
import SwitchyardStores

// MARK: - LMDBCursor

/// One `MDB_cursor` over a database, opened in `init` and closed in `deinit` (or earlier, by `close()` or
/// when its transaction ends — whichever comes first; it is never closed twice).
package final class LMDBCursor {
    /// A key and its value, both pointing into the memory map (valid until the transaction ends or writes).
    package struct Entry {
        package let key: UnsafeRawBufferPointer
        package let value: UnsafeRawBufferPointer
    }

    /// The transaction, kept alive while the cursor exists. Unowned for idle cursors a transaction keeps
    /// (see `LMDBTransaction.withCursor`), which would otherwise keep the transaction alive in a cycle.
    private unowned let transaction: LMDBTransaction
    /// The database the cursor walks.
    package let database: LMDBDatabase
    /// Unchecked exclusivity, as for `LMDBTransaction`'s state: a cursor belongs to one thread.
    @exclusivity(unchecked) private var handle: OpaquePointer?
    /// Set when the transaction was reset: the cursor must be renewed before it moves again.
    @exclusivity(unchecked) private var isStale = false

    /// Opens a cursor on `database` in `transaction`.
    package init(_ database: LMDBDatabase, in transaction: LMDBTransaction) throws {
        try transaction.requireActive("mdb_cursor_open")
        var cursor: OpaquePointer?
        try LMDB.check(
            mdb_cursor_open(transaction.handle, database.handle, &cursor),
            operation: "mdb_cursor_open(\(database.name ?? "main"))", path: transaction.path, configuration: transaction.configuration)
        self.transaction = transaction
        self.database = database
        self.handle = cursor
        transaction.register(self)
    }

    deinit { close() }

    /// Closes the cursor now; later moves throw.
    package func close() {
        guard let handle else { return }
        self.handle = nil
        transaction.unregister(self)
        mdb_cursor_close(handle)
    }

    /// Closes the handle for a transaction that is ending (which forgets the cursor itself).
    package func closeHandle() {
        guard let handle else { return }
        self.handle = nil
        mdb_cursor_close(handle)
    }

    /// Whether the cursor is still open.
    package var isOpen: Bool { handle != nil }

    /// Called when the transaction is reset.
    package func markStale() { isStale = true }

    /// Binds a cursor kept across a reset to the renewed transaction (`mdb_cursor_renew`).
    package func renewIfNeeded() throws {
        guard isStale, let handle else { return }
        try LMDB.check(mdb_cursor_renew(transaction.handle, handle), operation: "mdb_cursor_renew", path: transaction.path, configuration: transaction.configuration)
        isStale = false
    }

    // MARK: - Moving

    /// The first entry whose key is greater than or equal to `key` (`MDB_SET_RANGE`).
    package func seek(atLeast key: UnsafeRawBufferPointer) throws -> Entry? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return try move(MDB_SET_RANGE, &k)
    }

    /// `seek(atLeast:)` for a byte array.
    package func seek(atLeast key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { try seek(atLeast: $0) }
    }

    /// The entry whose key is exactly `key` (`MDB_SET_KEY`), nil when there is none.
    package func seek(exactly key: UnsafeRawBufferPointer) throws -> Entry? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return try move(MDB_SET_KEY, &k)
    }

    // MARK: - Writing

    /// Replaces the value of the entry the cursor is on, whose key is `key` (`mdb_cursor_put` with
    /// `MDB_CURRENT`): the cursor knows the entry's page, so the tree is not searched again as
    /// `LMDBTransaction.put` would. Entries the cursor returned before point at stale bytes afterwards.
    package func replaceCurrent(key: UnsafeRawBufferPointer, with value: UnsafeRawBufferPointer) throws {
        guard let handle else { throw closedError() }
        // LMDB does not compare the key given with `MDB_CURRENT` (outside `MDB_DUPSORT`), yet re-adds the entry
        // under it when the value changes size: a key other than the current one would break the tree's order.
        assert(isOn(key), "replaceCurrent: the cursor is not on the key given")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_put(handle, &k, &v, UInt32(MDB_CURRENT))
        transaction.countPut()
        try LMDB.check(rc, operation: database.cursorPutCall, path: transaction.path, configuration: transaction.configuration)
    }

    /// Stores `value` under `key` through the cursor (`mdb_cursor_put`), which is left on the entry; with
    /// `.noOverwrite`, returns `false` (and writes nothing) if the key exists. Keys put in ascending order are
    /// cheaper this way than through `LMDBTransaction.put`: LMDB first looks in the page the cursor is on
    /// rather than searching the tree from its root.
    @discardableResult
    package func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: LMDBTransaction.PutFlags = []) throws -> Bool {
        guard let handle else { throw closedError() }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_put(handle, &k, &v, flags.rawValue)
        transaction.countPut()
        if rc == MDB_KEYEXIST, flags.contains(.noOverwrite) { return false }
        if rc != MDB_SUCCESS { try LMDB.check(rc, operation: database.cursorPutCall, path: transaction.path, configuration: transaction.configuration) }
        return true
    }

    /// Whether the cursor is on an entry whose key is `key` (`MDB_GET_CURRENT`), for `replaceCurrent`'s assertion.
    private func isOn(_ key: UnsafeRawBufferPointer) -> Bool {
        var k = MDB_val()
        guard let current = (try? move(MDB_GET_CURRENT, &k)) ?? nil else { return false }
        return current.key.elementsEqual(key)
    }

    /// The first entry of the database (`MDB_FIRST`).
    package func first() throws -> Entry? {
        var k = MDB_val()
        return try move(MDB_FIRST, &k)
    }

    /// The entry after the current one (`MDB_NEXT`).
    package func next() throws -> Entry? {
        var k = MDB_val()
        return try move(MDB_NEXT, &k)
    }

    /// The last entry of the database (`MDB_LAST`).
    package func last() throws -> Entry? {
        var k = MDB_val()
        return try move(MDB_LAST, &k)
    }

    /// The entry before the current one (`MDB_PREV`).
    package func previous() throws -> Entry? {
        var k = MDB_val()
        return try move(MDB_PREV, &k)
    }

    /// Walks the entries from the first key greater than or equal to `start` (`MDB_SET_RANGE`, then
    /// `MDB_NEXT`) for as long as `body` returns true: one loop around `mdb_cursor_get`, for scans that visit
    /// every row of a table (no `Entry` is made per row).
    @inline(__always)
    package func walk(
        from start: UnsafeRawBufferPointer, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var key = MDB_val(mv_size: start.count, mv_data: UnsafeMutableRawPointer(mutating: start.baseAddress))
        var value = MDB_val()
        var op = MDB_SET_RANGE
        while true {
            // Read before every step, as `next()` does: a cursor closed meanwhile throws, never reaches LMDB.
            guard let handle else { throw closedError() }
            let rc = mdb_cursor_get(handle, &key, &value, op)
            if rc == MDB_NOTFOUND { return }
            if rc != MDB_SUCCESS { try LMDB.check(rc, operation: database.cursorCall, path: transaction.path, configuration: transaction.configuration) }
            let more = try body(
                UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
            if !more { return }
            op = MDB_NEXT
        }
    }

    private func closedError() -> StoreError {
        StoreError.lmdb(path: transaction.path, configuration: transaction.configuration, call: database.cursorCall, code: EINVAL, message: "the cursor is closed")
    }

    private func move(_ op: MDB_cursor_op, _ key: inout MDB_val) throws -> Entry? {
        guard let handle else { throw closedError() }
        var value = MDB_val()
        let rc = mdb_cursor_get(handle, &key, &value, op)
        if rc == MDB_NOTFOUND { return nil }
        // The error's text is built only on failure: this runs once per row of every walk.
        if rc != MDB_SUCCESS { try LMDB.check(rc, operation: database.cursorCall, path: transaction.path, configuration: transaction.configuration) }
        return Entry(
            key: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
            value: UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }
}

@available(*, unavailable, message: "a cursor lives inside one transaction")
extension LMDBCursor: Sendable {}

@available(*, unavailable, message: "an entry points into a transaction's memory map")
extension LMDBCursor.Entry: Sendable {}

import Foundation
internal import CLMDB

// MARK: - LMDBCursor

/// One `MDB_cursor` over a database, opened in `init` and closed in `deinit` (or earlier, by `close()` or
/// when its transaction ends — whichever comes first; it is never closed twice).
final class LMDBCursor {
    /// A key and its value, both pointing into the memory map (valid until the transaction ends or writes).
    struct Entry {
        let key: UnsafeRawBufferPointer
        let value: UnsafeRawBufferPointer
    }

    /// The transaction, kept alive while the cursor exists.
    private let transaction: LMDBTransaction
    private let database: LMDBDatabase
    private var handle: OpaquePointer?

    /// Opens a cursor on `database` in `transaction`.
    init(_ database: LMDBDatabase, in transaction: LMDBTransaction) throws {
        try transaction.requireActive("mdb_cursor_open")
        var cursor: OpaquePointer?
        try LMDB.check(
            mdb_cursor_open(transaction.handle, database.handle, &cursor),
            operation: "mdb_cursor_open(\(database.name ?? "main"))", path: transaction.path)
        self.transaction = transaction
        self.database = database
        self.handle = cursor
        transaction.register(self)
    }

    deinit { close() }

    /// Closes the cursor now; later moves throw.
    func close() {
        guard let handle else { return }
        self.handle = nil
        transaction.unregister(self)
        mdb_cursor_close(handle)
    }

    // MARK: - Moving

    /// The first entry whose key is greater than or equal to `key` (`MDB_SET_RANGE`).
    func seek(atLeast key: UnsafeRawBufferPointer) throws -> Entry? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return try move(MDB_SET_RANGE, &k)
    }

    /// `seek(atLeast:)` for a byte array.
    func seek(atLeast key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { try seek(atLeast: $0) }
    }

    /// The first entry of the database (`MDB_FIRST`).
    func first() throws -> Entry? {
        var k = MDB_val()
        return try move(MDB_FIRST, &k)
    }

    /// The entry after the current one (`MDB_NEXT`).
    func next() throws -> Entry? {
        var k = MDB_val()
        return try move(MDB_NEXT, &k)
    }

    private func move(_ op: MDB_cursor_op, _ key: inout MDB_val) throws -> Entry? {
        guard let handle else {
            throw StoreError.lmdb(path: transaction.path, call: database.cursorCall, code: EINVAL, message: "the cursor is closed")
        }
        var value = MDB_val()
        let rc = mdb_cursor_get(handle, &key, &value, op)
        if rc == MDB_NOTFOUND { return nil }
        try LMDB.check(rc, operation: database.cursorCall, path: transaction.path)
        return Entry(
            key: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
            value: UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }
}

@available(*, unavailable, message: "a cursor lives inside one transaction")
extension LMDBCursor: Sendable {}

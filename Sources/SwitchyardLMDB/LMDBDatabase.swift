import Foundation
internal import CLMDB

// MARK: - LMDBDatabase

/// A named database inside an environment: a plain `MDB_dbi` number. Once the transaction that opened it
/// commits, the number is valid in every later transaction of the environment, so it is a `Sendable` value.
package struct LMDBDatabase: Sendable, Hashable {
    /// How a database is opened.
    package struct Flags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Create the database if it does not exist (needs a write transaction).
        package static let create = Flags(rawValue: UInt32(MDB_CREATE))
    }

    /// The database's name (`nil` is the environment's main database).
    package let name: String?
    /// The `MDB_dbi` handle.
    let handle: MDB_dbi
    /// The calls as errors name them, spelled once here: gets and puts run by the hundred thousand, and
    /// building "mdb_put(rows)" for each would cost more than the put. Boxed, so copying a database is one
    /// retain rather than five.
    private let calls: Calls

    package var getCall: String { calls.get }
    package var putCall: String { calls.put }
    package var deleteCall: String { calls.delete }
    package var cursorCall: String { calls.cursor }
    package var cursorPutCall: String { calls.cursorPut }

    init(name: String?, handle: MDB_dbi) {
        self.name = name
        self.handle = handle
        self.calls = Calls(name ?? "main")
    }

    /// The call names of one database.
    private final class Calls: Sendable {
        let get: String, put: String, delete: String, cursor: String, cursorPut: String
        init(_ label: String) {
            get = "mdb_get(\(label))"
            put = "mdb_put(\(label))"
            delete = "mdb_del(\(label))"
            cursor = "mdb_cursor_get(\(label))"
            cursorPut = "mdb_cursor_put(\(label))"
        }
    }

    package static func == (a: LMDBDatabase, b: LMDBDatabase) -> Bool { a.handle == b.handle && a.name == b.name }
    package func hash(into hasher: inout Hasher) { hasher.combine(handle) }

    /// Opens the named database in `transaction`, or returns `nil` when it does not exist and `.create` is not
    /// among `flags`. LMDB forbids opening databases from concurrent transactions, so callers do this inside
    /// the environment's write lock.
    package static func open(_ name: String?, flags: Flags = [], in transaction: LMDBTransaction) throws -> LMDBDatabase? {
        var dbi: MDB_dbi = 0
        let rc: Int32
        if let name {
            rc = name.withCString { mdb_dbi_open(transaction.handle, $0, flags.rawValue, &dbi) }
        } else {
            rc = mdb_dbi_open(transaction.handle, nil, flags.rawValue, &dbi)
        }
        if rc == MDB_NOTFOUND, !flags.contains(.create) { return nil }
        try LMDB.check(rc, operation: "mdb_dbi_open(\(name ?? "main"))", path: transaction.path, configuration: transaction.configuration)
        return LMDBDatabase(name: name, handle: dbi)
    }
}

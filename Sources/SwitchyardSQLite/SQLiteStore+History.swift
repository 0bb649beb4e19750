import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardStores

// MARK: - Persistent history in Core Data's tables

/// Core Data's persistent-history layout: `ATRANSACTION` (one row per transaction; its strings interned in
/// `ATRANSACTIONSTRING` and referred to by the `…TS` columns), `ACHANGE` (one row per changed row: `ZCHANGETYPE`
/// 0 insert, 1 update, 2 delete; `ZENTITY` / `ZENTITYPK` the row's `Z_ENT` / `Z_PK`; `ZCOLUMNS` the changed
/// properties of an update), numbered through `Z_PRIMARYKEY` rows 16001 (CHANGE), 16002 (TRANSACTION) and 16003
/// (TRANSACTIONSTRING). A transaction's `Z_PK` is its number: allocated inside the save's write transaction, so
/// numbers follow commit order, and `Z_MAX` keeps growing after history is deleted.
enum SQLiteHistory {
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003

    /// The tables and indexes exactly as Core Data creates them.
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE IF NOT EXISTS ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE IF NOT EXISTS ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "CREATE INDEX IF NOT EXISTS ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
        "CREATE UNIQUE INDEX IF NOT EXISTS Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
        "INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (16001, 'CHANGE', 0, 0), (16002, 'TRANSACTION', 0, 0), (16003, 'TRANSACTIONSTRING', 0, 0)",
    ]

    /// `ACHANGE` rows per INSERT statement (7 parameters each).
    static let changesPerStatement = 64

    /// `INSERT INTO ACHANGE ... VALUES (...), ...` for `rows` rows.
    static func insertChanges(_ rows: Int) -> String {
        "INSERT INTO ACHANGE (Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    /// Read from `sqlite_master`, not GRDB's schema cache: a connection that looked once keeps its cached answer
    /// after another connection creates the tables (a user trial: a store opened before history was turned on
    /// elsewhere, which had saved once, never recorded its later saves).
    static func tablesExist(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING')") == 3
    }

    /// Whether the store at `pool` records history: `enable` creates the tables (one transaction) when the store
    /// is writable; a store that has them records whether or not it was asked to.
    static func prepare(_ pool: DatabasePool, enable: Bool, readOnly: Bool) throws -> Bool {
        if try pool.read(tablesExist) { return true }
        guard enable, !readOnly else { return false }
        try pool.write { db in
            for statement in createStatements { try db.execute(sql: statement) }
        }
        return true
    }
}

extension SQLiteStore: HistoryTrackingStore {
    /// Writes `transaction` (its number allocated here) inside the caller's write transaction.
    func recordHistory(_ transaction: StoredHistoryTransaction, db: Database) throws {
        let number = try advanceMax(of: SQLiteHistory.transactionEntity, named: "TRANSACTION", by: 1, db: db).lowerBound
        var strings: [Int64?] = []
        for value in [transaction.author, transaction.bundleID, transaction.contextName, transaction.processID] {
            strings.append(try value.map { try internedString($0, db: db) })
        }
        try db.cachedStatement(sql: """
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(
            arguments: [number, SQLiteHistory.transactionEntity, strings[0], strings[1], strings[2], strings[3],
                        transaction.timestamp.timeIntervalSinceReferenceDate])
        guard !transaction.changes.isEmpty else { return }
        let keys = try advanceMax(of: SQLiteHistory.changeEntity, named: "CHANGE", by: transaction.changes.count, db: db)
        // Rows go in multi-row INSERTs of up to `changesPerStatement`: one statement step per chunk, not per change.
        var values: [DatabaseValue] = []
        values.reserveCapacity(7 * min(transaction.changes.count, SQLiteHistory.changesPerStatement))
        var rows = 0
        func flush() throws {
            guard rows > 0 else { return }
            let statement = try db.cachedStatement(sql: SQLiteHistory.insertChanges(rows))
            try bind(values, to: statement)
            try statement.execute()
            values.removeAll(keepingCapacity: true)
            rows = 0
        }
        for (key, change) in zip(keys, transaction.changes) {
            let layout = try servedLayout(change.entityName)
            var columns = DatabaseValue.null
            if change.kind == .update, let layout = historyColumns[change.entityName] { columns = layout.encode(change.updatedKeys).databaseValue }
            values += [
                key.databaseValue, SQLiteHistory.changeEntity.databaseValue, Int64(change.kind.rawValue).databaseValue,
                layout.number.databaseValue, change.primaryKey.databaseValue, number.databaseValue, columns,
            ]
            rows += 1
            if rows == SQLiteHistory.changesPerStatement { try flush() }
        }
        try flush()
    }

    /// The `ATRANSACTIONSTRING` key of `value`, inserting it when new.
    private func internedString(_ value: String, db: Database) throws -> Int64 {
        if let key = try Int64.fetchOne(db.cachedStatement(sql: "SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?"), arguments: [value]) {
            return key
        }
        let key = try advanceMax(of: SQLiteHistory.stringEntity, named: "TRANSACTIONSTRING", by: 1, db: db).lowerBound
        try db.execute(
            sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, ZNAME) VALUES (?, ?, ?)", arguments: [key, SQLiteHistory.stringEntity, value])
        return key
    }

    package func history(after: Int64?, limit: Int?) throws -> [StoredHistoryTransaction] {
        try checkHistory()
        return try read { db in
            try HistoryBounds.check(
                after: after, last: try lastNumber(db), oldest: try Int64.fetchOne(db, sql: "SELECT MIN(Z_PK) FROM ATRANSACTION"),
                path: displayPath, configuration: configurationName)
            var strings: [Int64: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT Z_PK, ZNAME FROM ATRANSACTIONSTRING") {
                if let key: Int64 = row[0], let name: String = row[1] { strings[key] = name }
            }
            var transactions: [StoredHistoryTransaction] = []
            let rows = try Row.fetchAll(db, sql: """
                SELECT Z_PK, ZTIMESTAMP, ZAUTHORTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZBUNDLEIDTS, ZAUTHOR, ZCONTEXTNAME, ZPROCESSID, ZBUNDLEID
                FROM ATRANSACTION WHERE Z_PK > ? ORDER BY Z_PK LIMIT ?
                """, arguments: [after ?? 0, limit.map(Int64.init) ?? -1])
            for row in rows {
                // Core Data interns the strings (`…TS`); the plain columns are read when a writer filled them.
                func string(_ interned: Int, _ plain: Int) -> String? {
                    (row[interned] as Int64?).flatMap { strings[$0] } ?? row[plain]
                }
                transactions.append(StoredHistoryTransaction(
                    number: row[0], timestamp: Date(timeIntervalSinceReferenceDate: row[1] ?? 0),
                    author: string(2, 6), contextName: string(3, 7), processID: string(4, 8), bundleID: string(5, 9), changes: []))
            }
            guard let first = transactions.first?.number, let lastRead = transactions.last?.number else { return [] }
            let position = Dictionary(uniqueKeysWithValues: transactions.enumerated().map { ($1.number, $0) })
            let names = Dictionary(try Self.entityNumbers(db).map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            let changes = try Row.fetchCursor(db, sql: """
                SELECT ZTRANSACTIONID, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS FROM ACHANGE
                WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK
                """, arguments: [first, lastRead])
            while let row = try changes.next() {
                guard let transaction: Int64 = row[0], let index = position[transaction] else { continue }
                guard let type: Int64 = row[1], let kind = HistoryChangeKind(rawValue: Int(type)) else {
                    throw StoreError.schemaMismatch(
                        path: displayPath, configuration: configurationName,
                        reason: "ACHANGE row of transaction \(transaction) has change type \(String(describing: row[1] as DatabaseValue)); expected 0, 1 or 2")
                }
                // A row of an entity the model no longer has cannot be named by an ObjectID: left out.
                guard let number: Int64 = row[2], let name = names[number], let entity = model.entity(named: name),
                    let primaryKey: Int64 = row[3]
                else { continue }
                var keys: [String] = []
                if kind == .update, let columns: Data = row[4] {
                    keys = (historyColumns[name] ?? HistoryColumns(entity)).decode(columns)
                }
                transactions[index].changes.append(StoredHistoryChange(kind: kind, entityName: name, primaryKey: primaryKey, updatedKeys: keys))
            }
            return transactions
        }
    }

    package func lastHistoryNumber() throws -> Int64 {
        try checkHistory()
        return try read(lastNumber)
    }

    package func lastHistoryNumber(before date: Date) throws -> Int64 {
        try checkHistory()
        return try read { db in
            // The transactions before the first one recorded at or after `date`: never one recorded later, even when
            // the clocks of writing processes disagree.
            let seconds = date.timeIntervalSinceReferenceDate
            if let later = try Int64.fetchOne(db, sql: "SELECT MIN(Z_PK) FROM ATRANSACTION WHERE ZTIMESTAMP >= ?", arguments: [seconds]) {
                return try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ATRANSACTION WHERE Z_PK < ?", arguments: [later]) ?? 0
            }
            return try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ATRANSACTION") ?? 0
        }
    }

    package func deleteHistory(through number: Int64) throws -> Int {
        try checkHistory()
        return try write("delete history") { db in
            try db.execute(sql: "DELETE FROM ACHANGE WHERE ZTRANSACTIONID <= ?", arguments: [number])
            try db.execute(sql: "DELETE FROM ATRANSACTION WHERE Z_PK <= ?", arguments: [number])
            return db.changesCount
        }
    }

    private func lastNumber(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [SQLiteHistory.transactionEntity]) ?? 0
    }

    private func checkHistory() throws {
        if tracksHistory { return }
        guard try read(discoverHistory) else { throw StoreError.historyNotTracked(path: displayPath, configuration: configurationName) }
    }

    /// For a store that did not record history when it opened: whether another connection has created the
    /// history tables since (then this store records too, so no reader misses a transaction). Reads the schema
    /// cookie, and sqlite_master only when it changed.
    func discoverHistory(_ db: Database) throws -> Bool {
        if tracksHistory { return true }
        guard let version = try Int64.fetchOne(db, sql: "PRAGMA schema_version"), state.schemaChanged(to: version),
            try SQLiteHistory.tablesExist(db)
        else { return false }
        state.tracksHistory = true
        return true
    }
}

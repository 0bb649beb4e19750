import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Persistent history in Core Data's tables

/// Core Data's persistent-history layout with PostgreSQL's types: `ATRANSACTION` (one row per transaction, its
/// strings interned in `ATRANSACTIONSTRING`), `ACHANGE` (one row per changed row), numbered through
/// `Z_PRIMARYKEY` rows 16001 (CHANGE), 16002 (TRANSACTION) and 16003 (TRANSACTIONSTRING). A transaction's number
/// is taken with `UPDATE … RETURNING` inside the save's transaction, whose row lock holds every other recording
/// save until this one commits: numbers follow commit order across processes, so a reader that sees number n
/// committed has every transaction up to n.
enum PostgreSQLHistory {
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003
    static let tables = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]

    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS \"ACHANGE\" (\"Z_PK\" BIGINT PRIMARY KEY, \"Z_ENT\" INTEGER, \"Z_OPT\" INTEGER, \"ZCHANGETYPE\" INTEGER, \"ZENTITY\" INTEGER, \"ZENTITYPK\" BIGINT, \"ZTRANSACTIONID\" BIGINT, \"ZCOLUMNS\" BYTEA)",
        "CREATE TABLE IF NOT EXISTS \"ATRANSACTION\" (\"Z_PK\" BIGINT PRIMARY KEY, \"Z_ENT\" INTEGER, \"Z_OPT\" INTEGER, \"ZAUTHORTS\" BIGINT, \"ZBUNDLEIDTS\" BIGINT, \"ZCONTEXTNAMETS\" BIGINT, \"ZPROCESSIDTS\" BIGINT, \"ZTIMESTAMP\" DOUBLE PRECISION, \"ZAUTHOR\" TEXT, \"ZBUNDLEID\" TEXT, \"ZCONTEXTNAME\" TEXT, \"ZPROCESSID\" TEXT, \"ZQUERYGEN\" BYTEA)",
        "CREATE TABLE IF NOT EXISTS \"ATRANSACTIONSTRING\" (\"Z_PK\" BIGINT PRIMARY KEY, \"Z_ENT\" INTEGER, \"Z_OPT\" INTEGER, \"ZNAME\" TEXT)",
        "CREATE INDEX IF NOT EXISTS \"ACHANGE_ZTRANSACTIONID_INDEX\" ON \"ACHANGE\" (\"ZTRANSACTIONID\")",
        "CREATE INDEX IF NOT EXISTS \"Z_TRANSACTION_TransactionTimestampIndex\" ON \"ATRANSACTION\" (\"ZTIMESTAMP\")",
        "CREATE UNIQUE INDEX IF NOT EXISTS \"Z_TRANSACTIONSTRING_UNIQUE_NAME\" ON \"ATRANSACTIONSTRING\" (\"ZNAME\")",
        "INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES (16001, 'CHANGE', 0, 0), (16002, 'TRANSACTION', 0, 0), (16003, 'TRANSACTIONSTRING', 0, 0) ON CONFLICT DO NOTHING",
    ]

    /// Whether the store's schema has the history tables (created together, in one transaction). `to_regclass`
    /// reads the catalog cache: a non-recording store asks this in every save, so it must stay this cheap.
    static func tablesExist(_ connection: PostgreSQLConnection) throws -> Bool {
        guard let row = try connection.query("SELECT to_regclass('\"ATRANSACTION\"')::text").first else { return false }
        return try row.makeRandomAccess().columnValue(0) != .null
    }

    /// Whether the store records history: `enable` creates the tables (one transaction, under the schema's
    /// advisory lock) when the store is writable; a store that has them records whether or not it was asked to.
    static func prepare(_ pool: PostgreSQLPool, enable: Bool, readOnly: Bool) throws -> Bool {
        if try pool.withConnection(tablesExist) { return true }
        guard enable, !readOnly else { return false }
        try pool.withTransaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", [.text("switchyard:" + pool.location.schema)])
            for statement in createStatements { try connection.execute(statement) }
        }
        return true
    }
}

extension PostgreSQLStore: HistoryTrackingStore {
    /// Whether saves record persistent history: asked for at open, or history tables present (then or since).
    package var tracksHistory: Bool { historyState.withLock { $0 } }

    /// Records `changes` as one transaction inside the save's transaction on `connection`, when the store
    /// records history or another opener has turned it on since this store opened.
    func recordHistory(_ changes: StoreChangeSet, connection: PostgreSQLConnection) throws {
        if !tracksHistory {
            guard try PostgreSQLHistory.tablesExist(connection) else { return }
            historyState.withLock { $0 = true }
        }
        let transaction = StoredHistoryTransaction.recording(changes, model: model)
        let number = try advanceMax(PostgreSQLHistory.transactionEntity, named: "TRANSACTION", by: 1, connection).lowerBound
        var strings: [ColumnValue] = []
        for value in [transaction.author, transaction.bundleID, transaction.contextName, transaction.processID] {
            strings.append(try value.map { .integer(try internedString($0, connection)) } ?? .null)
        }
        try connection.execute(
            """
            INSERT INTO "ATRANSACTION" ("Z_PK", "Z_ENT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP")
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [.integer(number), .integer(PostgreSQLHistory.transactionEntity)] + strings
                + [.real(transaction.timestamp.timeIntervalSinceReferenceDate)])
        guard !transaction.changes.isEmpty else { return }
        let keys = try advanceMax(PostgreSQLHistory.changeEntity, named: "CHANGE", by: transaction.changes.count, connection)
        var rows: [[ColumnValue]] = []
        rows.reserveCapacity(transaction.changes.count)
        for (key, change) in zip(keys, transaction.changes) {
            let layout = try servedLayout(change.entityName)
            var columns = ColumnValue.null
            if change.kind == .update, let bits = historyColumns[change.entityName] { columns = .blob(bits.encode(change.updatedKeys)) }
            rows.append([
                .integer(key), .integer(PostgreSQLHistory.changeEntity), .integer(Int64(change.kind.rawValue)),
                .integer(layout.number), .integer(change.primaryKey), .integer(number), columns,
            ])
        }
        let columns = ["Z_PK", "Z_ENT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]
        try insertRows(rows, into: "ACHANGE", columns: columns, connection)
    }

    /// The `ATRANSACTIONSTRING` key of `value`, inserting it when new (recording saves run one at a time).
    private func internedString(_ value: String, _ connection: PostgreSQLConnection) throws -> Int64 {
        if let row = try connection.query("SELECT \"Z_PK\" FROM \"ATRANSACTIONSTRING\" WHERE \"ZNAME\" = $1", [.text(value)]).first,
            let key = try row.makeRandomAccess().integer(0)
        {
            return key
        }
        let key = try advanceMax(PostgreSQLHistory.stringEntity, named: "TRANSACTIONSTRING", by: 1, connection).lowerBound
        try connection.execute(
            "INSERT INTO \"ATRANSACTIONSTRING\" (\"Z_PK\", \"Z_ENT\", \"ZNAME\") VALUES ($1, $2, $3)",
            [.integer(key), .integer(PostgreSQLHistory.stringEntity), .text(value)])
        return key
    }

    package func history(after: Int64?, limit: Int?) throws -> [StoredHistoryTransaction] {
        try checkHistory()
        return try pool.withTransaction(readOnly: true) { connection in
            let oldest = try connection.query("SELECT MIN(\"Z_PK\") FROM \"ATRANSACTION\"").first.flatMap { try $0.makeRandomAccess().integer(0) }
            try HistoryBounds.check(
                after: after, last: try lastNumber(connection), oldest: oldest, path: displayPath, configuration: configurationName)
            var strings: [Int64: String] = [:]
            for row in try connection.query("SELECT \"Z_PK\", \"ZNAME\" FROM \"ATRANSACTIONSTRING\"") {
                let cells = row.makeRandomAccess()
                if let key = try cells.integer(0), case .text(let name) = try cells.columnValue(1) { strings[key] = name }
            }
            var transactions: [StoredHistoryTransaction] = []
            var sql = """
                SELECT "Z_PK", "ZTIMESTAMP", "ZAUTHORTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZBUNDLEIDTS", "ZAUTHOR", "ZCONTEXTNAME", "ZPROCESSID", "ZBUNDLEID"
                FROM "ATRANSACTION" WHERE "Z_PK" > $1 ORDER BY "Z_PK"
                """
            if let limit { sql += " LIMIT \(max(0, limit))" }
            for row in try connection.query(sql, [.integer(after ?? 0)]) {
                let cells = row.makeRandomAccess()
                // Core Data interns the strings (`…TS`); the plain columns are read when a writer filled them.
                func string(_ interned: Int, _ plain: Int) throws -> String? {
                    if let key = try cells.integer(interned), let value = strings[key] { return value }
                    if case .text(let value) = try cells.columnValue(plain) { return value }
                    return nil
                }
                guard let number = try cells.integer(0) else { continue }
                var seconds = 0.0
                if case .real(let value) = try cells.columnValue(1) { seconds = value }
                transactions.append(StoredHistoryTransaction(
                    number: number, timestamp: Date(timeIntervalSinceReferenceDate: seconds), author: try string(2, 6),
                    contextName: try string(3, 7), processID: try string(4, 8), bundleID: try string(5, 9), changes: []))
            }
            guard let first = transactions.first?.number, let lastRead = transactions.last?.number else { return [] }
            let position = Dictionary(uniqueKeysWithValues: transactions.enumerated().map { ($1.number, $0) })
            var names: [Int64: String] = [:]
            for layout in schema.entities.values { names[layout.number] = layout.name }
            for row in try connection.query(
                """
                SELECT "ZTRANSACTIONID", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZCOLUMNS" FROM "ACHANGE"
                WHERE "ZTRANSACTIONID" BETWEEN $1 AND $2 ORDER BY "Z_PK"
                """, [.integer(first), .integer(lastRead)])
            {
                let cells = row.makeRandomAccess()
                guard let transaction = try cells.integer(0), let index = position[transaction] else { continue }
                guard let type = try cells.integer(1), let kind = HistoryChangeKind(rawValue: Int(type)) else {
                    throw StoreError.schemaMismatch(
                        path: displayPath, configuration: configurationName,
                        reason: "ACHANGE row of transaction \(transaction) has change type \(try cells.columnValue(1)); expected 0, 1 or 2")
                }
                // A row of an entity the model no longer has cannot be named by an ObjectID: left out.
                guard let number = try cells.integer(2), let name = names[number], let entity = model.entity(named: name),
                    let primaryKey = try cells.integer(3)
                else { continue }
                var keys: [String] = []
                if kind == .update, case .blob(let columns) = try cells.columnValue(4) {
                    keys = (historyColumns[name] ?? HistoryColumns(entity)).decode(columns)
                }
                transactions[index].changes.append(StoredHistoryChange(kind: kind, entityName: name, primaryKey: primaryKey, updatedKeys: keys))
            }
            return transactions
        }
    }

    package func lastHistoryNumber() throws -> Int64 {
        try checkHistory()
        return try pool.withConnection(lastNumber)
    }

    package func lastHistoryNumber(before date: Date) throws -> Int64 {
        try checkHistory()
        return try pool.withTransaction(readOnly: true) { connection in
            // The transactions before the first one recorded at or after `date`: never one recorded later, even when
            // the clocks of writing processes disagree.
            let seconds = ColumnValue.real(date.timeIntervalSinceReferenceDate)
            func number(_ sql: String, _ parameters: [ColumnValue]) throws -> Int64? {
                try connection.query(sql, parameters).first.flatMap { try $0.makeRandomAccess().integer(0) }
            }
            if let later = try number("SELECT MIN(\"Z_PK\") FROM \"ATRANSACTION\" WHERE \"ZTIMESTAMP\" >= $1", [seconds]) {
                return try number("SELECT MAX(\"Z_PK\") FROM \"ATRANSACTION\" WHERE \"Z_PK\" < $1", [.integer(later)]) ?? 0
            }
            return try number("SELECT MAX(\"Z_PK\") FROM \"ATRANSACTION\"", []) ?? 0
        }
    }

    package func deleteHistory(through number: Int64) throws -> Int {
        try checkHistory()
        try checkWritable("delete history")
        return try pool.withTransaction { connection in
            try connection.execute("DELETE FROM \"ACHANGE\" WHERE \"ZTRANSACTIONID\" <= $1", [.integer(number)])
            return try connection.query("DELETE FROM \"ATRANSACTION\" WHERE \"Z_PK\" <= $1 RETURNING \"Z_PK\"", [.integer(number)]).count
        }
    }

    private func lastNumber(_ connection: PostgreSQLConnection) throws -> Int64 {
        try connection.query("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = $1", [.integer(PostgreSQLHistory.transactionEntity)])
            .first.flatMap { try $0.makeRandomAccess().integer(0) } ?? 0
    }

    /// Throws `historyNotTracked` unless the store records history (or another opener has turned it on since).
    private func checkHistory() throws {
        if tracksHistory { return }
        guard try pool.withConnection(PostgreSQLHistory.tablesExist) else {
            throw StoreError.historyNotTracked(path: displayPath, configuration: configurationName)
        }
        historyState.withLock { $0 = true }
    }
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Persistent history in the `history` database

/// LMDB's equivalent of Core Data's history tables: the `history` database maps a transaction's number
/// (8 bytes, big-endian, so keys sort in commit order) to the transaction — format version, timestamp (seconds
/// since 2001, as `ZTIMESTAMP`), author, context name, process and bundle IDs, then each change: kind, entity name,
/// primary key and, for updates, the changed property names. Written in the save's own write transaction, so
/// numbers follow commit order. `meta` keeps the highest number deleted (`history:deleted`), so numbers are never
/// reused and a token older than what is kept is recognized.
extension LMDBStore: HistoryTrackingStore {
    private static let formatVersion: UInt64 = 1
    private static let deletedKey = Array("history:deleted".utf8)

    /// Whether saves record history: the store has the `history` database (also when another process created
    /// it after this store opened: `historyDatabase()` and saves look for it).
    package var tracksHistory: Bool { state.withLock { $0.history } != nil }

    /// Records the transaction of `changes` inside the save's write transaction, when the store has history:
    /// a store opened without it looks for the database another process may have created since (one lookup in
    /// LMDB's main database) and returns the handle it found: the caller makes it the store's once the
    /// transaction commits (an aborted transaction closes it).
    func recordHistory(_ changes: StoreChangeSet, txn: LMDBTransaction) throws -> LMDBDatabase? {
        if let history = state.withLock({ $0.history }) {
            try recordHistory(.recording(changes, model: model), into: history, txn: txn)
            return nil
        }
        guard let found = try LMDBDatabase.open(LMDBStoreDatabases.historyName, in: txn) else { return nil }
        try recordHistory(.recording(changes, model: model), into: found, txn: txn)
        return found
    }

    /// Makes a history database found by a committed save the store's.
    func adoptHistory(_ found: LMDBDatabase?) {
        if let found { state.withLock { $0.history = found } }
    }

    /// Appends `transaction`, numbered after the last one.
    private func recordHistory(_ transaction: StoredHistoryTransaction, into history: LMDBDatabase, txn: LMDBTransaction) throws {
        let number = try lastNumber(history, txn: txn) + 1
        var w = LMDBByteWriter(capacity: 64 + 24 * transaction.changes.count)
        w.unsigned(Self.formatVersion)
        w.double(transaction.timestamp.timeIntervalSinceReferenceDate)
        for string in [transaction.author, transaction.contextName, transaction.processID, transaction.bundleID] {
            if let string {
                w.byte(1)
                w.lengthPrefixed(Array(string.utf8))
            } else {
                w.byte(0)
            }
        }
        w.unsigned(UInt64(transaction.changes.count))
        for change in transaction.changes {
            w.byte(UInt8(change.kind.rawValue))
            w.lengthPrefixed(Array(change.entityName.utf8))
            w.signed(change.primaryKey)
            w.unsigned(UInt64(change.updatedKeys.count))
            for key in change.updatedKeys { w.lengthPrefixed(Array(key.utf8)) }
        }
        try txn.put(history, Self.key(number), w.bytes)
    }

    package func history(after: Int64?, limit: Int?) throws -> [StoredHistoryTransaction] {
        let history = try historyDatabase()
        return try environment.read { txn in
            let cursor = try LMDBCursor(history, in: txn)
            try HistoryBounds.check(
                after: after, last: try lastNumber(history, txn: txn), oldest: try cursor.first().map { try number(of: $0.key) },
                path: path, configuration: configurationName)
            var transactions: [StoredHistoryTransaction] = []
            var entry = try cursor.seek(atLeast: Self.key(max(after ?? 0, 0) &+ 1))
            while let current = entry, limit.map({ transactions.count < $0 }) ?? true {
                let number = try self.number(of: current.key)
                do {
                    transactions.append(try Self.decode(current.value, number: number))
                } catch {
                    throw StoreError.notAStore(
                        path: path, expected: .lmdb, reason: "history transaction \(number) is damaged: \(error.localizedDescription)")
                }
                entry = try cursor.next()
            }
            // Rows of entities the model no longer has cannot be named by an ObjectID: left out.
            for i in transactions.indices { transactions[i].changes.removeAll { model.entity(named: $0.entityName) == nil } }
            return transactions
        }
    }

    package func lastHistoryNumber() throws -> Int64 {
        let history = try historyDatabase()
        return try environment.read { txn in try lastNumber(history, txn: txn) }
    }

    package func lastHistoryNumber(before date: Date) throws -> Int64 {
        let history = try historyDatabase()
        return try environment.read { txn in
            let cursor = try LMDBCursor(history, in: txn)
            var found: Int64 = 0
            var entry = try cursor.first()
            while let current = entry {
                var reader = LMDBByteReader(current.value)
                _ = try? reader.unsigned()
                guard let seconds = try? reader.double(), seconds < date.timeIntervalSinceReferenceDate else { break }
                found = try number(of: current.key)
                entry = try cursor.next()
            }
            return found
        }
    }

    package func deleteHistory(through number: Int64) throws -> Int {
        try checkWritable("delete history")
        let history = try historyDatabase()
        return try environment.write { txn in
            let last = try lastNumber(history, txn: txn)
            let through = min(number, last)
            var keys: [[UInt8]] = []
            let cursor = try LMDBCursor(history, in: txn)
            var entry = try cursor.first()
            while let current = entry, try self.number(of: current.key) <= through {
                keys.append(Array(current.key))
                entry = try cursor.next()
            }
            cursor.close()
            for key in keys { try txn.delete(history, key) }
            if through > (try metaCounter(Self.deletedKey, txn: txn)) { try setMetaCounter(through, Self.deletedKey, txn: txn) }
            return keys.count
        }
    }

    // MARK: Helpers

    private func historyDatabase() throws -> LMDBDatabase {
        try checkOpen()
        if let history = state.withLock({ $0.history }) { return history }
        // Created by another process since this store opened?
        guard let found = try environment.readKeepingDatabases({ try LMDBDatabase.open(LMDBStoreDatabases.historyName, in: $0) }) else {
            throw StoreError.historyNotTracked(path: path, configuration: configurationName)
        }
        state.withLock { $0.history = found }
        return found
    }

    /// The last number handed out: the last key kept, or the highest deleted.
    private func lastNumber(_ history: LMDBDatabase, txn: LMDBTransaction) throws -> Int64 {
        let cursor = try LMDBCursor(history, in: txn)
        let last = try cursor.last().map { try number(of: $0.key) } ?? 0
        return max(last, try metaCounter(Self.deletedKey, txn: txn))
    }

    private static func key(_ number: Int64) -> [UInt8] {
        var w = LMDBByteWriter(capacity: 8)
        w.bigEndian(UInt64(bitPattern: number))
        return w.bytes
    }

    private func number(of key: UnsafeRawBufferPointer) throws -> Int64 {
        guard key.count == 8 else {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "the history database has a key of \(key.count) bytes, not 8")
        }
        return Int64(bitPattern: LMDBRowKey.readBigEndian64(key, 0))
    }

    private static func decode(_ value: UnsafeRawBufferPointer, number: Int64) throws -> StoredHistoryTransaction {
        var r = LMDBByteReader(value)
        let version = try r.unsigned()
        guard version == formatVersion else { throw LMDBByteReader.Overrun() }
        let seconds = try r.double()
        func string() throws -> String? {
            switch try r.byte() {
            case 0: return nil
            case 1: return try text()
            default: throw LMDBByteReader.Overrun()
            }
        }
        func text() throws -> String { String(decoding: try r.lengthPrefixed(), as: UTF8.self) }
        let author = try string(), contextName = try string(), processID = try string(), bundleID = try string()
        let count = try r.unsigned()
        guard count <= UInt64(value.count) else { throw LMDBByteReader.Overrun() }
        var changes: [StoredHistoryChange] = []
        changes.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let kind = HistoryChangeKind(rawValue: Int(try r.byte())) else { throw LMDBByteReader.Overrun() }
            let entity = try text()
            let primaryKey = try r.signed()
            let keyCount = try r.unsigned()
            guard keyCount <= UInt64(value.count) else { throw LMDBByteReader.Overrun() }
            var keys: [String] = []
            for _ in 0..<keyCount { keys.append(try text()) }
            changes.append(StoredHistoryChange(kind: kind, entityName: entity, primaryKey: primaryKey, updatedKeys: keys))
        }
        return StoredHistoryTransaction(
            number: number, timestamp: Date(timeIntervalSinceReferenceDate: seconds), author: author, contextName: contextName,
            processID: processID, bundleID: bundleID, changes: changes)
    }
}

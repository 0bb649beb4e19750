import Foundation
import Switchyard
import SwitchyardPostgreSQL
import Testing

/// Persistent history as Core Data's `NSPersistentHistoryTrackingKey` gives it: each save's transaction with its
/// author, context name, time and changed objects, read after a token, merged into a stale context, deleted by
/// token or date — on every backend, through the public API.
@Suite struct PersistentHistoryTests {
    static let tracked = StoreOptions(persistentHistory: true)

    /// A coordinator with one `Main` store of `backend` that records history.
    static func coordinator(_ backend: Backend, in dir: TempDir, options: StoreOptions = tracked) throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: try Shop.model())
        switch backend {
        case .sqlite: try coordinator.addStore(.sqlite, configuration: "Main", at: dir.url.appendingPathComponent("Main.sqlite"), options: options)
        case .lmdb: try coordinator.addStore(.lmdb, configuration: "Main", at: dir.url.appendingPathComponent("Main.lmdb"), options: options)
        case .memory: try coordinator.addStore(.memory, configuration: "Main", options: options)
        case .postgresql:
            try coordinator.addStore(.postgreSQL, configuration: "Main", url: try Backend.postgresURL(in: dir.url, name: "Main"), options: options)
        }
        return coordinator
    }

    static func kinds(_ transaction: HistoryTransaction) -> [ObjectID: HistoryChangeKind] {
        Dictionary(uniqueKeysWithValues: transaction.changes.map { ($0.objectID, $0.kind) })
    }

    static func keys(_ transaction: HistoryTransaction, _ object: ManagedObject) -> Set<String>? {
        transaction.changes.first { $0.objectID == object.objectID && $0.kind == .update }?.updatedKeys
    }

    @Test(arguments: Backend.everyStore)
    func everySaveIsRecordedWithAuthorTimeAndChanges(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let start = try coordinator.currentHistoryToken(for: "Main")
        #expect(start.transactionNumber == 0)
        #expect(try coordinator.history(after: nil, in: "Main").isEmpty)

        let context = ObjectContext(coordinator: coordinator)
        context.transactionAuthor = "importer"
        context.name = "editor"
        let before = Date()
        let ada = try Shop.customer(context, "Ada")
        let first = try Shop.order(context, "A1", qty: 1, customer: ada)
        let second = try Shop.order(context, "A2", qty: 2)
        let tag = try context.insert("Tag")
        try tag.set("label", "rush")
        try context.save()

        try first.set("qty", Int64(10))
        try first.set("width", 2.5)
        try second.setRelatedObject(ada, forKey: "customer")
        try first.addRelatedObject(tag, forKey: "tags")
        try context.save()

        context.transactionAuthor = "cleaner"
        try context.delete(second)
        try context.save()

        let transactions = try coordinator.history(after: start, in: "Main")
        try #require(transactions.count == 3)
        let (t1, t2, t3) = (transactions[0], transactions[1], transactions[2])
        #expect(t1.token.transactionNumber < t2.token.transactionNumber && t2.token.transactionNumber < t3.token.transactionNumber)
        #expect(t1.token.storeIdentifier == coordinator.stores[0].identifier)
        #expect(t1.author == "importer" && t2.author == "importer" && t3.author == "cleaner")
        #expect(t1.contextName == "editor")
        #expect(t1.processID == ProcessInfo.processInfo.processName)
        #expect(t1.timestamp >= before.addingTimeInterval(-1) && t3.timestamp <= Date().addingTimeInterval(1))
        #expect(t1.configuration == "Main")

        #expect(Self.kinds(t1) == [ada.objectID: .insert, first.objectID: .insert, second.objectID: .insert, tag.objectID: .insert])
        // Attributes and to-one of the row itself; a many-to-many link on both ends.
        #expect(Self.keys(t2, first) == ["qty", "width", "tags"])
        #expect(Self.keys(t2, second) == ["customer"])
        #expect(Self.keys(t2, tag) == ["orders"])
        #expect(Self.keys(t2, ada) == ["orders"])   // its to-many changed through the inverse
        #expect(Self.kinds(t3) == [second.objectID: .delete])
        #expect(t2.storeChanges.updated[first.objectID] == ["qty", "width", "tags"])
        #expect(t3.storeChanges.deleted == [second.objectID])

        // After a token: only what came later; the current token is the last transaction's.
        #expect(try coordinator.history(after: t1.token, in: "Main").map(\.token) == [t2.token, t3.token])
        #expect(try coordinator.history(after: t1.token, in: "Main", limit: 1).map(\.token) == [t2.token])
        #expect(try coordinator.currentHistoryToken(for: "Main") == t3.token)
        #expect(try coordinator.history(after: t3.token, in: "Main").isEmpty)
    }

    /// A context that read objects before another context's saves catches up by merging the history: updated
    /// objects take the saved values, deleted ones leave it; its own unsaved changes follow the merge policy.
    @Test(arguments: Backend.everyStore)
    func mergingHistoryBringsAStaleContextUpToDate(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let writer = ObjectContext(coordinator: coordinator)
        try Shop.order(writer, "K1", qty: 1)
        try Shop.order(writer, "K2", qty: 2)
        try Shop.order(writer, "K3", qty: 3)
        try writer.save()
        let token = try coordinator.currentHistoryToken(for: "Main")

        let reader = ObjectContext(coordinator: coordinator)
        let seen = try reader.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        try seen[2].set("width", 9.0)   // an unsaved change of its own

        let fetched = try writer.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        try fetched[0].set("qty", Int64(100))
        try fetched[2].set("qty", Int64(300))
        try writer.delete(fetched[1])
        try writer.save()

        let transactions = try coordinator.history(after: token, in: "Main")
        #expect(transactions.count == 1)
        expectContextError("unsaved change under .error", { if case .mergeConflict = $0 { return true } else { return false } }) {
            try reader.mergeChanges(fromHistory: transactions)
        }
        try reader.mergeChanges(fromHistory: transactions, policy: .contextWins)
        #expect(try seen[0].get("qty", as: Int64.self) == 100)
        #expect(try seen[2].get("qty", as: Int64.self) == 300)
        #expect(try seen[2].get("width", as: Double.self) == 9.0)
        expectContextError("deleted by the other save", isDetached) { try seen[1].set("qty", Int64(5)) }
        try reader.save()
        #expect(try Shop.codes(ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "width == 9.0")))) == ["K3"])
    }

    /// Batch updates and deletes are transactions too, naming every row they changed.
    @Test(arguments: Backend.everyStore)
    func batchOperationsAreRecorded(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let ids = try coordinator.batchInsert("Order", (1...5).map { ["code": .string("B\($0)"), "qty": .integer(Int64($0))] })
        let afterInsert = try coordinator.currentHistoryToken(for: "Main")
        #expect(try coordinator.batchUpdate("Order", where: try FetchPredicate(format: "qty <= 2"), set: ["width": .double(1)]) == 2)
        #expect(try coordinator.batchDelete("Order", where: try FetchPredicate(format: "qty >= 4")) == 2)
        let all = try coordinator.history(after: nil, in: "Main")
        #expect(all.count == 3)
        #expect(Set(all[0].changes.map(\.objectID)) == Set(ids) && all[0].changes.allSatisfy { $0.kind == .insert })
        let later = try coordinator.history(after: afterInsert, in: "Main")
        try #require(later.count == 2)
        #expect(Set(later[0].changes.map(\.objectID)) == Set(ids[0...1]))
        #expect(later[0].changes.allSatisfy { $0.kind == .update && $0.updatedKeys == ["width"] })
        #expect(Set(later[1].changes.map(\.objectID)) == Set(ids[3...4]))
        #expect(later[1].changes.allSatisfy { $0.kind == .delete })

        // A transaction of more changes than one INSERT of Core Data's change rows holds (SQLite writes them in
        // chunks): every one recorded, in order.
        let before = try coordinator.currentHistoryToken(for: "Main")
        let many = try coordinator.batchInsert("Tag", (1...150).map { ["label": .string("t\($0)")] })
        let big = try coordinator.history(after: before, in: "Main")
        #expect(big.count == 1 && big.first?.changes.map(\.objectID) == many.sorted { $0.primaryKey! < $1.primaryKey! })
    }

    /// Deleting history by token or by date; a token older than what is kept is refused (refetch instead), and
    /// transaction numbers are never reused.
    @Test(arguments: Backend.everyStore)
    func deletingHistoryExpiresOlderTokens(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        var tokens: [HistoryToken] = []
        for i in 1...4 {
            try Shop.order(context, "D\(i)", qty: Int64(i))
            try context.save()
            tokens.append(try coordinator.currentHistoryToken(for: "Main"))
        }
        #expect(try coordinator.deleteHistory(through: tokens[1]) == 2)
        #expect(try coordinator.history(after: nil, in: "Main").map(\.token) == [tokens[2], tokens[3]])
        #expect(try coordinator.history(after: tokens[1], in: "Main").map(\.token) == [tokens[2], tokens[3]])
        do {
            _ = try coordinator.history(after: tokens[0], in: "Main")
            Issue.record("a token older than the kept history was accepted")
        } catch let error as StoreError {
            guard case let .historyExpired(path, configuration, after, oldest) = error else { throw error }
            #expect(path == coordinator.stores[0].displayPath && configuration == "Main")
            #expect(after == tokens[0].transactionNumber && oldest == tokens[2].transactionNumber)
            #expect(error.localizedDescription.contains("refetch"))
        }
        // By date: everything recorded before now.
        #expect(try coordinator.deleteHistory(before: Date().addingTimeInterval(1), in: "Main") == 2)
        #expect(try coordinator.history(after: nil, in: "Main").isEmpty)
        #expect(try coordinator.currentHistoryToken(for: "Main") == tokens[3])
        #expect(try coordinator.history(after: tokens[3], in: "Main").isEmpty)
        try Shop.order(context, "D5", qty: 5)
        try context.save()
        #expect(try coordinator.history(after: tokens[3], in: "Main").map(\.token.transactionNumber) == [tokens[3].transactionNumber + 1])
        #expect(try coordinator.deleteHistory(before: Date(timeIntervalSinceReferenceDate: 0), in: "Main") == 0)
    }

    /// Clear errors: a store that does not record history, a token of another store, a configuration with no
    /// store.
    @Test(arguments: Backend.everyStore)
    func historyErrorsNameTheStore(_ backend: Backend) throws {
        let dir = try TempDir()
        let untracked = try Self.coordinator(backend, in: dir, options: .default)
        do {
            _ = try untracked.history(after: nil, in: "Main")
            Issue.record("history of an untracked store")
        } catch let error as StoreError {
            guard case let .historyNotTracked(path, "Main") = error else { throw error }
            #expect(path == untracked.stores[0].displayPath)
            #expect(error.localizedDescription.contains("persistentHistory: true"))
        }
        let other = try TempDir()
        let tracked = try Self.coordinator(backend, in: other)
        let foreign = HistoryToken(storeIdentifier: UUID(), transactionNumber: 1)
        do {
            _ = try tracked.history(after: foreign, in: "Main")
            Issue.record("a token of another store was accepted")
        } catch let error as CoordinatorError {
            guard case .historyTokenFromAnotherStore(foreign.description, "Main", tracked.stores[0].identifier, tracked.stores[0].displayPath) = error
            else { throw error }
            #expect(error.localizedDescription.contains("belongs to another store"))
        }
        #expect(throws: CoordinatorError.self) { try tracked.deleteHistory(through: foreign) }
        do {
            _ = try tracked.history(after: nil, in: "Archive")
            Issue.record("a configuration without a store was accepted")
        } catch let error as CoordinatorError {
            #expect(error == .noStoreForConfiguration(name: "Archive", added: ["Main"]))
        }
        // A token round-trips through Codable, as an app persists it.
        let token = try tracked.currentHistoryToken(for: "Main")
        #expect(try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(token)) == token)
    }

    /// History is part of the store's file: it is there after reopening, and a store that has history keeps
    /// recording even when reopened without the option, so other readers never miss a transaction.
    @Test(arguments: Backend.everyStore.filter { $0 != .memory })
    func historySurvivesReopeningAndKeepsRecording(_ backend: Backend) throws {
        let dir = try TempDir()
        var first: [HistoryTransaction] = []
        do {
            let coordinator = try Self.coordinator(backend, in: dir)
            let context = ObjectContext(coordinator: coordinator)
            try Shop.order(context, "R1", qty: 1)
            try context.save()
            first = try coordinator.history(after: nil, in: "Main")
        }
        let coordinator = try Self.coordinator(backend, in: dir, options: .default)
        #expect(try coordinator.history(after: nil, in: "Main") == first)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "R2", qty: 2)
        try context.save()
        let all = try coordinator.history(after: nil, in: "Main")
        #expect(all.count == 2 && all.first == first.first)
        // Read-only: readable, nothing recorded.
        let readOnly = StoreCoordinator(model: try Shop.model())
        if backend == .postgresql {
            try readOnly.addStore(.postgreSQL, configuration: "Main", url: try Backend.postgresURL(in: dir.url, name: "Main"), options: .readOnly)
        } else {
            let file = dir.url.appendingPathComponent(backend == .sqlite ? "Main.sqlite" : "Main.lmdb")
            try readOnly.addStore(backend.storeType, configuration: "Main", at: file, options: .readOnly)
        }
        #expect(try readOnly.history(after: nil, in: "Main") == all)
    }

    /// The live stream delivers each transaction as it commits, in order, and ends when its task is cancelled.
    @Test(arguments: Backend.everyStore)
    func historyStreamDeliversTransactionsAsTheyCommit(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let start = try coordinator.currentHistoryToken(for: "Main")
        let stream = coordinator.historyTransactions(after: start, in: "Main", pollInterval: .milliseconds(5))
        let reader = Task { () throws -> [HistoryTransaction] in
            var received: [HistoryTransaction] = []
            for try await transaction in stream {
                received.append(transaction)
                if received.count == 3 { break }
            }
            return received
        }
        let context = ObjectContext(coordinator: coordinator)
        context.transactionAuthor = "writer"
        for i in 1...3 {
            try Shop.order(context, "S\(i)", qty: Int64(i))
            try context.save()
        }
        let received = try await reader.value
        #expect(received.map(\.author) == ["writer", "writer", "writer"])
        #expect(received == (try coordinator.history(after: start, in: "Main")))

        // A stream given a foreign token ends with the error.
        var failure: Error?
        do {
            for try await _ in coordinator.historyTransactions(after: HistoryToken(storeIdentifier: UUID(), transactionNumber: 0), in: "Main") {}
        } catch {
            failure = error
        }
        #expect(failure is CoordinatorError)
    }

    /// A token is checked against what the store keeps: one taken before the first save expires once history
    /// after it is deleted, one past the store's last transaction (a restored or replaced store) is refused, a
    /// negative one is invalid — never silently an empty or partial answer.
    @Test(arguments: Backend.everyStore)
    func tokensOutsideWhatIsKeptAreRefused(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let zero = try coordinator.currentHistoryToken(for: "Main")
        #expect(zero.transactionNumber == 0)
        let context = ObjectContext(coordinator: coordinator)
        for i in 1...3 {
            try Shop.order(context, "T\(i)", qty: Int64(i))
            try context.save()
        }
        #expect(try coordinator.history(after: zero, in: "Main").count == 3)
        let store = coordinator.stores[0]
        let ahead = HistoryToken(storeIdentifier: store.identifier, transactionNumber: 7)
        do {
            _ = try coordinator.history(after: ahead, in: "Main")
            Issue.record("a token past the last transaction was accepted")
        } catch let error as StoreError {
            guard case .historyTokenAhead(store.displayPath, "Main", 7, 3) = error else { throw error }
            #expect(error.localizedDescription.contains("restored from an older copy"))
        }
        var streamError: Error?
        do {
            for try await _ in coordinator.historyTransactions(after: ahead, in: "Main") {}
        } catch {
            streamError = error
        }
        #expect((streamError as? StoreError).map { if case .historyTokenAhead = $0 { return true } else { return false } } == true)
        #expect(throws: StoreError.self) {
            try coordinator.history(after: HistoryToken(storeIdentifier: store.identifier, transactionNumber: -1), in: "Main")
        }
        try coordinator.deleteHistory(through: HistoryToken(storeIdentifier: store.identifier, transactionNumber: 1))
        do {
            _ = try coordinator.history(after: zero, in: "Main")
            Issue.record("a token from before the first save survived deleted history")
        } catch let error as StoreError {
            guard case .historyExpired(_, _, 0, 2) = error else { throw error }
        }
    }

    /// Merging several transactions is all or nothing under `.error`: a conflict in the second leaves the first
    /// unmerged too; transactions of a store the coordinator does not have are refused.
    @Test(arguments: Backend.everyStore)
    func mergingSeveralTransactionsIsAllOrNothing(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let writer = ObjectContext(coordinator: coordinator)
        let x = try Shop.order(writer, "X", qty: 1)
        let y = try Shop.order(writer, "Y", qty: 1)
        try writer.save()
        let token = try coordinator.currentHistoryToken(for: "Main")
        let reader = ObjectContext(coordinator: coordinator)
        let readX = try reader.existingObject(with: x.objectID), readY = try reader.existingObject(with: y.objectID)
        try readY.set("width", 3.0)
        try x.set("qty", Int64(2))
        try writer.save()
        try y.set("qty", Int64(2))
        try writer.save()
        let transactions = try coordinator.history(after: token, in: "Main")
        #expect(transactions.count == 2)
        expectContextError("conflict in the second transaction", { if case .mergeConflict = $0 { return true } else { return false } }) {
            try reader.mergeChanges(fromHistory: transactions)
        }
        #expect(try readX.get("qty", as: Int64.self) == 1, "the first transaction was merged although the merge failed")
        try reader.mergeChanges(fromHistory: transactions, policy: .contextWins)
        #expect(try readX.get("qty", as: Int64.self) == 2)
        #expect(try readY.get("qty", as: Int64.self) == 2 && readY.get("width", as: Double.self) == 3.0)

        let other = try TempDir()
        let elsewhere = try Self.coordinator(backend, in: other)
        #expect(throws: CoordinatorError.self) { try ObjectContext(coordinator: elsewhere).mergeChanges(fromHistory: transactions) }
    }

    /// A store opened without the option while another coordinator (another process: an older app version, a
    /// widget) turns history on: its saves are recorded from then on, so readers of history miss none.
    @Test(arguments: Backend.everyStore.filter { $0 != .memory })
    func historyTurnedOnByAnotherOpenerIsFollowed(_ backend: Backend) throws {
        let dir = try TempDir()
        let early = try Self.coordinator(backend, in: dir, options: .default)
        let late = try Self.coordinator(backend, in: dir)
        let lateContext = ObjectContext(coordinator: late), earlyContext = ObjectContext(coordinator: early)
        try Shop.order(lateContext, "L1", qty: 1)
        try lateContext.save()
        let e1 = try Shop.order(earlyContext, "E1", qty: 1)
        try earlyContext.save()
        try Shop.order(lateContext, "L2", qty: 1)
        try lateContext.save()
        let recorded = try late.history(after: nil, in: "Main")
        #expect(recorded.count == 3)
        #expect(recorded.count == 3 && recorded[1].changes.map(\.objectID.primaryKey) == [e1.objectID.primaryKey])
        // The early opener reads the history too now.
        #expect(try early.history(after: nil, in: "Main").count == 3)
    }

    /// The same after the early opener has saved before history was turned on (a user trial, 2026-11-29: on
    /// SQLite its later saves were never recorded — the check for the history tables read the connection's cached
    /// schema, which still said there were none).
    @Test(arguments: Backend.everyStore.filter { $0 != .memory })
    func historyTurnedOnAfterTheEarlyOpenerSavedIsFollowed(_ backend: Backend) throws {
        let dir = try TempDir()
        let early = try Self.coordinator(backend, in: dir, options: .default)
        let earlyContext = ObjectContext(coordinator: early)
        try Shop.order(earlyContext, "before", qty: 1)
        try earlyContext.save()
        let late = try Self.coordinator(backend, in: dir)
        let token = try late.currentHistoryToken(for: "Main")
        for code in ["E1", "E2", "E3"] {
            try Shop.order(earlyContext, code, qty: 1)
            try earlyContext.save()
        }
        #expect(try late.history(after: token, in: "Main").count == 3)
    }

    /// Moving or replacing a store keeps it recording history; a stream following a store that is removed from
    /// the coordinator ends with an error instead of watching it forever.
    @Test(arguments: [Backend.sqlite, .lmdb])
    func storeFileOperationsKeepHistoryAndEndStreams(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "M1", qty: 1)
        try context.save()
        // Contents without history replace the store: it goes on recording.
        let plain = StoreCoordinator(model: try Shop.model())
        let plainFile = dir.url.appendingPathComponent(backend == .sqlite ? "Plain.sqlite" : "Plain.lmdb")
        try plain.addStore(backend.storeType, configuration: "Main", at: plainFile)
        try Shop.order(ObjectContext(coordinator: plain), "P1", qty: 1)
        try plain.removeStore(plain.stores[0])
        let replaced = try coordinator.replaceStore(coordinator.stores[0], withContentsOf: plainFile)
        let afterReplace = ObjectContext(coordinator: coordinator)
        try Shop.order(afterReplace, "M2", qty: 2)
        try afterReplace.save()
        #expect(try coordinator.history(after: nil, in: "Main").count == 1)
        let moved = try coordinator.moveStore(replaced, to: dir.url.appendingPathComponent(backend == .sqlite ? "Moved.sqlite" : "Moved.lmdb"))
        try Shop.order(afterReplace, "M3", qty: 3)
        try afterReplace.save()
        #expect(try coordinator.history(after: nil, in: "Main").count == 2)

        let stream = coordinator.historyTransactions(after: try coordinator.currentHistoryToken(for: "Main"), in: "Main")
        try coordinator.removeStore(moved)
        var ended: Error?
        do {
            for try await _ in stream {}
        } catch {
            ended = error
        }
        #expect((ended as? CoordinatorError).map { if case .storeNotInCoordinator = $0 { return true } else { return false } } == true)
    }

    /// A stream following a store that is moved or replaced ends as for a removed one, with
    /// `storeNotInCoordinator` (a user trial saw `StoreError.closed`, which does not tell the subscriber to follow
    /// the coordinator's current store).
    @Test(arguments: [Backend.sqlite, .lmdb], ["move", "replace"])
    func aStreamOfAStoreMovedOrReplacedEndsAsForARemovedOne(_ backend: Backend, _ operation: String) async throws {
        let dir = try TempDir()
        let coordinator = try Self.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "M1", qty: 1)
        try context.save()
        let backup = dir.url.appendingPathComponent("Backup.\(backend.rawValue)")
        try coordinator.copyStore(coordinator.stores[0], to: backup)
        let stream = coordinator.historyTransactions(after: try coordinator.currentHistoryToken(for: "Main"), in: "Main")
        let ending = Task {
            do {
                for try await _ in stream {}
                return "finished"
            } catch let error as CoordinatorError {
                if case .storeNotInCoordinator = error { return "storeNotInCoordinator" }
                return "\(error)"
            } catch {
                return "\(error)"
            }
        }
        try await Task.sleep(for: .milliseconds(30))
        if operation == "move" {
            try coordinator.moveStore(coordinator.stores[0], to: dir.url.appendingPathComponent("Moved.\(backend.rawValue)"))
        } else {
            try coordinator.replaceStore(coordinator.stores[0], withContentsOf: backup)
        }
        #expect(await ending.value == "storeNotInCoordinator")
    }
}

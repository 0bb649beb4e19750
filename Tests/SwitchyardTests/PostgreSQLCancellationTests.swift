import Foundation
import Logging
import Synchronization
import SwitchyardContext
import SwitchyardDifferential
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// Issue #15 point 2 on a server: cancelling the task of a `BackgroundContext.perform` stops the statement the
/// body waits for, as GRDB's async accesses interrupt SQLite. The scenario is the public API's (a fetch or a save
/// in a `perform`, the task cancelled); a connection of the test's own holds a lock on the table, so the store's
/// statement waits on the server until it is cancelled.
@Suite(.serialized) struct PostgreSQLCancellationTests {
    let dir = TemporaryDirectory()

    /// A store of LoadItems with `count` saved, its statements marked with an application name of their own.
    func store(_ name: String, count: Int) throws -> (StoreCoordinator, URL, application: String) {
        let application = "cancel_\(UUID().uuidString.prefix(8))"
        var parts = URLComponents(url: try dir.postgresURL(name), resolvingAgainstBaseURL: false)!
        parts.queryItems = (parts.queryItems ?? []) + [URLQueryItem(name: "application_name", value: application)]
        let coordinator = StoreCoordinator(model: try PostgresLoad.model())
        try coordinator.addStore(.postgreSQL, configuration: "Default", url: parts.url!)
        let context = ObjectContext(coordinator: coordinator)
        for seq in 0..<count {
            let item = try context.insert("LoadItem")
            try item.set("worker", Int64(1))
            try item.set("seq", Int64(seq))
        }
        try context.save()
        return (coordinator, parts.url!, application)
    }

    /// Waits until a statement of `application` waits for a lock on the server (at most 60 seconds).
    static func waitUntilBlocked(_ application: String) async throws -> Bool {
        let admin = try PostgreSQLServerTests.admin()
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try blocked(application, admin: admin) > 0 { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// How many statements of `application` wait for a lock now.
    static func blocked(_ application: String, admin: PostgreSQLConnection? = nil) throws -> Int {
        let admin = try admin ?? PostgreSQLServerTests.admin()
        let rows = try admin.query(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [.text(application)])
        return Int(try rows.first?.makeRandomAccess().integer(0) ?? -1)
    }

    /// Runs `body` with its awaits resumed on a thread of its own rather than Swift's cooperative pool, and gives
    /// it that executor for the tasks it starts. Beside the whole suite the pool's threads (as many as cores) are
    /// often held by long synchronous tests: a fresh-clone run once saw the fetch's task not start within a
    /// minute, and a resumption after the cancel wait 17 s.
    static func offThePool(_ body: (DedicatedThreadExecutor) async throws -> Void) async throws {
        let executor = DedicatedThreadExecutor(name: "test.cancellation")
        defer { executor.shutdown() }
        try await withTaskExecutorPreference(executor) { try await body(executor) }
    }

    @Test(TestServer.needed) func cancellingAFetchStopsItsStatementOnTheServer() async throws {
        try await Self.offThePool { executor in
            let (coordinator, url, application) = try store("fetch", count: 3)
            let background = BackgroundContext(coordinator: coordinator)
            let lock = try TableLock(url: url, table: "ZLOADITEM")
            defer { lock.release() }
            let fetch = Task(executorPreference: executor) {
                try await background.perform { context in try context.fetch(FetchRequest(entityName: "LoadItem")).count }
            }
            #expect(try await Self.waitUntilBlocked(application), "the fetch never waited for the lock")
            let cancelled = ContinuousClock.now
            fetch.cancel()
            // Without the cancel request the fetch would wait for the lock (released after 120 s at the latest) and
            // then return its rows. It ends within 0.1 s of the cancel; the bound is loose for a loaded machine.
            await #expect(throws: CancellationError.self) { try await fetch.value }
            #expect(ContinuousClock.now - cancelled < .seconds(90))
            #expect(try Self.blocked(application) == 0, "the cancelled statement still waits on the server")
            lock.release()
            // The same context, and its store's connections, work on once the lock is gone.
            #expect(try await background.perform { context in try context.fetch(FetchRequest(entityName: "LoadItem")).count } == 3)
        }
    }

    @Test(TestServer.needed) func cancellingASaveRollsItBackWholeAndTheContextKeepsItsChanges() async throws {
        try await Self.offThePool { executor in
            let (coordinator, url, application) = try store("save", count: 2)
            let background = BackgroundContext(coordinator: coordinator)
            try await background.perform { context in
                for seq in 100..<105 {
                    let item = try context.insert("LoadItem")
                    try item.set("worker", Int64(2))
                    try item.set("seq", Int64(seq))
                }
            }
            let lock = try TableLock(url: url, table: "ZLOADITEM")
            defer { lock.release() }
            let save = Task(executorPreference: executor) { try await background.perform { context in try context.save() } }
            #expect(try await Self.waitUntilBlocked(application), "the save never waited for the lock")
            let cancelled = ContinuousClock.now
            save.cancel()
            await #expect(throws: CancellationError.self) { try await save.value }
            #expect(ContinuousClock.now - cancelled < .seconds(90))
            #expect(try Self.blocked(application) == 0, "the cancelled insert still waits on the server")
            lock.release()
            // Nothing of the save reached the store; the context still holds its five inserts and saves them now.
            let stored = try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "LoadItem"))
            #expect(stored == 2)
            #expect(try await background.perform { context in context.insertedObjects.count } == 5)
            try await background.perform { context in try context.save() }
            let after = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "LoadItem"))
                .compactMap { try $0.get("seq", as: Int64.self) }.sorted()
            #expect(after == [0, 1, 100, 101, 102, 103, 104])
            // The keys the cancelled save allocated (in a transaction of their own) are not reused: seven objects, seven IDs.
            #expect(Set(try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "LoadItem")).map(\.objectID)).count == 7)
        }
    }

    /// A cancelled task's later store calls in the same body throw before they reach the server; the context
    /// keeps what they did not save.
    @Test(TestServer.needed) func aCancelledBodyMakesNoFurtherStoreCalls() async throws {
        try await Self.offThePool { executor in
            let (coordinator, _, _) = try store("after", count: 1)
            let background = BackgroundContext(coordinator: coordinator)
            let started = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
            let task = Task(executorPreference: executor) {
                try await background.perform { context -> Int in
                    let first = try context.count(FetchRequest(entityName: "LoadItem"))
                    started.signal()
                    _ = proceed.wait(timeout: .now() + 30)
                    // Cancelled by now: this save must not reach the store.
                    let item = try context.insert("LoadItem")
                    try item.set("worker", Int64(3))
                    try item.set("seq", Int64(1))
                    try context.save()
                    return first
                }
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { started.wait(); continuation.resume() }
            }
            task.cancel()
            proceed.signal()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "LoadItem")) == 1)
            // The insert made before the refused save stays pending in the context, as after any failed save, and
            // the context's next perform (a task not cancelled) saves it.
            #expect(try await background.perform { context in context.insertedObjects.count } == 1)
            try await background.perform { context in try context.save() }
            #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "LoadItem")) == 2)
        }
    }
}

/// `LOCK TABLE … IN ACCESS EXCLUSIVE MODE` on a store's table, held by a connection of its own on a thread of its
/// own until `release()` (or 120 seconds, so a failing test cannot hang).
final class TableLock: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let isReleased = Mutex(false)

    init(url: URL, table: String) throws {
        let locked = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let released = self.released, done = self.done
        let thread = Thread {
            defer { done.signal() }
            do {
                let location = try PostgreSQLLocation(url, configuration: "lock")
                let connection = try PostgreSQLConnection(location, configuration: "lock", logger: Logger(label: "lock") { _ in SwiftLogNoOpLogHandler() })
                try connection.execute("BEGIN")
                try connection.execute("LOCK TABLE \(PostgreSQLConnection.quote(table)) IN ACCESS EXCLUSIVE MODE")
                locked.signal()
                _ = released.wait(timeout: .now() + 120)
                try connection.execute("ROLLBACK")
            } catch {
                failure.withLock { $0 = "\(error)" }
                locked.signal()
            }
        }
        thread.start()
        locked.wait()
        if let failure = failure.withLock({ $0 }) {
            release()
            throw StoreError.openFailed(path: url.absoluteString, configuration: "lock", reason: failure)
        }
    }

    /// Ends the lock's transaction and waits until it has (once; later calls do nothing).
    func release() {
        guard isReleased.withLock({ was in defer { was = true }; return !was }) else { return }
        released.signal()
        done.wait()
    }
}

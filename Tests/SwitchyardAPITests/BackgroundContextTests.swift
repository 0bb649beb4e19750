import Foundation
import Switchyard
import Synchronization
import Testing

/// Contexts from `async` code, the way Core Data's `perform` and GRDB's async `read`/`write` are used: work on
/// a context's own thread (never the cooperative pool), one `perform` after another, `Sendable` results, and
/// task cancellation honoured before a body starts.
@Suite struct BackgroundContextTests {
    /// Core Data's `perform` on a private-queue context: an insert saved in one `perform` is what a fetch in a
    /// later `perform` (and another context) returns; unsaved changes are visible to the next `perform` of the
    /// same context, as they would be on its queue.
    @Test(arguments: Backend.everyStore)
    func performSavesAndFetchesOnEveryBackend(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let background = BackgroundContext(coordinator: coordinator)
        let ids = try await background.perform { context in
            try (1...20).map { try Shop.order(context, "A\($0)", qty: Int64($0)).objectID }
        }
        // Not saved yet: the same context sees its pending inserts, a fresh one does not.
        let pending = try await background.perform { context in
            try context.count(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty > 10")))
        }
        #expect(pending == 10)
        let elsewhere = try await coordinator.performBackgroundTask { context in
            try context.count(FetchRequest(entityName: "Order"))
        }
        #expect(elsewhere == 0)
        try await background.perform { context in try context.save() }
        let saved = try await coordinator.performBackgroundTask { context in
            try context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("qty")]))
                .map { [$0.objectID.uriRepresentation, try $0.get("code", as: String.self) ?? "nil"] }
        }
        #expect(saved.map { $0[1] } == (1...20).map { "A\($0)" })
        // The IDs handed out before the save (temporary) and the saved objects name the same 20 objects.
        #expect(ids.count == 20)
        #expect(Set(saved.map { $0[0] }).count == 20)
        #expect(saved.allSatisfy { !$0[0].contains("/t") })
    }

    /// Where apps call it from: a main-actor view model that owns a background context performs inserts, fetches
    /// with values it captures, and merges another context's saves from `saveNotifications()`, as the README's
    /// merge loop does. (This compiles only because `perform` takes its body as `sending`; Swift 6 refused the
    /// call from the main actor before.)
    @Test(arguments: Backend.everyStore)
    @MainActor
    func mainActorCodeCallsPerform(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let model = OrdersViewModel(coordinator: coordinator)
        let a1 = try await model.add("A1", qty: 3)
        try await model.add("A2", qty: 9)
        try await model.refresh(above: 5)
        #expect(model.codes == ["A2"])

        // Another context saves; the view model merges the notification (the README's merge loop, on the main actor).
        let stream = coordinator.saveNotifications()
        try await coordinator.performBackgroundTask { context in
            let a1 = try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code == 'A1'"))).first)
            try a1.set("qty", Int64(7))
            try context.save()
        }
        var notifications = stream.makeAsyncIterator()
        let saved = try #require(await notifications.next())
        try await model.merge(saved)
        #expect(try await model.quantity(of: a1) == 7, "the object the context holds took the saved value")
        try await model.refresh(above: 5)
        #expect(model.codes == ["A1", "A2"])
    }

    /// The point of the API: bodies that block (as file I/O does) do not hold the cooperative pool's threads.
    /// More bodies than the pool has threads (one per core) wait on a semaphore at once, each on its context's
    /// own thread, until a plain thread sees them all waiting: on the pool, no more than its width could ever
    /// wait together. (The signaller was a task on the pool, waited for 30 seconds: on a loaded machine other
    /// tests' synchronous work held the pool's two threads longer than that, and every wait timed out.)
    @Test func blockingBodiesLeaveTheCooperativePoolFree() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.sqlite, in: dir)
        let waiting = Counter(), failed = Counter()
        let gate = DispatchSemaphore(value: 0)
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let contexts = (0..<count).map { BackgroundContext(coordinator: coordinator, name: "test.\($0)") }
        let allWaited = Counter()
        let signaller = Thread {
            let deadline = Date().addingTimeInterval(600)
            // A body that failed before waiting ends the wait for the others at once.
            while waiting.value < count, failed.value == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
            if waiting.value == count { allWaited.increment() }
            for _ in 0..<count { gate.signal() }
        }
        signaller.start()
        let results = try await withThrowingTaskGroup(of: (thread: String?, released: Bool).self) { group in
            for (k, background) in contexts.enumerated() {
                group.addTask {
                    try await background.perform { context in
                        do { _ = try context.count(FetchRequest(entityName: "Order")) } catch {
                            failed.increment()
                            throw error
                        }
                        waiting.increment()
                        // Each body on its own context's thread, not one of the pool's.
                        let thread = Thread.current.name
                        return (thread == "test.\(k)" ? thread : "test.\(k) ran on \(thread ?? "an unnamed thread")",
                                gate.wait(timeout: .now() + 600) == .success)
                    }
                }
            }
            return try await group.reduce(into: [(thread: String?, released: Bool)]()) { $0.append($1) }
        }
        #expect(allWaited.value == 1, "all \(count) bodies blocked at once")
        #expect(results.map(\.released) == Array(repeating: true, count: count))
        #expect(Set(results.compactMap(\.thread)) == Set((0..<count).map { "test.\($0)" }))
    }

    /// The system shows a context's thread under its name (`top -H`, debuggers), cut to what Linux keeps (15
    /// bytes); before, every context's thread showed its creator's name, and a name longer than that was refused.
    #if os(Linux)
    @Test func aContextsThreadCarriesItsName() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        func systemName() -> String {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "no /proc"
        }
        #expect(try await BackgroundContext(coordinator: coordinator).perform { _ in systemName() } == "Switchyard.Back")
        #expect(try await BackgroundContext(coordinator: coordinator, name: "sync").perform { _ in systemName() } == "sync")
        #expect(try await coordinator.performBackgroundTask { _ in systemName() } == "Switchyard.perf")
        #expect(try await BackgroundContext(coordinator: coordinator, name: "é-twelve-more").perform { _ in systemName() } == "é-twelve-more")
        #expect(try await BackgroundContext(coordinator: coordinator, name: "ééééééééé").perform { _ in systemName() } == "ééééééé")
    }
    #endif

    /// A background context's thread ends when the context goes away: creating and dropping 40 of them leaves
    /// the process with the threads it had (read from /proc/self/task), so per-unit-of-work contexts do not leak.
    @Test func droppedContextsEndTheirThreads() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        func threads() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count }
        _ = try await coordinator.performBackgroundTask { context in try context.count(FetchRequest(entityName: "Order")) }
        let before = try threads()
        for round in 0..<40 {
            let background = BackgroundContext(coordinator: coordinator, name: "test.drop.\(round)")
            _ = try await background.perform { context in try context.count(FetchRequest(entityName: "Order")) }
            _ = try await coordinator.performBackgroundTask { context in try context.count(FetchRequest(entityName: "Order")) }
        }
        var after = try threads()
        let deadline = ContinuousClock.now + .seconds(10)
        while after > before + 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            after = try threads()
        }
        #expect(after <= before + 2, "\(after - before) threads left behind by 80 dropped contexts")
    }

    /// Performs on one context run one after another, in the order they were called from one task, like blocks
    /// on a context's queue.
    @Test func performsOnOneContextRunInOrder() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        let background = BackgroundContext(coordinator: coordinator)
        for qty in 1...50 {
            try await background.perform { context in _ = try Shop.order(context, "O\(qty)", qty: Int64(qty)) }
        }
        let quantities = try await background.perform { context in
            try context.fetch(FetchRequest(entityName: "Order")).compactMap { try $0.get("qty", as: Int64.self) }.sorted()
        }
        #expect(quantities == Array(1...50))
    }

    /// A task cancelled before its `perform` runs gets `CancellationError` and its body does nothing: no insert
    /// reaches the store. The context stays usable for other tasks.
    @Test(arguments: Backend.everyStore)
    func cancelledTaskRunsNothing(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let background = BackgroundContext(coordinator: coordinator)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await background.perform { context in
                try Shop.order(context, "never", qty: 1)
                try context.save()
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        let count = try await background.perform { context in try context.count(FetchRequest(entityName: "Order")) }
        #expect(count == 0)
        let oneShot = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await coordinator.performBackgroundTask { context in
                try Shop.order(context, "never", qty: 1)
                try context.save()
            }
        }
        await #expect(throws: CancellationError.self) { try await oneShot.value }
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order")) == 0)
    }

    /// Errors inside a body reach the caller as they are (here a save refused for a missing required value,
    /// naming the entity), and the context can be fixed and saved in a later `perform`.
    @Test func bodyErrorsReachTheCallerAndTheContextRecovers() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.lmdb, in: dir)
        let background = BackgroundContext(coordinator: coordinator)
        let id = try await background.perform { context in
            let order = try context.insert("Order")
            try order.set("code", "X")
            return order.objectID
        }
        do {
            try await background.perform { context in try context.save() }
            Issue.record("a save without the required qty succeeded")
        } catch {
            #expect("\(error)".contains("Order"))
            #expect("\(error)".contains("qty"))
        }
        try await background.perform { context in
            try context.existingObject(with: id).set("qty", Int64(3))
            try context.save()
        }
        let qty = try await coordinator.performBackgroundTask { context in
            try context.fetch(FetchRequest(entityName: "Order")).first?.get("qty", as: Int64.self)
        }
        #expect(qty == 3)
    }
}

/// A thread-safe counter for the tests above.
private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

/// A view model as a SwiftUI app writes one: main-actor state, its store work in a background context.
@MainActor private final class OrdersViewModel {
    let background: BackgroundContext
    private(set) var codes: [String] = []

    init(coordinator: StoreCoordinator) {
        background = BackgroundContext(coordinator: coordinator)
    }

    @discardableResult
    func add(_ code: String, qty: Int64) async throws -> ObjectID {
        try await background.perform { context in
            let order = try Shop.order(context, code, qty: qty)
            try context.save()
            return order.objectID
        }
    }

    func quantity(of id: ObjectID) async throws -> Int64? {
        try await background.perform { context in try context.existingObject(with: id).get("qty", as: Int64.self) }
    }

    func refresh(above qty: Int64) async throws {
        let predicate = try FetchPredicate(format: "qty > %@", qty)
        codes = try await background.perform { context in
            try context.fetch(FetchRequest(entityName: "Order", predicate: predicate, sortKeys: [SortKey("code")]))
                .map { try $0.get("code", as: String.self) ?? "" }
        }
    }

    func merge(_ notification: SaveNotification) async throws {
        try await background.perform { context in try context.mergeChanges(from: notification) }
    }
}

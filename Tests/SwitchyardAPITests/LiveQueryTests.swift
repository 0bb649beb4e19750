import Foundation
import Logging
import MessengerSchema
import Switchyard
import Synchronization
import Testing

/// Observed fetches, as `NSFetchedResultsController` and GRDB's `ValueObservation` give them: a first snapshot,
/// then a new one after each save that changes the results, with what changed by position and sections;
/// saves that cannot affect the request cause no fetch.
@Suite struct LiveQueryTests {
    /// Collects a stream's snapshots from a task of its own.
    final class Collector: Sendable {
        final class State: Sendable {
            let snapshots = Mutex<[QuerySnapshot]>([])
            let failure = Mutex<String?>(nil)
        }
        let state = State()
        let task: Task<Void, Never>
        /// The snapshots so far.
        var received: [QuerySnapshot] { state.snapshots.withLock { $0 } }
        /// The error that ended the stream, if one did.
        var failure: String? { state.failure.withLock { $0 } }

        init(_ stream: AsyncThrowingStream<QuerySnapshot, any Error>) {
            let state = self.state
            task = Task {
                do {
                    for try await snapshot in stream { state.snapshots.withLock { $0.append(snapshot) } }
                } catch {
                    state.failure.withLock { $0 = "\(error)" }
                }
            }
        }

        /// Why `wait(for:)` gave up: the stream ended with an error, or the snapshots did not come in time.
        struct WaitFailure: Error, CustomStringConvertible {
            let description: String
        }

        /// Waits (up to 60 s: the whole suite runs in parallel on two cores) until `count` snapshots arrived, and
        /// returns them. Throws `WaitFailure` saying which: the stream's error (a refresh that failed ends it), or
        /// how many came before the deadline and what the last one held — a missing snapshot was once seen under
        /// heavy load, and these say whether the query failed or never refreshed.
        func wait(for count: Int) async throws -> [QuerySnapshot] {
            let start = ContinuousClock.now
            while state.snapshots.withLock({ $0.count }) < count {
                if let failure { throw WaitFailure(description: "the stream ended before snapshot \(count): \(failure)") }
                guard ContinuousClock.now < start + .seconds(60) else {
                    let received = received
                    throw WaitFailure(description: "snapshot \(count) did not come within 60 s; \(received.count) came, the last with \(received.last.map { "\($0.objectIDs)" } ?? "nothing")")
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            return state.snapshots.withLock { $0 }
        }
    }

    static func codes(_ ids: [ObjectID], _ coordinator: StoreCoordinator) throws -> [String] {
        let context = ObjectContext(coordinator: coordinator)
        return try ids.map { try context.existingObject(with: $0).get("code", as: String.self) ?? "?" }
    }

    /// The first snapshot, then one per save that changed the results: removals by old position, insertions
    /// by new position, and updates of objects that stayed.
    @Test(arguments: Backend.everyStore)
    func snapshotsFollowSavesWithTheirChanges(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try SaveNotificationTests.seeded(backend, in: dir)
        let request = FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty >= 2"), sortKeys: [SortKey("qty")])
        let collector = Collector(try coordinator.observe(request))
        defer { collector.task.cancel() }
        var snapshots = try await collector.wait(for: 1)
        try #require(snapshots.count == 1)
        #expect(try Self.codes(snapshots[0].objectIDs, coordinator) == ["A2", "A3"])
        #expect(snapshots[0].changes == nil)
        #expect(snapshots[0].sections.map(\.objectIDs) == [snapshots[0].objectIDs])

        let context = ObjectContext(coordinator: coordinator)
        try context.delete(SaveNotificationTests.order(context, "A2"))
        try SaveNotificationTests.order(context, "A1").set("qty", Int64(5))
        try Shop.order(context, "A4", qty: 4)
        try context.save()
        snapshots = try await collector.wait(for: 2)
        try #require(snapshots.count == 2)
        #expect(try Self.codes(snapshots[1].objectIDs, coordinator) == ["A3", "A4", "A1"])
        #expect(snapshots[1].changes == QueryChanges(removed: [0], inserted: [1, 2], updated: []))

        try SaveNotificationTests.order(context, "A3").set("width", 1.5)
        try context.save()
        snapshots = try await collector.wait(for: 3)
        try #require(snapshots.count == 3)
        #expect(snapshots[2].objectIDs == snapshots[1].objectIDs)
        #expect(snapshots[2].changes == QueryChanges(removed: [], inserted: [], updated: [0]))
        #expect(collector.failure == nil)
    }

    /// Sections group consecutive results by the section key, as `sectionNameKeyPath` does.
    @Test func sectionsGroupByTheSectionKey() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (code, qty) in [("a", 1), ("b", 1), ("c", 2), ("d", 3), ("e", 3)] { try Shop.order(context, code, qty: Int64(qty)) }
        try context.save()
        let request = FetchRequest(entityName: "Order", sortKeys: [SortKey("qty"), SortKey("code")])
        let collector = Collector(try coordinator.observe(request, sectionedBy: "qty"))
        defer { collector.task.cancel() }
        let first = try #require(try await collector.wait(for: 1).first)
        #expect(first.sections.map(\.name) == ["1", "2", "3"])
        #expect(try first.sections.map { try Self.codes($0.objectIDs, coordinator) } == [["a", "b"], ["c"], ["d", "e"]])
    }

    /// Saves that touch no entity the request reads cause no fetch; a save to an entity its predicate reaches
    /// through a relationship does. Fetches are counted from the store's trace (what a user sees in the log).
    @Test func unrelatedSavesCauseNoFetch() async throws {
        let dir = try TempDir()
        let lines = TracingTests.Lines()
        let coordinator = StoreCoordinator(model: try Shop.model(), logger: TracingTests.logger(lines))
        try coordinator.addStore(.sqlite, configuration: "Main", at: dir.url.appendingPathComponent("Main.sqlite"), options: StoreOptions(traceLevel: .operations))
        let setup = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(setup, "Ann")
        try Shop.order(setup, "A1", qty: 1, customer: ann)
        let tag = try setup.insert("Tag")
        try tag.set("label", "t")
        try setup.save()
        func orderFetches() -> Int { lines.all.filter { $0.contains("fetch Order") }.count }

        let plain = Collector(try coordinator.observe(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty > 0"))))
        defer { plain.task.cancel() }
        _ = try await plain.wait(for: 1)
        let afterFirst = orderFetches()
        for i in 0..<20 {
            try tag.set("label", "t\(i)")
            try setup.save()
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(orderFetches() == afterFirst, "saves of Tag objects re-ran an Order fetch")
        #expect(plain.received.count == 1)

        let throughCustomer = Collector(try coordinator.observe(FetchRequest(
            entityName: "Order", predicate: try FetchPredicate(format: "customer.name == 'Ann'"))))
        defer { throughCustomer.task.cancel() }
        #expect(try await throughCustomer.wait(for: 1).first?.objectIDs.count == 1)
        let beforeRename = orderFetches()
        try ann.set("name", "Bob")
        try setup.save()
        let renamed = try await throughCustomer.wait(for: 2)
        try #require(renamed.count == 2)
        #expect(renamed[1].objectIDs.isEmpty)
        #expect(renamed[1].changes?.removed == [0])
        // The Customer save re-ran the fetch through customer.name, and not the plain Order one.
        try await Task.sleep(for: .milliseconds(200))
        #expect(orderFetches() == beforeRename + 1)
        #expect(plain.received.count == 1)
    }

    /// A burst of saves costs at most one fetch per save, and the last snapshot shows the last save.
    @Test func aBurstOfSavesEndsInTheLastState() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.lmdb, in: dir)
        let collector = Collector(try coordinator.observe(FetchRequest(entityName: "Order", sortKeys: [SortKey("qty")])))
        defer { collector.task.cancel() }
        _ = try await collector.wait(for: 1)
        let context = ObjectContext(coordinator: coordinator)
        for i in 1...100 {
            try Shop.order(context, "O\(i)", qty: Int64(i))
            try context.save()
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while collector.received.last?.objectIDs.count != 100, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let snapshots = collector.received
        #expect(snapshots.last?.objectIDs.count == 100)
        #expect(snapshots.count <= 101)
    }

    /// The typed form observes the same request, with predicates on key paths of a generated entity type.
    @Test func typedObservationFollowsSaves() async throws {
        let dir = try TempDir()
        let model = try ModelLoader.load(at: URL(fileURLWithPath: "Schemas/Messenger.xcdatamodeld"))
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Cloud", at: dir.url.appendingPathComponent("Cloud.sqlite"))
        let collector = Collector(try coordinator.observe(
            Message.self, where: \.isRead == false, sortedBy: [.ascending(\.isRead), .ascending(\.sentAt)], sectionedBy: \.isRead))
        defer { collector.task.cancel() }
        #expect(try await collector.wait(for: 1).first?.objectIDs == [])
        let context = ObjectContext(coordinator: coordinator)
        for (id, read) in [("m1", false), ("m2", true), ("m3", false)] {
            let message = try context.insert(Message.self)
            message.messageID = id
            message.sentAt = Date(timeIntervalSinceReferenceDate: Double(id.count))
            message.isRead = read
        }
        try context.save()
        let snapshots = try await collector.wait(for: 2)
        try #require(snapshots.count == 2)
        let ids = try snapshots[1].objectIDs.map { try context.existingObject(Message.self, with: $0).messageID }
        #expect(Set(ids) == ["m1", "m3"])
        #expect(snapshots[1].changes?.inserted == [0, 1])
        #expect(snapshots[1].sections.map(\.name) == ["0"])
    }

    /// An observation started while a large save is committing still ends up with that save's rows (found by
    /// a user: the save decided before its commit that nobody observed, and the first fetch ran before it).
    @Test(arguments: Backend.persistent)
    func anObservationStartedDuringASaveSeesIt(_ backend: Backend) async throws {
        let dir = try TempDir()
        // How long such a save takes here, so the observation below starts near the end of the real one, while
        // its store transaction runs (the window the bug lived in).
        let scratch = try TempDir()
        let timing = try Shop.coordinator(backend, in: scratch)
        let context = ObjectContext(coordinator: timing)
        for i in 0..<20_000 { try Shop.order(context, "r\(i)", qty: Int64(i)) }
        let clock = ContinuousClock()
        let saveTime = try clock.measure { try context.save() }

        let coordinator = try Shop.coordinator(backend, in: dir)
        let aboutToSave = Mutex(false)
        let saving = Task.detached {
            try await coordinator.performBackgroundTask { context in
                for i in 0..<20_000 { try Shop.order(context, "r\(i)", qty: Int64(i)) }
                aboutToSave.withLock { $0 = true }
                try context.save()
            }
        }
        while !aboutToSave.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        try await Task.sleep(for: saveTime * 0.7)
        let collector = Collector(try coordinator.observe(FetchRequest(entityName: "Order")))
        defer { collector.task.cancel() }
        try await saving.value
        let deadline = ContinuousClock.now + .seconds(60)
        while collector.received.last?.objectIDs.count != 20_000, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(collector.received.last?.objectIDs.count == 20_000)
    }

    /// Section names are the values as text (no quotes), Booleans "0"/"1", no value "".
    @Test func sectionNamesAreTheValuesAsText() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (code, qty) in [("new", 1), ("new", 2), ("old", 3)] { try Shop.order(context, code, qty: Int64(qty)) }
        try context.save()
        let collector = Collector(try coordinator.observe(FetchRequest(entityName: "Order", sortKeys: [SortKey("code"), SortKey("qty")]), sectionedBy: "code"))
        defer { collector.task.cancel() }
        #expect(try await collector.wait(for: 1).first?.sections.map(\.name) == ["new", "old"])
    }

    /// A change of a sort key moves an object (reported as a move and an update, as NSFetchedResultsController
    /// reports it), and only objects whose row changed are updates.
    @Test(arguments: Backend.everyStore)
    func aSortKeyChangeIsAMove(_ backend: Backend) async throws {
        let dir = try TempDir()
        let coordinator = try SaveNotificationTests.seeded(backend, in: dir)
        let collector = Collector(try coordinator.observe(FetchRequest(entityName: "Order", sortKeys: [SortKey("qty")])))
        defer { collector.task.cancel() }
        _ = try await collector.wait(for: 1)
        let context = ObjectContext(coordinator: coordinator)
        try SaveNotificationTests.order(context, "A1").set("qty", Int64(10))
        try context.save()
        let snapshots = try await collector.wait(for: 2)
        try #require(snapshots.count == 2)
        #expect(try Self.codes(snapshots[1].objectIDs, coordinator) == ["A2", "A3", "A1"])
        #expect(snapshots[1].changes == QueryChanges(removed: [], inserted: [], moved: [QueryChanges.Move(from: 0, to: 2)], updated: [2]))
    }

    /// A request the model cannot answer is refused at once, naming what is wrong.
    @Test func badRequestsAreRefusedAtOnce() throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        #expect(throws: ContextError.unknownEntity("Invoice")) { _ = try coordinator.observe(FetchRequest(entityName: "Invoice")) }
        #expect(throws: QueryError.self) {
            _ = try coordinator.observe(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "customer.age > 3")))
        }
        do {
            _ = try coordinator.observe(FetchRequest(entityName: "Order"), sectionedBy: "colour")
            Issue.record("an unknown section key was accepted")
        } catch {
            #expect("\(error)".contains("colour"))
        }
    }

    /// Ending the observation (cancelling the consuming task) removes its save observer and ends its thread.
    @Test func endedObservationsLeaveNothingBehind() async throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(.memory, in: dir)
        func threads() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count }
        let warm = Collector(try coordinator.observe(FetchRequest(entityName: "Order")))
        _ = try await warm.wait(for: 1)
        warm.task.cancel()
        try await Task.sleep(for: .milliseconds(100))
        let before = try threads()
        for _ in 0..<30 {
            let collector = Collector(try coordinator.observe(FetchRequest(entityName: "Order")))
            _ = try await collector.wait(for: 1)
            collector.task.cancel()
            await collector.task.value
        }
        var after = try threads()
        let deadline = ContinuousClock.now + .seconds(10)
        while after > before + 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            after = try threads()
        }
        #expect(after <= before + 2, "\(after - before) threads left behind by 30 ended observations")
    }
}

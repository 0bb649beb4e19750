import Foundation
import Switchyard
import Testing

/// Issue #16 point 3: two real processes on one SQLite, LMDB or PostgreSQL store each see the other's saves
/// through persistent history within 100 ms of commit, without polling the data tables (the stream watches the
/// history's last transaction number). The other process is `lmdb-crash-helper history-peer`.
@Suite(.serialized) struct HistoryTwoProcessTests {
    /// The peer process, fed lines on standard input; its output lines are collected as they arrive.
    final class Peer: @unchecked Sendable {
        let process = Process()
        private let input = Pipe(), output = Pipe(), errors = Pipe()
        private let lock = NSLock()
        private var buffer = Data()
        private var lines: [String] = []

        init(helper: URL, backend: String, store: String) throws {
            process.executableURL = helper
            process.arguments = ["history-peer", backend, store]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.withLock {
                    self.buffer.append(data)
                    while let newline = self.buffer.firstIndex(of: 0x0A) {
                        self.lines.append(String(decoding: self.buffer[self.buffer.startIndex..<newline], as: UTF8.self))
                        self.buffer.removeSubrange(self.buffer.startIndex...newline)
                    }
                }
            }
            try process.run()
        }

        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

        /// The first output line starting with `prefix` (removed), waiting up to `timeout` seconds.
        func line(_ prefix: String, timeout: TimeInterval = 30) throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let found = lock.withLock { () -> String? in
                    guard let i = lines.firstIndex(where: { $0.hasPrefix(prefix) }) else { return nil }
                    return lines.remove(at: i)
                }
                if let found { return found }
                if !process.isRunning {
                    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    throw PeerError(message: "the peer exited (\(process.terminationStatus)) before '\(prefix)': \(message)")
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
            throw PeerError(message: "no '\(prefix)' line from the peer within \(timeout) s")
        }

        func stop() {
            send("quit")
            process.waitUntilExit()
        }
    }

    struct PeerError: Error, CustomStringConvertible { let message: String; var description: String { message } }

    static let model = { try! ObjectModel(entities: [
        EntityDescription(name: "Note", attributes: [AttributeDescription(name: "label", type: .string, isOptional: false)]),
    ]) }()

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    @Test(.enabled(if: LMDBDurabilityTests.crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests`"),
          arguments: [StoreType.sqlite, .lmdb] + (TestServer.isSkipped ? [] : [.postgreSQL]))
    func eachProcessSeesTheOthersSavesWithin100ms(_ type: StoreType) throws {
        // Synchronous on purpose, like the watcher's executor below: the other suites running alongside keep the
        // cooperative pool's threads busy for seconds at a time, and a wait that needs one of them to resume
        // measures their queue, not the store.
        let helper = try #require(LMDBDurabilityTests.crashHelper)
        let temp = TemporaryDirectory()
        let coordinator = StoreCoordinator(model: Self.model)
        let store: String
        if type == .postgreSQL {
            let url = try temp.postgresURL("shared")
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(persistentHistory: true))
            store = url.absoluteString
        } else {
            let url = temp.file(type == .sqlite ? "Shared.sqlite" : "Shared.lmdb")
            try coordinator.addStore(type, configuration: "Default", at: url, options: StoreOptions(persistentHistory: true))
            store = url.path
        }
        let start = try coordinator.currentHistoryToken(for: "Default")

        // This process's watcher: a context merging every transaction of the peer, with the time it arrived. It
        // runs on a thread of its own, as an app's main actor would: the other suites running alongside keep the
        // cooperative pool's threads busy, and what is measured is the store, not their queue.
        let arrivals = Locked<[(number: Int64, received: Double, labels: [String])]>([])
        let executor = DedicatedThreadExecutor(name: "history watcher")
        defer { executor.shutdown() }
        let watcher = Task(executorPreference: executor) {
            let context = ObjectContext(coordinator: coordinator)
            for try await transaction in coordinator.historyTransactions(after: start, in: "Default") where transaction.author == "peer" {
                let received = Date().timeIntervalSince1970
                try context.mergeChanges(fromHistory: [transaction])
                let labels = try transaction.changes.map { try context.existingObject(with: $0.objectID).get("label", as: String.self) ?? "?" }
                arrivals.withLock { $0.append((transaction.token.transactionNumber, received, labels)) }
            }
        }
        defer { watcher.cancel() }

        let peer = try Peer(helper: helper, backend: type == .postgreSQL ? "postgresql" : type == .sqlite ? "sqlite" : "lmdb", store: store)
        defer { peer.stop() }
        _ = try peer.line("ready")

        let context = ObjectContext(coordinator: coordinator)
        context.transactionAuthor = "parent"
        var toParent: [Double] = [], toPeer: [Double] = []
        for round in 1...10 {
            // Peer saves; this process sees it.
            peer.send("save peer-\(round)")
            let saved = try peer.line("saved").split(separator: " ")
            let number = try #require(Int64(saved[1])), committed = try #require(Double(saved[2]))
            let deadline = Date().addingTimeInterval(30)
            var arrival: (number: Int64, received: Double, labels: [String])?
            while arrival == nil, Date() < deadline {
                arrival = arrivals.withLock { $0.first { $0.number == number } }
                if arrival == nil { Thread.sleep(forTimeInterval: 0.001) }
            }
            let got = try #require(arrival, "transaction \(number) of the peer never arrived")
            #expect(got.labels == ["peer-\(round)"])
            toParent.append(got.received - committed)

            // This process saves; the peer sees it.
            let note = try context.insert("Note")
            try note.set("label", "parent-\(round)")
            try context.save()
            let committedHere = Date().timeIntervalSince1970
            let ours = try coordinator.currentHistoryToken(for: "Default").transactionNumber
            let seen = try peer.line("seen \(ours) ").split(separator: " ")
            #expect(seen[2] == "parent")
            #expect(seen.count == 5 && seen[4] == "parent-\(round)")
            toPeer.append(try #require(Double(seen[3])) - committedHere)
        }
        // Every transaction arrived once, in commit order.
        let numbers = arrivals.withLock { $0.map(\.number) }
        #expect(numbers == numbers.sorted() && Set(numbers).count == 10)
        let (medianToParent, medianToPeer) = (Self.median(toParent), Self.median(toPeer))
        print(String(format: "%@ history between processes: median %.1f ms peer->parent, %.1f ms parent->peer; worst %.1f / %.1f ms",
                     type.rawValue, medianToParent * 1000, medianToPeer * 1000, toParent.max()! * 1000, toPeer.max()! * 1000))
        #expect(medianToParent < 0.1, "peer -> parent: \(toParent)")
        #expect(medianToPeer < 0.1, "parent -> peer: \(toPeer)")
        #expect(try coordinator.history(after: start, in: "Default").count == 20)
    }
}

import Foundation
import Testing
@testable import Switchyard

/// The LMDB store under pressure: a map that must grow from 1 MiB to hold 50 MiB, readers racing a writer,
/// and a writer process killed with SIGKILL in the middle of a transaction.
@Suite struct LMDBDurabilityTests {
    let dir = TemporaryDirectory()

    /// One entity with an indexed sequence number and a binary payload (the crash helper builds the same).
    static func blobModel() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Blob", attributes: [
                AttributeDescription(name: "seq", type: .integer64, isIndexed: true),
                AttributeDescription(name: "payload", type: .binary),
            ]),
        ])
    }

    /// 64 KiB whose content depends on `key` (as the crash helper writes them).
    static func payload(_ key: Int64) -> Data {
        var data = Data(repeating: UInt8(key % 251), count: 65_536)
        withUnsafeBytes(of: key.bigEndian) { data.replaceSubrange(0..<8, with: $0) }
        return data
    }

    private func blobs(_ keys: ClosedRange<Int64>) -> [StoreRow] {
        keys.map { StoreRow(entityName: "Blob", primaryKey: $0, values: ["seq": .integer($0), "payload": .binary(Self.payload($0))]) }
    }

    /// Every row 1...count is there, with its own payload.
    private func verify(_ store: LMDBStore, count: Int) throws {
        let rows = try store.fetch(StoreFetchRequest(entityName: "Blob"))
        #expect(rows.map(\.primaryKey) == Array(1...Int64(count)))
        for row in rows where row["payload"] != .binary(Self.payload(row.primaryKey)) || row["seq"] != .integer(row.primaryKey) {
            Issue.record("row p\(row.primaryKey) came back different")
            break
        }
    }

    // MARK: - Map growth

    enum Batching: String, CaseIterable, Sendable { case severalSaves, oneSave }

    @Test(arguments: Batching.allCases)
    func mapGrowsFromOneMiBToFiftyMiBAndReopensSmaller(batching: Batching) throws {
        let model = try Self.blobModel()
        let url = dir.file("grow-\(batching.rawValue).lmdb")
        let small = StoreOptions(initialMapSize: 1 << 20)
        do {
            let store = try LMDBStore(url: url, model: model, configuration: "Default", options: small)
            #expect(store.mapSize == 1 << 20)
            let keys = try store.allocatePrimaryKeys(for: "Blob", count: 800)   // 800 x 64 KiB = 50 MiB
            switch batching {
            case .severalSaves:
                for start in stride(from: keys.lowerBound, to: keys.upperBound, by: 100) {
                    try store.save(StoreChangeSet(inserts: blobs(start...(start + 99))))
                }
            case .oneSave:
                try store.save(StoreChangeSet(inserts: blobs(keys)))
            }
            #expect(store.mapSize >= 50 << 20)
            try verify(store, count: 800)
        }
        let file = url.appendingPathComponent("data.mdb").path
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(size > 50 << 20)
        // Asking for a map smaller than the data: LMDB maps at least the used pages, and the store grows on.
        let store = try LMDBStore(url: url, model: model, configuration: "Default", options: small)
        #expect(store.mapSize >= size - (1 << 20))
        try verify(store, count: 800)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Blob", predicate: try FetchPredicate(format: "seq == 777"))).count == 1)
        #expect(store.lastFetchRowsVisited == 1)
        let more = try store.allocatePrimaryKeys(for: "Blob", count: 100)
        try store.save(StoreChangeSet(inserts: blobs(more)))
        try verify(store, count: 900)
    }

    // MARK: - Snapshots

    @Test func readersOnOtherThreadsSeeOnlyWholeSaves() async throws {
        let model = try Self.blobModel()
        // A 1 MiB map that the writer outgrows several times while the readers run: growing waits for them.
        let store = try LMDBStore(
            url: dir.file("snapshots.lmdb"), model: model, configuration: "Default", options: StoreOptions(initialMapSize: 1 << 20))
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(store)
        let done = Locked(false)
        let writer = Task.detached {
            defer { done.withLock { $0 = true } }
            for _ in 0..<60 {
                let keys = try store.allocatePrimaryKeys(for: "Blob", count: 10)
                try store.save(StoreChangeSet(inserts: keys.map {
                    StoreRow(entityName: "Blob", primaryKey: $0, values: ["seq": .integer($0), "payload": .binary(Data(count: 8_192))])
                }))
            }
        }
        let readers = (0..<3).map { reader in
            Task.detached { () throws -> [Int] in
                var seen: [Int] = []
                let context = ObjectContext(coordinator: coordinator)
                while true {
                    // Read the flag first: a sample taken after the writer finished sees its last save.
                    let finished = done.withLock { $0 }
                    switch reader {
                    case 0: seen.append(try store.count(StoreFetchRequest(entityName: "Blob")))
                    case 1: seen.append(try store.fetch(StoreFetchRequest(entityName: "Blob", predicate: try FetchPredicate(format: "seq > 0"))).count)
                    default: seen.append(try context.count(FetchRequest(entityName: "Blob")))
                    }
                    if finished, seen.count >= 5 { break }
                }
                return seen
            }
        }
        try await writer.value
        for reader in readers {
            let seen = try await reader.value
            #expect(seen.allSatisfy { $0 % 10 == 0 }, "a reader saw half a save: \(seen.filter { $0 % 10 != 0 })")
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "counts went backwards")
            #expect(seen.last == 600)
        }
        #expect(store.mapSize >= 4 << 20)
    }

    // MARK: - Crash

    /// The helper executable, next to the test bundle (`swift build --build-tests` builds it).
    static let crashHelper: URL? = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidates = [
            testBinary.deletingLastPathComponent().appendingPathComponent("lmdb-crash-helper"),
            Repository.url(".build/debug/lmdb-crash-helper"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    @Test(.enabled(if: crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests` before `swift test`"))
    func writerKilledMidTransactionLeavesTheLastCommittedState() throws {
        let helper = try #require(Self.crashHelper)
        let model = try Self.blobModel()
        let url = dir.file("crash.lmdb")
        // This process keeps the store open throughout: it must survive the writer dying while holding
        // LMDB's (robust) write mutex, and see exactly what the child committed. The child commits 19 MiB, more
        // than this process's 16 MiB map: its next transaction gets MDB_MAP_RESIZED and adopts the new size.
        let store = try LMDBStore(url: url, model: model, configuration: "Default")
        #expect(store.mapSize == 16 << 20)
        let committed = 300, pending = 2_000

        let child = Process()
        child.executableURL = helper
        child.arguments = [url.path, String(committed), String(pending)]
        let output = Pipe(), errors = Pipe()
        child.standardOutput = output
        child.standardError = errors
        try child.run()
        var transcript = ""
        while !transcript.contains("writing\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            transcript += String(decoding: chunk, as: UTF8.self)
        }
        guard transcript.contains("writing\n") else {
            child.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            Issue.record("the helper stopped before its big write: \(transcript) \(stderr)")
            return
        }
        // LMDB keeps a write transaction's dirty pages in malloc'd memory until commit: once the child's resident
        // memory has grown by 48 MiB, it is deep inside the 128 MiB transaction, far from its end.
        let baseline = Self.residentBytes(child.processIdentifier)
        let deadline = Date().addingTimeInterval(60)
        while child.isRunning, Self.residentBytes(child.processIdentifier) < baseline + (48 << 20), Date() < deadline {
            usleep(2_000)
        }
        let wasRunning = child.isRunning
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        transcript += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(wasRunning, "the helper finished before it could be killed: \(transcript)")
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        #expect(transcript.contains("committed \(committed)\n"))
        #expect(!transcript.contains("finished"))

        // Exactly the committed rows, byte for byte; the keys the child allocated are never handed out again.
        try verify(store, count: committed)
        #expect(store.mapSize > 16 << 20)
        #expect(try store.allocatePrimaryKeys(for: "Blob", count: 1) == Int64(committed + pending + 1)...Int64(committed + pending + 1))
        // The dead writer's mutex is recovered: this process can write.
        try store.save(StoreChangeSet(inserts: blobs(Int64(committed + 1)...Int64(committed + 1))))
        try verify(store, count: committed + 1)
    }

    @Test(.enabled(if: crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests` before `swift test`"))
    func storeReopensCleanlyAfterAKilledWriter() throws {
        let helper = try #require(Self.crashHelper)
        let url = dir.file("crash-alone.lmdb")
        // Here no other process has the environment open: the next opener is the first, and resets the lock file.
        let child = Process()
        child.executableURL = helper
        child.arguments = [url.path, "20", "2000"]
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        var transcript = ""
        while !transcript.contains("writing\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            transcript += String(decoding: chunk, as: UTF8.self)
        }
        let baseline = Self.residentBytes(child.processIdentifier)
        let deadline = Date().addingTimeInterval(60)
        while child.isRunning, Self.residentBytes(child.processIdentifier) < baseline + (48 << 20), Date() < deadline {
            usleep(2_000)
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        transcript += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(transcript.contains("committed 20\n") && !transcript.contains("finished"))
        let store = try LMDBStore(url: url, model: try Self.blobModel(), configuration: "Default")
        try verify(store, count: 20)
        try store.save(StoreChangeSet(inserts: blobs(2021...2021)))
        #expect(try store.count(StoreFetchRequest(entityName: "Blob")) == 21)
    }

    /// A process's resident set size, from /proc (0 when it is gone).
    static func residentBytes(_ pid: Int32) -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

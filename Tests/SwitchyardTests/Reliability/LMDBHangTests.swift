import Foundation
import Testing
import Switchyard

/// Opens and writes that used to wait forever: a failed `mdb_env_open` (it deadlocked on the environment
/// registry's lock) and a write behind a writer whose process is stopped (LMDB's writer mutex has no timeout).
@Suite struct LMDBHangTests {
    let dir = TemporaryDirectory()

    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [
                AttributeDescription(name: "number", type: .integer64),
                AttributeDescription(name: "note", type: .string),
            ]),
        ])
    }

    @Test func emptyDataFileOpenedReadOnlyIsNotAStore() throws {
        let url = dir.file("empty.lmdb")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: url.appendingPathComponent("data.mdb").path, contents: Data())
        #expect {
            _ = try LMDBStore(url: url, model: try Self.model(), configuration: "Default", options: .readOnly)
        } throws: { error in
            guard case StoreError.notAStore(_, _, let reason) = error else { return false }
            return reason.contains("empty")
        }
        // Twice: the failed open must not leave anything locked behind.
        #expect(throws: StoreError.self) {
            _ = try LMDBStore(url: url, model: try Self.model(), configuration: "Default", options: .readOnly)
        }
    }

    /// `mdb_env_open` fails (here: `lock.mdb` is a directory, as a read-only file system would make it fail for
    /// a writer even as root); the error comes back, and once the cause is gone the same directory opens.
    @Test func failedEnvironmentOpenThrowsAndDoesNotPoisonTheDirectory() throws {
        let url = dir.file("broken.lmdb")
        let lock = url.appendingPathComponent("lock.mdb")
        try FileManager.default.createDirectory(at: lock, withIntermediateDirectories: true)
        #expect {
            _ = try LMDBStore(url: url, model: try Self.model(), configuration: "Default")
        } throws: { error in
            guard case StoreError.lmdb(_, _, let call, _, _) = error else { return false }
            return call == "mdb_env_open"
        }
        try FileManager.default.removeItem(at: lock)
        let store = try LMDBStore(url: url, model: try Self.model(), configuration: "Default")
        #expect(try store.count(StoreFetchRequest(entityName: "Record")) == 0)
    }

    /// A child process migrating the store holds the write transaction and is stopped with SIGSTOP: a writable
    /// open here (its bootstrap writes) gives up after the configured timeout with a clear error, a read-only
    /// open still works, and once the child is killed the store opens with its old rows.
    @Test(.enabled(if: LMDBDurabilityTests.crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests`"))
    func writerBehindAStoppedWriterGivesUp() throws {
        let helper = try #require(LMDBDurabilityTests.crashHelper)
        let url = dir.file("stopped.lmdb")
        let rows = 8_000
        do {
            let store = try LMDBStore(url: url, model: try Self.model(), configuration: "Default")
            _ = try store.allocatePrimaryKeys(for: "Record", count: rows)
            let inserts = (1...rows).map {
                StoreRow(entityName: "Record", primaryKey: Int64($0), values: ["number": .integer(Int64($0))])
            }
            try store.save(StoreChangeSet(inserts: inserts))
        }
        let child = Process()
        child.executableURL = helper
        child.arguments = ["migrate", "lmdb", url.path]
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        var transcript = ""
        while !transcript.contains("batch ") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            transcript += String(decoding: chunk, as: UTF8.self)
        }
        try #require(transcript.contains("batch "), "the helper never started migrating: \(transcript)")
        kill(child.processIdentifier, SIGSTOP)

        let started = Date()
        var options = StoreOptions.default
        options.writeTimeout = 1
        #expect {
            _ = try LMDBStore(url: url, model: try Self.model(), configuration: "Default", options: options)
        } throws: { error in
            guard case StoreError.lmdb(_, _, _, let code, let message) = error else { return false }
            return code == ETIMEDOUT && message.contains("write lock")
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.9 && waited < 8, "waited \(waited) s")

        do {
            let reader = try LMDBStore(url: url, model: try Self.model(), configuration: "Default", options: .readOnly)
            #expect(try reader.count(StoreFetchRequest(entityName: "Record")) == rows)
        }

        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let reopened = try LMDBStore(url: url, model: try Self.model(), configuration: "Default", options: options)
        #expect(try reopened.count(StoreFetchRequest(entityName: "Record")) == rows)
    }
}

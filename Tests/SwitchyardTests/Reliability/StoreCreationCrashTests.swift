import Foundation
import Testing
import Switchyard

/// A process killed (SIGKILL) at random moments while it creates a store leaves either no store or a whole
/// one: the path then opens read-only and read-write. SQLite once left an empty or tableless file there
/// (11 of 100 kills) that could never be opened again.
@Suite struct StoreCreationCrashTests {
    let dir = TemporaryDirectory()

    /// The helper's model (Tests/LMDBCrashHelper/CreateCrash.swift declares the same).
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: (1...60).map { n in
            EntityDescription(name: "Entity\(n)", attributes: (1...6).map { a in
                AttributeDescription(name: "value\(a)", type: a % 2 == 0 ? .string : .integer64, isIndexed: a <= 2)
            })
        })
    }

    /// Runs the helper creating `url` and kills it after `delay` seconds; true if it finished first.
    static func createAndKill(_ helper: URL, _ backend: Backend, _ url: URL, after delay: TimeInterval) throws -> Bool {
        let child = Process()
        child.executableURL = helper
        child.arguments = ["create", backend.rawValue, url.path]
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        let deadline = Date().addingTimeInterval(delay)
        while child.isRunning, Date() < deadline { usleep(500) }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        return child.terminationReason == .exit
    }

    @Test(.enabled(if: LMDBDurabilityTests.crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests`"),
          arguments: [Backend.sqlite, .lmdb])
    func storeKilledWhileBeingCreatedOpens(backend: Backend) throws {
        let helper = try #require(LMDBDurabilityTests.crashHelper)
        let model = try Self.model()
        // How long one creation takes, so the kills spread over all of it.
        let start = Date()
        #expect(try Self.createAndKill(helper, backend, try #require(backend.url(in: dir, name: "timing")), after: 5))
        let span = Date().timeIntervalSince(start)
        var killed = 0
        for round in 0..<24 {
            let url = try #require(backend.url(in: dir, name: "kill\(round)"))
            if !(try Self.createAndKill(helper, backend, url, after: span * Double(round) / 24)) { killed += 1 }
            let dataFile = backend == .lmdb ? url.appendingPathComponent("data.mdb") : url
            guard FileManager.default.fileExists(atPath: dataFile.path) else { continue }
            let options: [StoreOptions] = [.readOnly, .default]
            for option in options {
                do {
                    let store: any PersistentStore = backend == .sqlite
                        ? try SQLiteStore(url: url, model: model, configuration: "Default", options: option)
                        : try LMDBStore(url: url, model: model, configuration: "Default", options: option)
                    #expect(try store.count(StoreFetchRequest(entityName: "Entity1")) == 0)
                } catch {
                    // LMDB may have made an empty data.mdb that only a writable open initializes.
                    if backend == .lmdb, option.readOnly, case StoreError.notAStore(_, _, let reason) = error, reason.contains("empty") {
                        continue
                    }
                    Issue.record("round \(round) (killed after \(span * Double(round) / 24) s), readOnly \(option.readOnly): \(error)")
                }
            }
        }
        #expect(killed > 0, "no kill landed before the creation finished (span \(span) s)")
    }
}

/// A store left by a writer killed while it opened the store (its `-shm` in a state a `readonly_shm`
/// connection answers with SQLITE_PROTOCOL) opens read-only, and its files' contents are not changed.
@Suite struct StaleSharedMemoryTests {
    let dir = TemporaryDirectory()

    @Test func readOnlyOpenReadsAStoreWithAStaleSharedMemoryFile() throws {
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tar.arguments = ["tar", "xzf", Reproducers.url("sqlite-readonly-shm-protocol.tgz").path, "-C", dir.url.path]
        try tar.run()
        tar.waitUntilExit()
        try #require(tar.terminationStatus == 0)
        let url = dir.file("small.sqlite")
        let before = try Data(contentsOf: url), walBefore = try Data(contentsOf: dir.file("small.sqlite-wal"))
        let inspection = try StoreInspection.inspect(url, model: nil)
        #expect(inspection.entities.reduce(0) { $0 + $1.rows } > 0)
        #expect(try Data(contentsOf: url) == before)
        #expect(try Data(contentsOf: dir.file("small.sqlite-wal")) == walBefore)
    }
}

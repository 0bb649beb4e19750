import Foundation
import Testing
@testable import Switchyard

/// Saves on a full disk (a 1 MiB tmpfs mounted for the test; skipped where mounting is not allowed) end in an
/// error that says so; the store keeps its last committed state and takes writes again once there is room.
@Suite struct DiskFullTests {
    let dir = TemporaryDirectory()

    /// Mounts a tmpfs of `size` at a fresh folder; nil when this process may not mount.
    static func mountTmpfs(at url: URL, size: String) -> Bool {
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return run(["mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", url.path])
    }

    @discardableResult
    static func run(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    static let canMount: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-mount-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard mountTmpfs(at: probe, size: "64k") else { return false }
        run(["umount", probe.path])
        return true
    }()

    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Blob", attributes: [
                AttributeDescription(name: "seq", type: .integer64, isIndexed: true),
                AttributeDescription(name: "payload", type: .binary),
            ]),
        ])
    }

    @Test(.enabled(if: canMount, "cannot mount a tmpfs here (needs root): disk-full test not run"),
          arguments: [Backend.sqlite, .lmdb])
    func saveOnAFullDiskFailsClearlyAndKeepsTheStore(backend: Backend) throws {
        let mount = dir.file("mnt")
        try #require(Self.mountTmpfs(at: mount, size: "1m"))
        defer { Self.run(["umount", "-l", mount.path]) }
        let url = backend == .sqlite ? mount.appendingPathComponent("full.sqlite") : mount.appendingPathComponent("full.lmdb")
        let model = try Self.model()
        func open() throws -> any PersistentStore {
            backend == .sqlite
                ? try SQLiteStore(url: url, model: model, configuration: "Default")
                : try LMDBStore(url: url, model: model, configuration: "Default")
        }
        var committed = 0
        var failure: (any Error)?
        do {
            let store = try open()
            for round in 0..<64 {
                let keys = try store.allocatePrimaryKeys(for: "Blob", count: 4)
                let rows = keys.map {
                    StoreRow(entityName: "Blob", primaryKey: $0, values: [
                        "seq": .integer(Int64(round)), "payload": .binary(Data(repeating: UInt8(round), count: 60_000)),
                    ])
                }
                do {
                    try store.save(StoreChangeSet(inserts: rows))
                    committed += rows.count
                } catch {
                    failure = error
                    break
                }
            }
        }
        let error = try #require(failure, "the 1 MiB file system never filled up")
        let text = "\(error)".lowercased()
        #expect(text.contains("no space left") || text.contains("disk is full"), "\(error)")
        #expect(committed > 0)
        // Room again: the store opens with exactly the committed rows and takes a write.
        #expect(Self.run(["mount", "-o", "remount,size=16m", mount.path]))
        let store = try open()
        #expect(try store.count(StoreFetchRequest(entityName: "Blob")) == committed)
        let key = try store.allocatePrimaryKeys(for: "Blob", count: 1).lowerBound
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Blob", primaryKey: key, values: ["seq": .integer(-1)])]))
        #expect(try store.count(StoreFetchRequest(entityName: "Blob")) == committed + 1)
    }

    /// An LMDB store on a read-only file system: a writable open fails with LMDB's error (it used to deadlock
    /// on the environment registry), a read-only open works.
    @Test(.enabled(if: canMount, "cannot mount a tmpfs here (needs root): read-only file system test not run"))
    func lmdbStoreOnAReadOnlyFileSystem() throws {
        let mount = dir.file("ro")
        try #require(Self.mountTmpfs(at: mount, size: "4m"))
        defer { Self.run(["umount", "-l", mount.path]) }
        let url = mount.appendingPathComponent("store.lmdb")
        let model = try Self.model()
        do {
            let store = try LMDBStore(url: url, model: model, configuration: "Default")
            let key = try store.allocatePrimaryKeys(for: "Blob", count: 1).lowerBound
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Blob", primaryKey: key, values: ["seq": .integer(1)])]))
        }
        try #require(Self.run(["mount", "-o", "remount,ro", mount.path]))
        #expect(throws: StoreError.self) { _ = try LMDBStore(url: url, model: model, configuration: "Default") }
        let reader = try LMDBStore(url: url, model: model, configuration: "Default", options: .readOnly)
        #expect(try reader.count(StoreFetchRequest(entityName: "Blob")) == 1)
    }

    /// Fills the file system at `mount` with a file, leaving about `free` bytes.
    static func fill(_ mount: URL, leaving free: Int) throws {
        var stats = statvfs()
        guard statvfs(mount.path, &stats) == 0 else { return }
        let available = Int(stats.f_bavail) * Int(stats.f_frsize)
        FileManager.default.createFile(
            atPath: mount.appendingPathComponent("filler").path, contents: Data(count: max(0, available - free)))
    }

    /// A migration that runs out of disk fails with a clear error and leaves the old store, which opens with
    /// its old model and rows and migrates once there is room.
    @Test(.enabled(if: canMount, "cannot mount a tmpfs here (needs root): disk-full migration test not run"),
          arguments: [Backend.sqlite, .lmdb])
    func migrationOnAFullDiskKeepsTheOldStore(backend: Backend) throws {
        let mount = dir.file("mig")
        try #require(Self.mountTmpfs(at: mount, size: "3m"))
        defer { Self.run(["umount", "-l", mount.path]) }
        let url = mount.appendingPathComponent(backend == .sqlite ? "m.sqlite" : "m.lmdb")
        let rows = 4_000
        func open(_ version: Int) throws -> any PersistentStore {
            let model = try MigrationCrashTests.model(version)
            return backend == .sqlite
                ? try SQLiteStore(url: url, model: model, configuration: "Default")
                : try LMDBStore(url: url, model: model, configuration: "Default")
        }
        do {
            let store = try open(1)
            _ = try store.allocatePrimaryKeys(for: "Record", count: rows)
            try store.save(StoreChangeSet(inserts: (1...rows).map {
                StoreRow(entityName: "Record", primaryKey: Int64($0), values: ["number": .integer(Int64($0)), "note": .string(String(repeating: "n", count: 100))])
            }))
        }
        try Self.fill(mount, leaving: 0)
        #expect {
            _ = try open(2)
        } throws: { error in
            let text = "\(error)".lowercased()
            return text.contains("no space left") || text.contains("disk is full") || text.contains("disk full")
        }
        try FileManager.default.removeItem(at: mount.appendingPathComponent("filler"))
        do {
            let old = try open(1)
            #expect(try old.storedModel() == MigrationCrashTests.model(1))
            #expect(try old.count(StoreFetchRequest(entityName: "Record")) == rows)
        }
        let migrated = try open(2)
        #expect(try migrated.count(StoreFetchRequest(entityName: "Record", predicate: FetchPredicate(format: "note == 'n'"))) == 0)
        #expect(try migrated.count(StoreFetchRequest(entityName: "Record")) == rows)
    }

    /// A split whose outputs run out of disk fails, leaves no output under a final name and the source as it
    /// was; with room, the same split completes.
    @Test(.enabled(if: canMount, "cannot mount a tmpfs here (needs root): disk-full split test not run"))
    func splitOnAFullDiskLeavesNoOutput() throws {
        let source = dir.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let before = try LegacyMessenger.fingerprint(source)
        let mount = dir.file("split")
        try #require(Self.mountTmpfs(at: mount, size: "2m"))
        defer { Self.run(["umount", "-l", mount.path]) }
        try Self.fill(mount, leaving: 48 << 10)
        let destinations = LegacyMessenger.destinations(in: mount, cacheType: .lmdb)
        let splitter = try StoreSplitter(source: source, targetModel: try LegacyMessenger.targetModel(), destinations: destinations)
        #expect(throws: SplitError.self) { try splitter.run(try splitter.plan()) }
        for destination in destinations {
            #expect(!FileManager.default.fileExists(atPath: destination.url.path), "\(destination.url.lastPathComponent)")
        }
        #expect(try LegacyMessenger.fingerprint(source) == before)
        try FileManager.default.removeItem(at: mount.appendingPathComponent("filler"))
        _ = try splitter.run(try splitter.plan())
        for destination in destinations { #expect(FileManager.default.fileExists(atPath: destination.url.path)) }
    }
}

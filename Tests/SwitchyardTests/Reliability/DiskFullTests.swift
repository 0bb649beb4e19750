import Foundation
import Testing
import Switchyard

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
}

import Foundation
import Testing
@testable import Switchyard

/// Store copies and conversions onto a read-only file system and onto a full disk (tmpfs mounts; skipped
/// where this process may not mount): a clear error, nothing under the destination's name, the source whole.
@Suite(.serialized) struct StoreFileOperationDiskTests {
    let dir = TemporaryDirectory()

    /// A store of 3,000 rows (about 2 MB with its payloads) at `dir/source.<ext>`.
    func source(_ backend: Backend) throws -> (StoreCoordinator, any PersistentStore) {
        let coordinator = StoreCoordinator(model: try DiskFullTests.model())
        let url = dir.file(backend == .sqlite ? "source.sqlite" : "source.lmdb")
        let store = try coordinator.addStore(backend == .sqlite ? .sqlite : .lmdb, configuration: "Default", at: url)
        let keys = try store.allocatePrimaryKeys(for: "Blob", count: 3_000)
        try store.save(StoreChangeSet(inserts: keys.map {
            StoreRow(entityName: "Blob", primaryKey: $0, values: ["seq": .integer($0), "payload": .binary(Data(repeating: UInt8($0 % 251), count: 600))])
        }))
        return (coordinator, store)
    }

    @Test(.enabled(if: DiskFullTests.canMount, "cannot mount a tmpfs here (needs root): read-only destination test not run"),
          arguments: [Backend.sqlite, .lmdb])
    func aReadOnlyDestinationIsRefused(backend: Backend) throws {
        let (coordinator, store) = try source(backend)
        let mount = dir.file("ro-\(backend)")
        try #require(DiskFullTests.mountTmpfs(at: mount, size: "4m"))
        defer { DiskFullTests.run(["umount", "-l", mount.path]) }
        try #require(DiskFullTests.run(["mount", "-o", "remount,ro", mount.path]))
        let target = mount.appendingPathComponent("copy.store")
        #expect(throws: StoreFileOperationError.self) { try coordinator.copyStore(store, to: target) }
        do {
            try coordinator.convertStore(store, to: target, type: backend == .sqlite ? .lmdb : .sqlite)
            Issue.record("a conversion onto a read-only file system did not fail")
        } catch let error as StoreFileOperationError {
            guard case .destinationNotWritable(_, let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == target.path && reason == "cannot write in \(mount.path): Read-only file system", "\(error)")
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Blob")) == 3_000)
    }

    /// Creating a store on a read-only file system, through the coordinator or as a split's output, says so
    /// with the system's reason and names the store (SQLite itself says only "unable to open database file");
    /// the split writes nothing, and its source is untouched.
    @Test(.enabled(if: DiskFullTests.canMount, "cannot mount a tmpfs here (needs root): read-only folder test not run"))
    func aStoreOnAReadOnlyFileSystemSaysWhy() throws {
        let mount = dir.file("ro-open")
        try #require(DiskFullTests.mountTmpfs(at: mount, size: "4m"))
        defer { DiskFullTests.run(["umount", "-l", mount.path]) }
        try #require(DiskFullTests.run(["mount", "-o", "remount,ro", mount.path]))
        let reason = "cannot write in \(mount.path): Read-only file system"
        for (type, name) in [(StoreType.sqlite, "New.sqlite"), (.lmdb, "New.lmdb"), (.lmdb, "sub/New.lmdb")] {
            let url = mount.appendingPathComponent(name)
            let coordinator = StoreCoordinator(model: try DiskFullTests.model())
            let error = #expect(throws: StoreError.self) { try coordinator.addStore(type, configuration: "Default", at: url) }
            let text = error?.localizedDescription ?? ""
            #expect(text.contains(url.path) && text.contains(reason), "\(text)")
        }

        let source = dir.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let before = try LegacyMessenger.fingerprint(source)
        var destinations = LegacyMessenger.destinations(in: dir.url)
        destinations[2] = SplitDestination(configuration: "Cache", url: mount.appendingPathComponent("Cache.lmdb"), type: .lmdb)
        let splitter = try StoreSplitter(source: source, targetModel: try LegacyMessenger.targetModel(), destinations: destinations)
        do {
            _ = try splitter.run(try splitter.plan())
            Issue.record("a split onto a read-only file system did not fail")
        } catch let error as SplitError {
            guard case .outputUnavailable(let why) = error else { Issue.record("\(error)"); return }
            #expect(why.contains(destinations[2].url.path) && why.contains("configuration Cache") && why.hasSuffix(reason), "\(why)")
        }
        for destination in destinations {
            #expect(!FileManager.default.fileExists(atPath: destination.url.path))
            #expect(!FileManager.default.fileExists(atPath: destination.temporaryURL.path))
        }
        #expect(try LegacyMessenger.fingerprint(source) == before)
    }

    @Test(.enabled(if: DiskFullTests.canMount, "cannot mount a tmpfs here (needs root): full-disk copy test not run"),
          arguments: [Backend.sqlite, .lmdb])
    func aCopyOntoAFullDiskLeavesNothing(backend: Backend) throws {
        let (coordinator, store) = try source(backend)
        let mount = dir.file("full-\(backend)")
        try #require(DiskFullTests.mountTmpfs(at: mount, size: "1m"))
        defer { DiskFullTests.run(["umount", "-l", mount.path]) }
        let target = mount.appendingPathComponent(backend == .sqlite ? "copy.sqlite" : "copy.lmdb")
        do {
            try coordinator.copyStore(store, to: target)
            Issue.record("a 2 MB store was copied onto a 1 MiB file system")
        } catch {
            #expect("\(error)".contains("full") || "\(error)".contains("No space") || "\(error)".contains("ENOSPC") || "\(error)".contains("space"),
                    "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path).filter { !$0.hasPrefix("lost") } == [])
        #expect(try store.count(StoreFetchRequest(entityName: "Blob")) == 3_000)
        // With room, the same copy succeeds.
        try #require(DiskFullTests.run(["mount", "-o", "remount,size=16m", mount.path]))
        try coordinator.copyStore(store, to: target)
        let copy = StoreCoordinator(model: try DiskFullTests.model())
        let reopened = try copy.addStore(backend == .sqlite ? .sqlite : .lmdb, configuration: "Default", at: target, options: StoreOptions(readOnly: true))
        #expect(try reopened.count(StoreFetchRequest(entityName: "Blob")) == 3_000)
    }
}

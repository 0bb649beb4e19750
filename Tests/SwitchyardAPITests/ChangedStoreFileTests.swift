import Foundation
import Switchyard
import Testing

/// An LMDB store's `data.mdb` removed, replaced or damaged by something else while this process has the store
/// open (a user's cleanup script, a restore that copies a backup over the live file). LMDB keeps using the file
/// it mapped: a save into a removed file used to succeed and be lost, and a second coordinator opening the path
/// was handed the old mapping — a crash (SIGBUS) when the file had been cut short, an LMDB error naming
/// `mdb_env_set_mapsize` when its bytes had been overwritten. Found by a first-user trial (2026-11-29).
@Suite struct ChangedStoreFileTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(
            entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string, isOptional: false, isIndexed: true)])],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Note"])])
    }

    static func open(_ url: URL) throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: try model())
        try coordinator.addStore(.lmdb, configuration: "Main", at: url)
        return coordinator
    }

    static func add(_ texts: [String], to coordinator: StoreCoordinator) throws {
        let context = ObjectContext(coordinator: coordinator)
        for text in texts { try context.insert("Note").set("text", text) }
        try context.save()
    }

    static func texts(_ coordinator: StoreCoordinator) throws -> [String] {
        try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("text")]))
            .map { try $0.get("text", as: String.self) ?? "" }
    }

    /// Core Data's rule for a save: it either writes or throws. The store directory removed under an open
    /// coordinator: the next save throws saying so, the context keeps its changes, and nothing is recreated.
    @Test func aSaveAfterTheStoreWasRemovedThrowsAndKeepsTheChanges() throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent("notes.lmdb")
        let coordinator = try Self.open(url)
        try Self.add(["A"], to: coordinator)
        try FileManager.default.removeItem(at: url)

        let context = ObjectContext(coordinator: coordinator)
        try context.insert("Note").set("text", "B")
        #expect {
            try context.save()
        } throws: { error in
            String(describing: error).contains("data.mdb was removed") && String(describing: error).contains(url.path)
        }
        #expect(context.hasChanges)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    /// The store deleted whole (its directory) under an open coordinator, then opened again at the same path in
    /// the same process, as a SQLite file deleted and opened again is: the new coordinator gets a new, empty store
    /// of its own, and the old one still refuses to save into the files that are gone.
    @Test func aStoreDeletedWholeOpensAgainAsANewStore() throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent("notes.lmdb")
        let old = try Self.open(url)
        try Self.add(["A"], to: old)
        try FileManager.default.removeItem(at: url)

        let new = try Self.open(url)
        #expect(try Self.texts(new) == [])
        try Self.add(["B"], to: new)
        #expect {
            try Self.add(["lost?"], to: old)
        } throws: { String(describing: $0).contains("data.mdb was replaced") }   // by the new store's file
        withExtendedLifetime(old) {}
        #expect(try Self.texts(new) == ["B"])
    }

    /// A backup copied over the live file: the coordinator that has the old file open refuses to save into it,
    /// and a new coordinator cannot be handed the old mapping. Once every coordinator of the path is gone, the
    /// path opens as the file now there.
    @Test func aFileReplacedWhileOpenIsRefusedUntilEveryCoordinatorIsClosed() throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent("notes.lmdb")
        let backup = dir.url.appendingPathComponent("backup.lmdb")
        do {
            let other = try Self.open(backup)
            try Self.add(["from the backup"], to: other)
        }
        var coordinator: StoreCoordinator? = try Self.open(url)
        try Self.add(["live"], to: coordinator!)
        try FileManager.default.removeItem(at: url.appendingPathComponent("data.mdb"))
        try FileManager.default.moveItem(at: backup.appendingPathComponent("data.mdb"), to: url.appendingPathComponent("data.mdb"))

        #expect {
            try Self.add(["lost?"], to: coordinator!)
        } throws: { String(describing: $0).contains("data.mdb was replaced") }
        #expect {
            _ = try Self.open(url)
        } throws: { error in
            guard case StoreError.openFailed(let path, _, let reason) = error else { return false }
            return path == url.path && reason.contains("data.mdb was replaced") && reason.contains("Close every coordinator")
        }
        coordinator = nil
        #expect(try Self.texts(try Self.open(url)) == ["from the backup"])
    }

    /// A copy taken earlier written back over the live file in place (`cp backup data.mdb`: the same inode, the
    /// file no shorter): the coordinator that saved the newer commits refuses to write on top of the older copy.
    @Test func anOlderCopyWrittenOverTheOpenFileRefusesTheNextSave() throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent("notes.lmdb")
        let coordinator = try Self.open(url)
        try Self.add(["A"], to: coordinator)
        let data = url.appendingPathComponent("data.mdb")
        let older = try Data(contentsOf: data)
        try Self.add((0..<50).map { "B\($0)" }, to: coordinator)
        let file = try FileHandle(forWritingTo: data)
        try file.write(contentsOf: older)
        try file.close()
        #expect(try FileManager.default.attributesOfItem(atPath: data.path)[.size] as? Int ?? 0 >= older.count)

        #expect {
            try Self.add(["C"], to: coordinator)
        } throws: { String(describing: $0).contains("overwritten with an older copy") }
    }

    /// LMDB does not write a page that a commit took from the end of the file and freed again before committing
    /// ("loose"), yet counts it in the meta page's last page and lists it as free, so a healthy `data.mdb` can
    /// end before its last page (py-lmdb's LMDB 0.9 left 185 of 2,400 random insert-and-delete commits so). Such
    /// a file opened as "truncated" until 2026-11-29. Made here by moving a closed store's last page number past
    /// the file's end (64-bit meta layout: page size at byte 40, the free list's leaf pages at 56, last page at
    /// 136 of each meta page): by fewer pages than its free list can name, it opens whole; by more, it is
    /// truncated.
    @Test(arguments: [1, 1_000_000])
    func aFileEndingBeforeItsLastPageOpensWhenTheFreeListCanNameTheRest(missingPages: Int) throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent("notes.lmdb")
        do {
            let coordinator = try Self.open(url)
            try Self.add((0..<300).map { "note \($0)" }, to: coordinator)
            let context = ObjectContext(coordinator: coordinator)
            for note in try context.fetch(FetchRequest(entityName: "Note")).prefix(200) { try context.delete(note) }
            try context.save()
        }
        let data = url.appendingPathComponent("data.mdb")
        var bytes = [UInt8](try Data(contentsOf: data))
        func integer(_ offset: Int, _ width: Int) -> UInt64 {
            (0..<width).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        let pageSize = Int(integer(40, 4))
        let lastPage = max(integer(136, 8), integer(pageSize + 136, 8))
        #expect((lastPage + 1) * UInt64(pageSize) <= UInt64(bytes.count))
        let newest = integer(144, 8) > integer(pageSize + 144, 8) ? 0 : pageSize
        try #require(integer(newest + 56, 8) > 0, "the store has a free list")
        for meta in [0, pageSize] {
            let moved = integer(meta + 136, 8) + UInt64(missingPages) + UInt64(bytes.count / pageSize) - lastPage - 1
            for i in 0..<8 { bytes[meta + 136 + i] = UInt8(truncatingIfNeeded: moved >> (8 * UInt64(i))) }
        }
        try Data(bytes).write(to: data)

        if missingPages == 1 {
            #expect(try Self.texts(try Self.open(url)) == (200..<300).map { "note \($0)" }.sorted())
        } else {
            #expect {
                _ = try Self.open(url)
            } throws: { error in
                guard case StoreError.notAStore(let path, .lmdb, let reason) = error else { return false }
                return path == url.path && reason.contains("truncated")
            }
        }
    }

    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case cutInHalf, overwrittenInPlace
        var testDescription: String { rawValue }
    }

    /// The file damaged in place (same inode) under an open coordinator: opening the path again is
    /// `StoreError.notAStore` naming the store, not a crash or an LMDB error about the map size.
    @Test(arguments: Damage.allCases)
    func aFileDamagedWhileOpenIsNotAStoreWhenOpenedAgain(damage: Damage) throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent("notes.lmdb")
        let coordinator = try Self.open(url)
        try Self.add((0..<500).map { "note \($0) " + String(repeating: "x", count: 200) }, to: coordinator)
        let data = url.appendingPathComponent("data.mdb")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: data.path)[.size] as? Int)
        #expect(size > 16 * 4096)
        let file = try FileHandle(forWritingTo: data)
        switch damage {
        case .cutInHalf:
            try file.truncate(atOffset: UInt64(size / 2))
        case .overwrittenInPlace:
            var generator = SystemRandomNumberGenerator()
            try file.write(contentsOf: Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        }
        try file.close()

        #expect {
            _ = try Self.open(url)
        } throws: { error in
            guard case StoreError.notAStore(let path, .lmdb, _) = error else { return false }
            return path == url.path
        }
        withExtendedLifetime(coordinator) {}
    }
}

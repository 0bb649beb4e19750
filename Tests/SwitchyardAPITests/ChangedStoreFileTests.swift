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
            entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string, isOptional: false)])],
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

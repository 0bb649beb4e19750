import Foundation
import Testing
@testable import Switchyard

/// storesplit killed between the renames of its outputs: running the same command again finishes the split
/// (the outputs carry the run's marks); `--force` is needed only for outputs that did not come from it.
@Suite struct SplitResumeTests {
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func rerunFinishesASplitKilledBetweenRenames(cacheType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url)
        let target = try LegacyMessenger.targetModel()
        let destinations = LegacyMessenger.destinations(in: temp.url, cacheType: cacheType)
        func splitter() throws -> StoreSplitter {
            try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        }
        let first = try splitter().run(try splitter().plan())
        // The state a kill between the renames leaves: the first output in place, the others still verified
        // under their temporary names.
        for destination in destinations.dropFirst() {
            #expect(rename(destination.url.path, destination.temporaryURL.path) == 0)
        }
        let resumed = try splitter().run(try splitter().plan())
        #expect(resumed.rowsCopied == first.rowsCopied)
        #expect(resumed.outputs.map { $0.entities.map(\.rows) } == first.outputs.map { $0.entities.map(\.rows) })
        #expect(resumed.outputs.map { $0.links.map(\.links) } == first.outputs.map { $0.links.map(\.links) })
        for destination in destinations {
            #expect(FileManager.default.fileExists(atPath: destination.url.path))
            #expect(!FileManager.default.fileExists(atPath: destination.temporaryURL.path))
        }
        let cache = cacheType == .lmdb
            ? try LMDBStore(url: destinations[2].url, model: target, configuration: "Cache", options: .readOnly) as any PersistentStore
            : try SQLiteStore(url: destinations[2].url, model: target, configuration: "Cache", options: .readOnly)
        #expect(try cache.count(StoreFetchRequest(entityName: "LinkPreview")) == first.outputs[2].entities.first { $0.targetEntity == "LinkPreview" }?.rows)

        // A finished split is not redone without --force.
        #expect(throws: SplitError.outputExists(path: destinations[0].url.path)) { try splitter().run(try splitter().plan()) }
        // Nor is one whose missing output has no verified temporary: those finals need --force.
        StoreSplitter.remove(destinations[1].url, type: destinations[1].type)
        #expect(throws: SplitError.outputExists(path: destinations[0].url.path)) { try splitter().run(try splitter().plan()) }
        _ = try splitter().run(try splitter().plan(), options: SplitOptions(force: true))
    }

    /// Outputs of another split (another source) at the same paths are foreign: --force is required.
    @Test func outputsOfAnotherSourceAreForeign() throws {
        let temp = TemporaryDirectory()
        let target = try LegacyMessenger.targetModel()
        let destinations = LegacyMessenger.destinations(in: temp.url, cacheType: .sqlite)
        let other = temp.file("Other.sqlite"), url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: other)
        try LegacyMessenger.make(.sqlite, at: url)
        let foreign = try StoreSplitter(source: other, targetModel: target, destinations: destinations)
        _ = try foreign.run(try foreign.plan())
        for destination in destinations.dropFirst() {
            #expect(rename(destination.url.path, destination.temporaryURL.path) == 0)
        }
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations)
        #expect(throws: SplitError.outputExists(path: destinations[0].url.path)) { try splitter.run(try splitter.plan()) }
    }
}

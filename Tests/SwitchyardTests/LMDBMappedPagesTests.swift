import Foundation
import Testing
@testable import Switchyard

/// A walk over a whole LMDB store maps its file into the process; `releaseCachedPages` gives those pages back
/// (they are clean: the map is read-only), which keeps migrations and splits of large stores at bounded RSS.
@Suite struct LMDBMappedPagesTests {
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status"), "needs /proc (Linux)"))
    func releasingTheMapLowersResidentMemory() throws {
        let dir = TemporaryDirectory()
        let model = try ObjectModel(entities: [EntityDescription(name: "Blob", attributes: [
            AttributeDescription(name: "payload", type: .binary),
        ])])
        let store = try LMDBStore(url: dir.file("pages.lmdb"), model: model, configuration: "Default", options: StoreOptions(initialMapSize: 1 << 30))
        let keys = try store.allocatePrimaryKeys(for: "Blob", count: 20_000)
        try store.save(StoreChangeSet(inserts: keys.map {
            StoreRow(entityName: "Blob", primaryKey: $0, values: ["payload": .binary(Data(repeating: UInt8($0 % 251), count: 2_000))])
        }))
        store.releaseCachedPages()
        let before = Self.residentBytes()
        // Reading every row maps the whole file (about 40 MB).
        var total = 0
        for row in try store.fetch(StoreFetchRequest(entityName: "Blob")) {
            if case .binary(let data) = row["payload"] { total += data.count }
        }
        #expect(total == 40_000_000)
        let afterReading = Self.residentBytes()
        store.releaseCachedPages()
        let afterRelease = Self.residentBytes()
        #expect(afterReading - before > 20_000_000, "reading mapped the file: \(before) -> \(afterReading)")
        #expect(afterReading - afterRelease > 20_000_000, "releasing gave the pages back: \(afterReading) -> \(afterRelease)")
        // The store reads on as before.
        #expect(try store.count(StoreFetchRequest(entityName: "Blob")) == 20_000)
    }
}

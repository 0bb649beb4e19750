import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Switchyard

/// `bench --walk-objects N`: N objects of the object-layer entity walked with `ObjectContext.forEach` (typed,
/// reading every attribute), against reading the same objects with one `fetch`. Reports the peak memory each
/// adds over the process's resident memory before it (Linux `VmHWM`, reset through `/proc/self/clear_refs`).
struct WalkBench {
    let count: Int
    let dir: URL
    /// `sqlite` and/or `lmdb`.
    var backends = ["sqlite", "lmdb"]

    static func status(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") })
        else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
    }

    /// Runs `body` and returns its time and the peak memory it added, in bytes.
    static func peak(_ body: () throws -> Void) rethrows -> (seconds: Double, bytes: Int?) {
        // Heap freed by an earlier measurement stays resident unless given back; a later one reusing it would
        // not raise the peak, and would look smaller than it is.
        trimHeap()
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = status("VmRSS")
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard let before, let high = status("VmHWM") else { return (seconds, nil) }
        return (seconds, max(0, high - before))
    }

    /// Anonymous resident memory (Linux `RssAnon`: the heap, not pages of mapped files), in bytes.
    static func heapInUse() -> Int {
        status("RssAnon") ?? 0
    }

    /// glibc's `malloc_trim(0)` (not in Swift's Glibc module, so looked up at run time); nothing elsewhere.
    static func trimHeap() {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        typealias Trim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let model = try ObjectLayerBench.model()
        var results: [BenchResult] = []
        for (name, kind) in [("SQLite", StoreType.sqlite), ("LMDB", .lmdb)] where backends.contains(name.lowercased()) {
            log("walk (\(name)): \(count) objects")
            let url = dir.appendingPathComponent("walk.\(kind.rawValue)")
            let coordinator = StoreCoordinator(model: model)
            let store = try coordinator.addStore(kind, configuration: "Main", at: url, options: StoreOptions(initialMapSize: 4 << 30))
            var next = 0
            while next < count {
                let n = min(50_000, count - next)
                let keys = try store.allocatePrimaryKeys(for: "Item", count: n)
                let rows = keys.map { pk -> StoreRow in
                    let i = Int(pk)
                    return StoreRow(entityName: "Item", primaryKey: pk, values: [
                        "name": .string("item-\(i)"), "count": .integer(Int64(i)), "score": .double(Double(i) * 0.5),
                        "createdAt": .date(Date(timeIntervalSinceReferenceDate: Double(i))), "flag": .bool(i % 2 == 0),
                        "note": i % 3 == 0 ? .null : .string("note \(i)"),
                    ])
                }
                try store.save(StoreChangeSet(inserts: rows))
                next += n
            }
            var checksum = 0
            func read(_ o: BenchItem) {
                checksum &+= o.name.utf8.count &+ Int(o.count) &+ Int(o.score)
                checksum &+= Int(o.createdAt.timeIntervalSinceReferenceDate) &+ (o.flag ? 1 : 0) &+ (o.note?.utf8.count ?? 0)
            }
            let walk = try Self.peak {
                try ObjectContext(coordinator: coordinator).forEach(BenchItem.self, batchSize: 1_000) { item in read(item) }
            }
            // Besides the peak: the anonymous memory (heap) the fetched objects and their context hold once the
            // fetch returned, without pages of the store's file, which an LMDB map adds to resident memory.
            var held: Int?
            let fetch = try Self.peak {
                let before = Self.heapInUse()
                let context = ObjectContext(coordinator: coordinator)
                let objects = try context.fetch(BenchItem.self)
                held = Self.heapInUse() - before
                for o in objects { read(o) }
            }
            // Objects found one at a time (each its own indexed fetch) and kept: the heap each holds. A row read
            // alone once pinned a block with room for ten (about 1 KB per object).
            let lookups = min(count, 20_000)
            var lookupHeld: Int?
            do {
                let context = ObjectContext(coordinator: coordinator)
                var kept: [BenchItem] = []
                kept.reserveCapacity(lookups)
                _ = try context.fetch(BenchItem.self, where: \.name == "item-1")
                Self.trimHeap()
                let before = Self.heapInUse()
                for i in 0..<lookups { kept += try context.fetch(BenchItem.self, where: \.name == "item-\(1 + i * (count / lookups))") }
                lookupHeld = Self.heapInUse() - before
                if kept.count != lookups { log("walk: \(kept.count) of \(lookups) lookups found their object") }
            }
            // Inserting and saving as many objects through one context, in one save (typed API).
            let insertURL = dir.appendingPathComponent("insert.\(kind.rawValue)")
            let inserter = StoreCoordinator(model: model)
            let insertStore = try inserter.addStore(kind, configuration: "Main", at: insertURL, options: StoreOptions(initialMapSize: 4 << 30))
            let insert = try Self.peak {
                let context = ObjectContext(coordinator: inserter)
                for i in 0..<count {
                    let o = try context.insert(BenchItem.self)
                    o.name = "item-\(i)"; o.count = Int64(i); o.score = Double(i) * 0.5
                    o.createdAt = Date(timeIntervalSinceReferenceDate: Double(i)); o.flag = i % 2 == 0
                    o.note = i % 3 == 0 ? nil : "note \(i)"
                }
                try context.save()
            }
            try inserter.removeStore(insertStore)
            if checksum == 42 { log("") }
            func mb(_ b: Int?) -> String { b.map { String(format: "%.1f MB", Double($0) / 1_000_000) } ?? "n/a" }
            results.append(BenchResult(
                backend: "\(name) objects", operation: "walk \(count) objects in batches of 1000 (forEach)",
                baselines: ["one fetch of all": fetch.seconds], switchyard: walk.seconds,
                info: ["walk peak added": mb(walk.bytes), "fetch peak added": mb(fetch.bytes),
                       "insert + save peak added": mb(insert.bytes),
                       "fetch bytes per object": fetch.bytes.map { String(format: "%.2f KB", Double($0) / Double(count) / 1000) } ?? "n/a",
                       "fetch heap held": mb(held), "heap per fetched object": held.map { String(format: "%.0f B", Double($0) / Double(count)) } ?? "n/a",
                       "heap per object kept from \(lookups) lookups": lookupHeld.map { String(format: "%.0f B", Double($0) / Double(lookups)) } ?? "n/a"]))
            try coordinator.removeStore(store)
        }
        return results
    }
}

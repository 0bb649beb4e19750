import Foundation
import GRDBSQLite
import Switchyard

/// Fetched-property resolution for many source objects across two stores: Messenger's `Message.preview`
/// (Cloud store) -> `LinkPreview` (Cache store), batched and one by one, against the same two lookups done
/// with the raw SQLite C API (read the sources' keys, then one `IN` query on the other file), and against a
/// hand-written SQL join over the two files (`ATTACH` + `JOIN`), which issue #11 asks prefetch to stay within 2x of.
struct FetchedPropertyBench {
    let sources: Int
    let model: ObjectModel
    let dir: URL
    let repeats: Int

    func run(log: (String) -> Void) throws -> [BenchResult] {
        log("fetched properties: \(sources) messages (Cloud) -> previews (Cache), two SQLite files")
        let cloud = dir.appendingPathComponent("fp-cloud.sqlite")
        let cache = dir.appendingPathComponent("fp-cache.sqlite")
        do {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Cloud", at: cloud)
            try coordinator.addStore(.sqlite, configuration: "Cache", at: cache)
            let context = ObjectContext(coordinator: coordinator)
            for i in 0..<sources {
                let m = try context.insert("Message")
                try m.set("messageID", "m\(i)")
                try m.set("sentAt", Date(timeIntervalSinceReferenceDate: Double(i)))
                try m.set("link", "https://example.com/\(i % (sources / 2))")
            }
            for u in 0..<(sources / 2) {
                let p = try context.insert("LinkPreview")
                try p.set("url", "https://example.com/\(u)")
                try p.set("title", "Article \(u)")
            }
            try context.save()
        }
        var resolved = 0
        let raw = try measure(repeats: repeats) {
            let messages = try RawSQLite(path: cloud.path)
            let stmt = try messages.prepare("SELECT Z_PK, ZLINK FROM ZMESSAGE")
            var links: [String] = []
            while sqlite3_step(stmt) == SQLITE_ROW { links.append(String(cString: sqlite3_column_text(stmt, 1))) }
            sqlite3_finalize(stmt)
            let previews = try RawSQLite(path: cache.path)
            let unique = Array(Set(links))
            var titles: [String: String] = [:]
            // SQLite's default limit on bound variables is 32,766; chunk to stay under it.
            for chunk in stride(from: 0, to: unique.count, by: 10_000).map({ Array(unique[$0..<min($0 + 10_000, unique.count)]) }) {
                let q = try previews.prepare("SELECT ZURL, ZTITLE FROM ZLINKPREVIEW WHERE ZURL IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))")
                for (i, link) in chunk.enumerated() { sqlite3_bind_text(q, Int32(i + 1), link, -1, SQLITE_TRANSIENT) }
                while sqlite3_step(q) == SQLITE_ROW {
                    titles[String(cString: sqlite3_column_text(q, 0))] = String(cString: sqlite3_column_text(q, 1))
                }
                sqlite3_finalize(q)
            }
            resolved = links.filter { titles[$0] != nil }.count
        }
        guard resolved == sources else { throw BenchFailure("raw fetched-property join resolved \(resolved) of \(sources)") }
        let join = try measure(repeats: repeats) {
            let db = try RawSQLite(path: cloud.path)
            try db.exec("ATTACH DATABASE '\(cache.path)' AS cache")
            let stmt = try db.prepare(
                "SELECT m.Z_PK, p.ZTITLE FROM ZMESSAGE m JOIN cache.ZLINKPREVIEW p ON p.ZURL = m.ZLINK")
            var titles: [Int64: String] = [:]
            while sqlite3_step(stmt) == SQLITE_ROW {
                titles[sqlite3_column_int64(stmt, 0)] = String(cString: sqlite3_column_text(stmt, 1))
            }
            sqlite3_finalize(stmt)
            resolved = titles.count
        }
        guard resolved == sources else { throw BenchFailure("hand-written join resolved \(resolved) of \(sources)") }
        // A fresh context over both stores each time: nothing cached from the last run.
        func openContext() throws -> ObjectContext {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Cloud", at: cloud)
            try coordinator.addStore(.sqlite, configuration: "Cache", at: cache)
            return ObjectContext(coordinator: coordinator)
        }
        func resolveEach(_ messages: [ManagedObject]) throws -> Int {
            try messages.reduce(0) { $0 + (try $1.fetchedProperty("preview").isEmpty ? 0 : 1) }
        }
        func switchyard(batched: Bool) throws -> Double {
            try measure(repeats: repeats) {
                let context = try openContext()
                let messages = try context.fetch(FetchRequest(entityName: "Message"))
                if batched { try context.prefetchFetchedProperty("preview", for: messages) }
                resolved = try resolveEach(messages)
            }
        }
        let batched = try switchyard(batched: true)
        guard resolved == sources else { throw BenchFailure("batched resolution resolved \(resolved) of \(sources)") }
        // The prefetch step alone, the sources already fetched (as PrefetchBench times it).
        var context: ObjectContext?
        var messages: [ManagedObject] = []
        let prefetchOnly = try measure(repeats: repeats, prepare: {
            let fresh = try openContext()
            messages = try fresh.fetch(FetchRequest(entityName: "Message"))
            context = fresh
        }) {
            try context!.prefetchFetchedProperty("preview", for: messages)
            resolved = try resolveEach(messages)
        }
        guard resolved == sources else { throw BenchFailure("prefetch step resolved \(resolved) of \(sources)") }
        let single = try switchyard(batched: false)
        return [BenchResult(
            backend: "SQLite -> SQLite", operation: "fetched property x\(sources) (batched)", baselines: ["raw SQLite, two IN lookups": raw, "hand-written SQL join (ATTACH)": join],
            switchyard: batched, extras: ["one query per object": single]),
            BenchResult(
                backend: "SQLite -> SQLite", operation: "prefetch step x\(sources), sources already fetched (goal <= 2x the join)",
                baselines: ["hand-written SQL join (ATTACH)": join], switchyard: prefetchOnly)]
    }
}

/// A benchmark whose contenders disagree: the run stops rather than print meaningless times.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Switchyard

/// `prefetchFetchedProperty(_:for:)` against resolving the same fetched property one object at a time, for
/// each destination backend: Messenger's `Message.preview` (sources in a Cloud SQLite store) ->
/// `LinkPreview` (the Cache store, SQLite, LMDB or memory). The goal is batched at least 5x faster.
struct PrefetchBench {
    let sources: Int
    let model: ObjectModel
    let dir: URL
    let repeats: Int

    func run(log: (String) -> Void) throws -> [BenchResult] {
        var results: [BenchResult] = []
        for destination in [StoreType.sqlite, .lmdb, .memory] {
            let name = destination == .lmdb ? "LMDB" : destination == .sqlite ? "SQLite" : "memory"
            log("prefetch: \(sources) messages (SQLite) -> previews (\(name)), batched vs one at a time")
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Cloud", at: dir.appendingPathComponent("pf-cloud-\(destination.rawValue).sqlite"))
            let cacheURL: URL? = destination == .memory ? nil : dir.appendingPathComponent("pf-cache.\(destination.rawValue)")
            try coordinator.addStore(destination, configuration: "Cache", at: cacheURL)
            do {
                let context = ObjectContext(coordinator: coordinator)
                let distinct = max(1, sources / 2)
                for i in 0..<sources {
                    let m = try context.insert("Message")
                    try m.set("messageID", "m\(i)")
                    try m.set("sentAt", Date(timeIntervalSinceReferenceDate: Double(i)))
                    try m.set("link", "https://example.com/\(i % distinct)")
                }
                for u in 0..<distinct {
                    let p = try context.insert("LinkPreview")
                    try p.set("url", "https://example.com/\(u)")
                    try p.set("title", "Article \(u)")
                }
                try context.save()
            }
            var resolved = 0
            func resolve(batched: Bool) throws -> Double {
                var messages: [ManagedObject] = []
                var context = ObjectContext(coordinator: coordinator)
                return try measure(repeats: repeats, prepare: {
                    // A fresh context each time: nothing cached from the last run.
                    context = ObjectContext(coordinator: coordinator)
                    messages = try context.fetch(FetchRequest(entityName: "Message"))
                }) {
                    if batched { try context.prefetchFetchedProperty("preview", for: messages) }
                    resolved = try messages.reduce(0) { $0 + (try $1.fetchedProperty("preview").isEmpty ? 0 : 1) }
                }
            }
            let batched = try resolve(batched: true)
            guard resolved == sources else { throw BenchFailure("batched prefetch into \(destination.rawValue) resolved \(resolved) of \(sources)") }
            let single = try resolve(batched: false)
            guard resolved == sources else { throw BenchFailure("one-at-a-time resolution into \(destination.rawValue) resolved \(resolved) of \(sources)") }
            log(String(format: "prefetch into %@: batched %.1f ms, one at a time %.1f ms, %.1fx faster",
                       name, batched * 1000, single * 1000, single / batched))
            results.append(BenchResult(
                backend: "SQLite -> \(name)",
                operation: "prefetch fetched property x\(sources) (batched; goal ratio <= 0.20)",
                baselines: ["one query per object": single], switchyard: batched,
                info: ["speed-up": String(format: "%.1fx", single / batched)]))
        }
        return results
    }
}

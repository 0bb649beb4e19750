import Foundation
import Switchyard
import Testing

/// `prefetchFetchedProperty(_:for:)` from the user's side (public API only): it resolves the same objects as
/// one lookup per source, keys equal under `storeEqual` included, and its cost grows linearly with the number
/// of sources on every destination backend (the `IN` list was scanned once per destination row on memory and
/// LMDB, which made it quadratic; `bench --prefetch-only` measures it against one lookup per object).
@Suite struct PrefetchScalingTests {
    let dir = TemporaryDirectory()

    /// `Message.preview` (Cloud, SQLite) -> `LinkPreview` (Cache, the backend under test), joined on a key.
    static func model() throws -> ObjectModel {
        try ObjectModel(
            entities: [
                EntityDescription(
                    name: "Message",
                    attributes: [AttributeDescription(name: "link", type: .string), AttributeDescription(name: "ref", type: .double)],
                    fetchedProperties: [
                        FetchedPropertyDescription(name: "preview", destination: "LinkPreview", predicate: "url == $FETCH_SOURCE.link"),
                        FetchedPropertyDescription(name: "byNumber", destination: "LinkPreview", predicate: "number == $FETCH_SOURCE.ref"),
                    ]),
                EntityDescription(
                    name: "LinkPreview",
                    attributes: [
                        AttributeDescription(name: "url", type: .string, isIndexed: true),
                        AttributeDescription(name: "number", type: .integer64, isIndexed: true),
                    ]),
            ],
            configurations: [
                ConfigurationDescription(name: "Cloud", entityNames: ["Message"]),
                ConfigurationDescription(name: "Cache", entityNames: ["LinkPreview"]),
            ])
    }

    /// A coordinator with `sources` messages pointing at `sources / 2` previews (two messages per preview).
    func populate(_ backend: Backend, sources: Int, name: String) throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: try Self.model())
        try coordinator.addStore(.sqlite, configuration: "Cloud", at: dir.file("\(name)-cloud.sqlite"))
        try coordinator.addStore(backend.storeType, configuration: "Cache", at: backend.url(in: dir, name: "\(name)-cache"))
        let context = ObjectContext(coordinator: coordinator)
        let distinct = sources / 2
        for i in 0..<sources {
            let message = try context.insert("Message")
            try message.set("link", "https://example.com/\(i % distinct)")
            try message.set("ref", Double(i % distinct))
        }
        for u in 0..<distinct {
            let preview = try context.insert("LinkPreview")
            try preview.set("url", "https://example.com/\(u)")
            try preview.set("number", Int64(u))
        }
        try context.save()
        return coordinator
    }

    /// One batched prefetch of every message, in a fresh context, in seconds.
    func batchedTime(_ coordinator: StoreCoordinator) throws -> Double {
        let context = ObjectContext(coordinator: coordinator)
        let messages = try context.fetch(FetchRequest(entityName: "Message"))
        let start = DispatchTime.now().uptimeNanoseconds
        try context.prefetchFetchedProperty("preview", for: messages)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        #expect(try messages.allSatisfy { try $0.fetchedProperty("preview").count == 1 })
        return seconds
    }

    @Test(arguments: Backend.allCases)
    func batchedMatchesOneLookupPerObject(backend: Backend) throws {
        let coordinator = try populate(backend, sources: 40, name: "small")
        let batched = ObjectContext(coordinator: coordinator)
        let single = ObjectContext(coordinator: coordinator)
        let messages = try batched.fetch(FetchRequest(entityName: "Message", sortKeys: [SortKey("link")]))
        try batched.prefetchFetchedProperty("preview", for: messages)
        // A Double source key against Integer 64 destination keys: 3.0 and 3 are the same key.
        try batched.prefetchFetchedProperty("byNumber", for: messages)
        let reference = try single.fetch(FetchRequest(entityName: "Message", sortKeys: [SortKey("link")]))
        for (m, r) in zip(messages, reference) {
            for property in ["preview", "byNumber"] {
                let got = try m.fetchedProperty(property).map(\.objectID)
                let expected = try r.fetchedProperty(property).map(\.objectID)
                #expect(got == expected, "\(property) of \(m.objectID)")
                #expect(got.count == 1)
            }
        }
    }

    /// Eight times the sources take about eight times as long, not sixty-four: the batched path is linear.
    @Test(arguments: Backend.allCases)
    func batchedPrefetchIsLinear(backend: Backend) throws {
        let small = try populate(backend, sources: 400, name: "s")
        let large = try populate(backend, sources: 3_200, name: "l")
        // Interleaved, fastest of five each: other tests running in parallel slow single runs down, not all.
        var (smallTime, largeTime) = (Double.infinity, Double.infinity)
        for _ in 0..<5 {
            smallTime = min(smallTime, try batchedTime(small))
            largeTime = min(largeTime, try batchedTime(large))
        }
        // Linear: about 8 (less with fixed costs); quadratic: about 64. 24 is between them with room for noise.
        let check = {
            #expect(largeTime / smallTime < 24, "400 sources: \(smallTime * 1000) ms, 3,200 sources: \(largeTime * 1000) ms")
        }
        if backend == .lmdb {
            // LMDBIndexing still de-duplicates the IN keys with a scan per key; the lead's change to that file
            // (same issue) makes it linear. Remove this wrapper once that is merged.
            withKnownIssue("LMDB IN-key de-duplication is quadratic until LMDBIndexing is fixed", isIntermittent: true) { check() }
        } else {
            check()
        }
    }
}

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
        try backend.add(to: coordinator, configuration: "Cache", in: dir, name: "\(name)-cache")
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

    /// A batched prefetch finds exactly what one lookup per object finds (speed: `bench --prefetch-only`).
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
}

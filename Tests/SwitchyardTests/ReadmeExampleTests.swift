import Foundation
import Testing
import Switchyard

/// The README's usage example, compiled and run. `readmeExampleIsVerbatim` keeps the README's copy identical
/// to the lines between the markers below.
@Suite struct ReadmeExampleTests {
    @Test func exampleRunsAndPrintsTheCrossStorePreview() throws {
        let temp = TemporaryDirectory()
        let dir = temp.url
        #expect(FileManager.default.fileExists(atPath: "Schemas/Messenger.xcdatamodeld"), "run tests from the package root")
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
        // README-BEGIN
        let model = try ModelLoader.load(at: URL(fileURLWithPath: "Schemas/Messenger.xcdatamodeld"))
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Cloud", at: dir.appendingPathComponent("Cloud.sqlite"))
        try coordinator.addStore(.lmdb, configuration: "Cache", at: dir.appendingPathComponent("Cache.lmdb"))

        let context = ObjectContext(coordinator: coordinator)
        let message = try context.insert("Message")          // routed to the Cloud store
        try message.set("messageID", "m1")
        try message.set("sentAt", Date())
        try message.set("link", "https://swift.org")
        let preview = try context.insert("LinkPreview")      // routed to the Cache store (LMDB)
        try preview.set("url", "https://swift.org")
        try preview.set("title", "Swift.org")
        try context.save()                                   // one transaction per store

        let request = FetchRequest(entityName: "Message", predicate: try FetchPredicate(format: "link BEGINSWITH %@", "https://"))
        for m in try context.fetch(request) {
            let title = try m.fetchedProperty("preview").first?.get("title", as: String.self)
            print(m.objectID, title ?? "no preview")          // x-coredata://<store UUID>/Message/p1 Swift.org
        }
        // README-END
        #expect(printed.count == 1)
        #expect(printed.first?.hasSuffix("/Message/p1 Swift.org") == true)
        #expect(printed.first?.hasPrefix("x-coredata://") == true)
    }

    @Test func readmeExampleIsVerbatim() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.contains("// README-" + "BEGIN") })
        let end = try #require(lines.firstIndex { $0.contains("// README-" + "END") })
        let example = lines[(begin + 1)..<end].map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : $0 }
        let readme = try String(contentsOf: Repository.url("README.md"), encoding: .utf8)
        #expect(readme.contains(example.joined(separator: "\n")), "README.md's usage example differs from ReadmeExampleTests")
    }
}

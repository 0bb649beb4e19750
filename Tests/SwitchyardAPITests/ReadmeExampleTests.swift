import Foundation
import MessengerSchema
import Switchyard
import Testing

/// The README's usage example, compiled and run with the entity types generated from
/// `Schemas/Messenger.xcdatamodeld`. `readmeExampleIsVerbatim` keeps the README's copy identical to the lines
/// between the markers below.
@Suite struct ReadmeExampleTests {
    @Test func exampleRunsAndPrintsTheCrossStorePreview() throws {
        let temp = try TempDir()
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
        let message = try context.insert(Message.self)       // routed to the Cloud store
        message.messageID = "m1"
        message.sentAt = Date()
        message.link = "https://swift.org"
        let preview = try context.insert(LinkPreview.self)   // routed to the Cache store (LMDB)
        preview.url = "https://swift.org"
        preview.title = "Swift.org"
        try context.save()                                   // one transaction per store

        for m in try context.fetch(Message.self, where: .beginsWith(\.link, "https://"), sortedBy: [.descending(\.sentAt)]) {
            let title = try m.preview().first?.title           // the fetched property, looked up in Cache
            print(m.objectID, title ?? "no preview")          // x-coredata://<store UUID>/Message/p1 Swift.org
        }
        // README-END
        #expect(printed.count == 1)
        #expect(printed.first?.hasSuffix("/Message/p1 Swift.org") == true)
        #expect(printed.first?.hasPrefix("x-coredata://") == true)
    }

    /// The README's `BackgroundContext` example, run against the same model: only the unread message's ID
    /// comes back, from a context on its own thread.
    @Test func asyncExampleReturnsTheUnreadMessages() async throws {
        let temp = try TempDir()
        let model = try ModelLoader.load(at: URL(fileURLWithPath: "Schemas/Messenger.xcdatamodeld"))
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Cloud", at: temp.url.appendingPathComponent("Cloud.sqlite"))
        let setup = ObjectContext(coordinator: coordinator)
        for (id, read) in [("m1", true), ("m2", false), ("m3", true)] {
            let message = try setup.insert(Message.self)
            message.messageID = id
            message.sentAt = Date()
            message.isRead = read
        }
        try setup.save()
        let expected = try setup.fetch(Message.self).filter { $0.messageID == "m2" }.map(\.objectID)
        // README-ASYNC-BEGIN
        let background = BackgroundContext(coordinator: coordinator)
        let unread = try await background.perform { context in
            try context.fetch(Message.self, where: \.isRead == false).map(\.objectID)
        }
        // README-ASYNC-END
        #expect(unread == expected)
        #expect(unread.count == 1)
    }

    @Test(arguments: ["README", "README-ASYNC"])
    func readmeExampleIsVerbatim(_ marker: String) throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// " + marker + "-" + "BEGIN") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// " + marker + "-" + "END") })
        let example = lines[(begin + 1)..<end].map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : $0 }
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        #expect(text.contains(example.joined(separator: "\n")), "README.md's \(marker) example differs from ReadmeExampleTests")
    }
}

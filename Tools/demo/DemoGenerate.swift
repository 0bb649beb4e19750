import ArgumentParser
import Foundation
import Switchyard

/// `demo generate`: a legacy, monolithic Messenger store (one SQLite file, `Schemas/MessengerLegacy`) with
/// accounts, chats, link previews, drafts, settings and many messages, as an app would have it before the split.
struct DemoGenerate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write the legacy monolithic Messenger store.")

    @Option(help: "The legacy store to write (replaced if present).")
    var output = "demo-output/legacy/Messenger.sqlite"

    @Option(help: "The legacy (monolithic) model.")
    var model = "Schemas/MessengerLegacy.xcdatamodeld"

    @Option(help: "Messages to create.")
    var messages = 200_000

    static let names = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances"]
    static let chatsPerAccount = 25
    static let previews = 500

    func run() throws {
        let started = Date()
        let url = URL(fileURLWithPath: output)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let legacy = try ModelLoader.load(at: URL(fileURLWithPath: model))
        let coordinator = StoreCoordinator(model: legacy)
        let store = try coordinator.addStore(.sqlite, configuration: ConfigurationDescription.defaultName, at: url)

        // MARK: small entities through a context (relationships kept in step)
        let context = ObjectContext(coordinator: coordinator)
        var chats: [ManagedObject] = []
        for (i, name) in Self.names.enumerated() {
            let account = try context.insert("Account")
            try account.set("accountID", "acct-\(i)")
            try account.set("name", name)
            let avatar = try context.insert("Avatar")
            try avatar.set("accountID", "acct-\(i)")
            try avatar.set("imageData", Data(repeating: UInt8(i), count: 256))
            for c in 0..<Self.chatsPerAccount {
                let chat = try context.insert("Chat")
                try chat.set("chatID", "chat-\(i)-\(c)")
                try chat.set("title", "\(name)'s chat \(c)")
                try chat.setRelatedObject(account, forKey: "owner")
                chats.append(chat)
                if c % 5 == 0 {
                    let draft = try context.insert("Draft")
                    try draft.set("accountID", "acct-\(i)")
                    try draft.set("text", "unsent note to chat \(c)")
                    try draft.setRelatedObject(chat, forKey: "chat")
                }
            }
        }
        var previews: [ManagedObject] = []
        for p in 0..<Self.previews {
            let preview = try context.insert("LinkPreview")
            try preview.set("url", "https://example.com/article/\(p)")
            try preview.set("title", "Article \(p)")
            try preview.set("summary", "What article \(p) is about")
            previews.append(preview)
        }
        for (key, value) in [("theme", "dark"), ("notifications", "on"), ("language", "en")] {
            let setting = try context.insert("Setting")
            try setting.set("key", key)
            try setting.set("value", value)
        }
        try context.save()
        let chatKeys = chats.map { $0.objectID.primaryKey! }
        let previewKeys = previews.map { $0.objectID.primaryKey! }

        // MARK: messages in batches straight through the store (the bulk of the file)
        let start = Date(timeIntervalSinceReferenceDate: 780_000_000)
        let batch = 10_000
        var written = 0
        while written < messages {
            let n = min(batch, messages - written)
            let keys = try store.allocatePrimaryKeys(for: "Message", count: n)
            var rows: [StoreRow] = []
            rows.reserveCapacity(n)
            for (offset, key) in keys.enumerated() {
                let i = written + offset
                var toOne = ["chat": RowReference(entityName: "Chat", primaryKey: chatKeys[i % chatKeys.count])]
                if i % 7 == 0 {
                    toOne["preview"] = RowReference(entityName: "LinkPreview", primaryKey: previewKeys[(i / 7) % previewKeys.count])
                }
                rows.append(StoreRow(entityName: "Message", primaryKey: key, values: [
                    "messageID": .string("msg-\(i)"), "text": .string("Message number \(i)"),
                    "sentAt": .date(start.addingTimeInterval(Double(i) * 30)), "sequence": .integer(Int64(i)),
                    "isRead": .bool(i % 3 == 0), "priority": .integer(Int64(i % 4)), "score": .double(Double(i % 100) / 10),
                ], toOne: toOne))
            }
            try store.save(StoreChangeSet(inserts: rows))
            written += n
        }
        var metadata = try store.metadata()
        metadata.additional["com.example.messenger.lastSync"] = .string("2026-11-01T12:00:00Z")
        try store.setMetadata(metadata)
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        say("generated legacy store \(url.path): \(Self.names.count) accounts, \(chats.count) chats, \(previews.count) link previews, "
            + "\(messages) messages (\(size / 1_048_576) MiB) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}

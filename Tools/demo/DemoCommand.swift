import ArgumentParser
import Foundation
import Switchyard

/// `demo`: the Messenger model on local files — Cloud and Local in SQLite, Cache beside them — used through
/// one coordinator, with fetched properties that cross stores.
@main
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Run the Switchyard Messenger demo on local files.", version: SwitchyardInfo.version)

    @Option(help: "Directory for the demo's stores (recreated).")
    var dir = "demo-output"

    @Option(help: "The Messenger model.")
    var model = "Schemas/Messenger.xcdatamodeld"

    @Option(help: "Messages to create.")
    var messages = 2_000

    func run() throws {
        let root = URL(fileURLWithPath: dir)
        try? FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let objectModel = try ModelLoader.load(at: URL(fileURLWithPath: model))
        print("model: \(objectModel.entities.count) entities; configurations: \(objectModel.configurations.map(\.name).joined(separator: ", "))")

        let coordinator = StoreCoordinator(model: objectModel)
        for (configuration, type, name) in [("Cloud", StoreType.sqlite, "Cloud.sqlite"), ("Local", .sqlite, "Local.sqlite"), ("Cache", .lmdb, "Cache.lmdb")] {
            let store = try coordinator.addStore(type, configuration: configuration, at: root.appendingPathComponent(name))
            print("store \(configuration): \(type.rawValue) at \(store.displayPath)")
        }

        let context = ObjectContext(coordinator: coordinator)
        var accounts: [ManagedObject] = []
        for i in 0..<5 {
            let account = try context.insert("Account")
            try account.set("accountID", "acct-\(i)")
            try account.set("name", ["Ada", "Grace", "Linus", "Barbara", "Ken"][i])
            accounts.append(account)
            let avatar = try context.insert("Avatar")                       // Cache store
            try avatar.set("accountID", "acct-\(i)")
            try avatar.set("imageData", Data(repeating: UInt8(i), count: 64))
            let draft = try context.insert("Draft")                         // Local store
            try draft.set("accountID", "acct-\(i)")
            try draft.set("text", "unsent note \(i)")
        }
        var chats: [ManagedObject] = []
        for (i, account) in accounts.enumerated() {
            let chat = try context.insert("Chat")
            try chat.set("chatID", "chat-\(i)")
            try chat.set("title", "Chat \(i)")
            try chat.setRelatedObject(account, forKey: "owner")
            chats.append(chat)
        }
        let start = Date(timeIntervalSinceReferenceDate: 780_000_000)
        for i in 0..<messages {
            let message = try context.insert("Message")
            try message.set("messageID", "msg-\(i)")
            try message.set("text", "Message \(i)")
            try message.set("sentAt", start.addingTimeInterval(Double(i) * 60))
            if i % 7 == 0 { try message.set("link", "https://example.com/article/\(i % 50)") }
            try message.setRelatedObject(chats[i % chats.count], forKey: "chat")
        }
        for i in 0..<50 {
            let preview = try context.insert("LinkPreview")
            try preview.set("url", "https://example.com/article/\(i)")
            try preview.set("title", "Article \(i)")
        }
        try context.save()
        for store in coordinator.stores {
            let counts = try store.entities.map { "\($0.name)=\(try store.count(StoreFetchRequest(entityName: $0.name)))" }
            print("  \(store.configurationName): \(counts.joined(separator: " "))")
        }

        let reader = ObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Message", predicate: try FetchPredicate(format: "chat.owner.name == %@ AND link != nil", "Grace"))
        request.sortKeys = [SortKey("sentAt", ascending: false)]
        request.fetchLimit = 3
        print("latest linked messages in Grace's chat:")
        for message in try reader.fetch(request) {
            let preview = try message.fetchedProperty("preview").first
            print("  \(try message.get("messageID", as: String.self) ?? "?") -> preview (Cache store): \(try preview?.get("title", as: String.self) ?? "none")")
        }
        for account in try reader.fetch(FetchRequest(entityName: "Account", sortKeys: [SortKey("accountID")], fetchLimit: 2)) {
            let avatar = try account.fetchedProperty("avatar").first
            let drafts = try account.fetchedProperty("drafts")
            print("  \(account.objectID): avatar \(try avatar?.get("imageData", as: Data.self)?.count ?? 0) bytes (Cache), \(drafts.count) draft(s) (Local)")
        }
    }
}

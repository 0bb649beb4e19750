import ArgumentParser
import Foundation
import Switchyard

/// `demo open`: the split stores used through one coordinator — Cloud and Local in SQLite, Cache in LMDB — with
/// fetched properties that look objects up across stores.
struct DemoOpen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open", abstract: "Open the split Messenger stores through one coordinator and look across them.")

    @Option(help: "Directory holding Cloud.sqlite, Local.sqlite and Cache.lmdb.")
    var dir = "demo-output"

    @Option(help: "The Messenger model (the split's target).")
    var model = "Schemas/Messenger.xcdatamodeld"

    func run() throws {
        let root = URL(fileURLWithPath: dir)
        let messenger = try ModelLoader.load(at: URL(fileURLWithPath: model))
        say("model: \(messenger.entities.count) entities; configurations: \(messenger.configurations.map(\.name).joined(separator: ", "))")
        let coordinator = StoreCoordinator(model: messenger)
        for (configuration, type, name) in [("Cloud", StoreType.sqlite, "Cloud.sqlite"), ("Local", .sqlite, "Local.sqlite"), ("Cache", .lmdb, "Cache.lmdb")] {
            let store = try coordinator.addStore(type, configuration: configuration, at: root.appendingPathComponent(name))
            let counts = try store.entities.map { "\($0.name)=\(try store.count(StoreFetchRequest(entityName: $0.name)))" }
            say("store \(configuration) (\(type.rawValue), \(store.displayPath)): \(counts.joined(separator: " "))")
        }

        // MARK: cross-store lookups
        let context = ObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Message", predicate: try FetchPredicate(format: "chat.owner.name == %@ AND link != nil", "Grace"))
        request.sortKeys = [SortKey("sentAt", ascending: false)]
        request.fetchLimit = 3
        say("latest linked messages in Grace's chats (Cloud) -> their previews (Cache, LMDB):")
        for message in try context.fetch(request) {
            let preview = try message.fetchedProperty("preview").first
            say("  \(try message.get("messageID", as: String.self) ?? "?") \(message.objectID) -> \(try preview?.get("title", as: String.self) ?? "no preview")")
        }
        for account in try context.fetch(FetchRequest(entityName: "Account", sortKeys: [SortKey("accountID")], fetchLimit: 3)) {
            let avatar = try account.fetchedProperty("avatar").first
            let drafts = try account.fetchedProperty("drafts")
            let chatID = try drafts.first?.get("chatID", as: String.self)
            let chat = try chatID.flatMap { id in
                try context.fetch(FetchRequest(entityName: "Chat", predicate: try FetchPredicate(format: "chatID == %@", id))).first
            }
            say("  \(try account.get("name", as: String.self) ?? "?"): avatar \(try avatar?.get("imageData", as: Data.self)?.count ?? 0) bytes (Cache), "
                + "\(drafts.count) drafts (Local), first for \(try chat?.get("title", as: String.self) ?? "none") (Cloud, via chatID)")
        }

        // MARK: many lookups at once
        var linked = FetchRequest(entityName: "Message", predicate: try FetchPredicate(format: "link != nil"))
        linked.fetchLimit = 10_000
        let messages = try context.fetch(linked)
        let started = Date()
        try context.prefetchFetchedProperty("preview", for: messages)
        let resolved = try messages.filter { !(try $0.fetchedProperty("preview")).isEmpty }.count
        say(String(format: "previews for %d messages resolved in one batch per store: %d found in %.0f ms",
                   messages.count, resolved, Date().timeIntervalSince(started) * 1000))

        // MARK: keep using the split stores
        let message = try context.insert("Message")
        try message.set("messageID", "msg-after-split")
        try message.set("sentAt", Date())
        try message.set("link", "https://swift.org")
        let preview = try context.insert("LinkPreview")
        try preview.set("url", "https://swift.org")
        try preview.set("title", "Swift.org")
        try context.save()
        say("new message \(message.objectID) (Cloud) -> \(try message.fetchedProperty("preview").first?.get("title", as: String.self) ?? "none") (Cache)")
    }
}

import ArgumentParser
import Foundation
import MessengerSchema
import Switchyard
import ToolSupport

/// `demo open`: the split stores used through one coordinator — Cloud and Local in SQLite, Cache in LMDB — with
/// fetched properties that look objects up across stores.
struct DemoOpen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open", abstract: "Open the split Messenger stores through one coordinator and look across them.")

    @Option(help: "Directory holding Cloud.sqlite, Local.sqlite and Cache.lmdb.")
    var dir = "demo-output"

    @Option(help: "The Messenger model (the split's target).")
    var model = "Schemas/Messenger.xcdatamodeld"

    @Option(name: .customLong("cloud-url"), help: "The Cloud store on PostgreSQL (postgres://user@host:port/database?schema=NAME) instead of Cloud.sqlite; needs the PostgreSQL trait.")
    var cloudURL: String?

    func validate() throws {
        if let cloudURL {
            do {
                _ = try StoreLocation.url(cloudURL, tool: "demo")
            } catch {
                throw ValidationError("--cloud-url \(error)")
            }
            guard StoreLocation.isServerURL(cloudURL) else { throw ValidationError("--cloud-url expects a postgres:// URL") }
        }
    }

    func run() throws {
        let root = URL(fileURLWithPath: dir)
        let messenger = try ModelLoader.load(at: URL(fileURLWithPath: model))
        say("model: \(messenger.entities.count) entities; configurations: \(messenger.configurations.map(\.name).joined(separator: ", "))")
        let coordinator = StoreCoordinator(model: messenger)
        for (configuration, type, name) in [("Cloud", StoreType.sqlite, "Cloud.sqlite"), ("Local", .sqlite, "Local.sqlite"), ("Cache", .lmdb, "Cache.lmdb")] {
            // The one-line change that moves Cloud to PostgreSQL: its description names the server instead of a file.
            let description = configuration == "Cloud" && cloudURL != nil
                ? StoreDescription(.postgreSQL, configuration: "Cloud", url: try StoreLocation.url(cloudURL!, tool: "demo"))
                : StoreDescription(type, configuration: configuration, url: root.appendingPathComponent(name))
            let store = try coordinator.addStore(description)
            let counts = try store.entities.map { "\($0.name)=\(try store.count(StoreFetchRequest(entityName: $0.name)))" }
            say("store \(configuration) (\(store.type.rawValue), \(store.displayPath)): \(counts.joined(separator: " "))")
        }

        // MARK: cross-store lookups (typed entities generated from the model by the SwitchyardCodegen plugin)
        let context = ObjectContext(coordinator: coordinator)
        let gracesLinked: TypedPredicate<Message> = .through(\.chat, .through(\.owner, \.name == "Grace")) && \.link != nil
        say("latest linked messages in Grace's chats (Cloud) -> their previews (Cache, LMDB):")
        for message in try context.fetch(Message.self, where: gracesLinked, sortedBy: [.descending(\.sentAt)], limit: 3) {
            let preview = try message.preview().first
            say("  \(message.messageID) \(message.objectID) -> \(preview?.title ?? "no preview")")
        }
        for account in try context.fetch(Account.self, sortedBy: [.ascending(\.accountID)], limit: 3) {
            let avatar = try account.avatar().first
            let drafts = try account.drafts()
            let chat = try drafts.first?.chatID.flatMap { id in try context.fetch(Chat.self, where: \.chatID == id).first }
            say("  \(account.name ?? "?"): avatar \(avatar?.imageData?.count ?? 0) bytes (Cache), "
                + "\(drafts.count) drafts (Local), first for \(chat?.title ?? "none") (Cloud, via chatID)")
        }

        // MARK: many lookups at once
        let messages = try context.fetch(Message.self, where: \.link != nil, limit: 10_000)
        let started = Date()
        try context.prefetchFetchedProperty("preview", for: messages.map(\.managedObject))
        let resolved = try messages.filter { !(try $0.preview()).isEmpty }.count
        say(String(format: "previews for %d messages resolved in one batch per store: %d found in %.0f ms",
                   messages.count, resolved, Date().timeIntervalSince(started) * 1000))

        // MARK: walk a whole store in bounded memory
        var walked = 0, titled = 0
        try ObjectContext(coordinator: coordinator).forEach(LinkPreview.self, batchSize: 1_000) { preview in
            walked += 1
            if preview.title != nil { titled += 1 }
        }
        say("walked \(walked) link previews (Cache, LMDB) in batches of 1,000: \(titled) with a title")

        // MARK: keep using the split stores
        let message = try context.insert(Message.self)
        message.messageID = "msg-after-split"
        message.sentAt = Date()
        message.link = "https://swift.org"
        let preview = try context.insert(LinkPreview.self)
        preview.url = "https://swift.org"
        preview.title = "Swift.org"
        try context.save()
        say("new message \(message.objectID) (Cloud) -> \(try message.preview().first?.title ?? "none") (Cache)")
    }
}

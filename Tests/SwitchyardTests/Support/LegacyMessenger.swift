import Foundation
@testable import Switchyard

/// A monolithic store of `Schemas/MessengerLegacy.xcdatamodeld` with known rows, the source of the split
/// tests: Message.preview and Draft.chat cross stores once split along `Schemas/Messenger.xcdatamodeld`.
enum LegacyMessenger {
    static let legacyURL = Repository.url("Schemas/MessengerLegacy.xcdatamodeld")
    static let targetURL = Repository.url("Schemas/Messenger.xcdatamodeld")

    static func legacyModel() throws -> ObjectModel { try ModelLoader.load(at: legacyURL) }
    static func targetModel() throws -> ObjectModel { try ModelLoader.load(at: targetURL) }

    /// Rows per entity in the store `make` builds (`messages` Messages).
    static func counts(messages: Int) -> [String: Int] {
        ["Account": 3, "Chat": 6, "LinkPreview": 4, "Message": messages, "Draft": 5, "Setting": 2, "Avatar": 3]
    }

    /// The app's own metadata key, which every output must keep.
    static let appKey = "com.example.schemaRevision"

    /// Creates the legacy store at `url` (kept open and returned: its rows may still be only in the `-wal`).
    @discardableResult
    static func make(_ type: StoreType, at url: URL, messages: Int = 60) throws -> any PersistentStore {
        let model = try legacyModel()
        let store: any PersistentStore = type == .lmdb
            ? try LMDBStore(url: url, model: model, configuration: "Default")
            : try SQLiteStore(url: url, model: model, configuration: "Default")
        var rows: [StoreRow] = []
        func keys(_ entity: String, _ n: Int) throws -> [Int64] {
            Array(try store.allocatePrimaryKeys(for: entity, count: n))
        }
        let accounts = try keys("Account", 3)
        for (i, pk) in accounts.enumerated() {
            rows.append(StoreRow(entityName: "Account", primaryKey: pk, values: [
                "accountID": .string("a\(i)"), "name": .string("Account \(i)"), "isActive": .bool(i != 1),
                "createdAt": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i))),
            ]))
        }
        let chats = try keys("Chat", 6)
        for (i, pk) in chats.enumerated() {
            rows.append(StoreRow(
                entityName: "Chat", primaryKey: pk,
                values: ["chatID": .string("c\(i)"), "title": .string("Chat \(i)"), "isMuted": .bool(i % 2 == 0)],
                toOne: ["owner": RowReference(entityName: "Account", primaryKey: accounts[i % 3])]))
        }
        let previews = try keys("LinkPreview", 4)
        for (i, pk) in previews.enumerated() {
            rows.append(StoreRow(entityName: "LinkPreview", primaryKey: pk, values: [
                "url": .string("https://example.com/\(i)"), "title": .string("Page \(i)"),
                "price": .decimal(Decimal(string: "\(i).25")!), "imageURL": .uri(URL(string: "https://img.example.com/\(i).png")!),
            ]))
        }
        let messageKeys = try keys("Message", messages)
        for (i, pk) in messageKeys.enumerated() {
            var toOne = ["chat": RowReference(entityName: "Chat", primaryKey: chats[i % 6])]
            if i % 3 == 0 { toOne["preview"] = RowReference(entityName: "LinkPreview", primaryKey: previews[i % 4]) }
            rows.append(StoreRow(
                entityName: "Message", primaryKey: pk,
                values: [
                    "messageID": .string("m\(i)"), "text": .string("hello \(i)"), "sequence": .integer(Int64(i)),
                    "sentAt": .date(Date(timeIntervalSinceReferenceDate: 710_000_000 + Double(i) * 1.5)),
                    "priority": .integer(Int64(i % 3)), "score": .double(Double(i) / 7), "isRead": .bool(i % 2 == 1),
                    "senderID": .uuid(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i))!),
                    "attachment": i % 10 == 0 ? .binary(Data([UInt8(i % 256), 1, 2, 3])) : .null,
                ],
                toOne: toOne))
        }
        let drafts = try keys("Draft", 5)
        for (i, pk) in drafts.enumerated() {
            rows.append(StoreRow(
                entityName: "Draft", primaryKey: pk, values: ["accountID": .string("a\(i % 3)"), "text": .string("draft \(i)")],
                toOne: i < 4 ? ["chat": RowReference(entityName: "Chat", primaryKey: chats[i])] : [:]))
        }
        for (i, pk) in try keys("Setting", 2).enumerated() {
            rows.append(StoreRow(entityName: "Setting", primaryKey: pk, values: ["key": .string("k\(i)"), "value": .string("v\(i)")]))
        }
        for (i, pk) in try keys("Avatar", 3).enumerated() {
            rows.append(StoreRow(entityName: "Avatar", primaryKey: pk, values: ["accountID": .string("a\(i)"), "imageData": .binary(Data([1, 2, UInt8(i)]))]))
        }
        try store.save(StoreChangeSet(inserts: rows))
        // Z_OPT above 1 on one message, and Z_MAX above the largest key (keys handed out, then never used).
        try store.save(StoreChangeSet(updates: [
            RowUpdate(entityName: "Message", primaryKey: messageKeys[1], expectedVersion: 1, values: ["text": "edited"]),
        ]))
        _ = try store.allocatePrimaryKeys(for: "Message", count: 7)
        var metadata = try store.metadata()
        metadata.additional[appKey] = .string("41")
        try store.setMetadata(metadata)
        return store
    }

    /// The split destinations of `Schemas/Messenger.xcdatamodeld` in `dir`, Cache as `cacheType`.
    static func destinations(in dir: URL, cacheType: StoreType = .lmdb) -> [SplitDestination] {
        [
            SplitDestination(configuration: "Cloud", url: dir.appendingPathComponent("Cloud.sqlite"), type: .sqlite),
            SplitDestination(configuration: "Local", url: dir.appendingPathComponent("Local.sqlite"), type: .sqlite),
            SplitDestination(
                configuration: "Cache", url: dir.appendingPathComponent(cacheType == .lmdb ? "Cache.lmdb" : "Cache.sqlite"),
                type: cacheType),
        ]
    }

    /// SHA-256 of a file or of every file in a directory (sorted by name), for "the source was not modified".
    static func fingerprint(_ url: URL) throws -> [String: Data] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return [:] }
        var result: [String: Data] = [:]
        if isDirectory.boolValue {
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name != "lock.mdb" {
                result[name] = SHA256.hash(try Data(contentsOf: url.appendingPathComponent(name)))
            }
        } else {
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: url.path + suffix) {
                result[url.lastPathComponent + suffix] = SHA256.hash(try Data(contentsOf: URL(fileURLWithPath: url.path + suffix)))
            }
        }
        return result
    }
}

import Foundation
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - StoreInspection

/// What `storeinspect` shows about a store: its type, metadata, the model it was read with and the rows of
/// each entity, plus what it holds outside the model (history tables, triggers).
public struct StoreInspection: Sendable, Codable {
    /// Rows of one entity: its own and those including its subentities.
    public struct EntityCount: Sendable, Codable, Hashable {
        /// The entity name.
        public var entity: String
        /// `Z_ENT` in the model that read the store.
        public var number: Int
        /// Rows of exactly this entity (0 for an abstract entity, whose objects are all of subentities).
        public var rows: Int
        /// Rows of this entity and all its subentities (equal to `rows` for an entity without subentities).
        public var rowsIncludingSubentities: Int
        /// Whether the entity is abstract in the model that read the store.
        public var isAbstract: Bool
    }

    /// The store's path.
    public var path: String
    /// The backend.
    public var type: StoreType
    /// The configuration the store was read as (`Default` for a monolithic store, else the one whose tables it has).
    public var configuration: String
    /// `NSStoreUUID`.
    public var uuid: String
    /// `NSStoreType` as recorded.
    public var storeType: String
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// Entity name -> version hash (hex).
    public var versionHashes: [String: String]
    /// Every other metadata key (the app's own too), rendered as text.
    public var additionalMetadata: [String: String]
    /// "--model", "model cache" or "none".
    public var model: String
    /// Row counts of every entity of the configuration (abstract ones too), in entity-number order.
    public var entities: [EntityCount]
    /// Tables, triggers and history entities outside the model.
    public var skipped: [SplitPlan.Skipped]
    /// Files in an SQLite store's `.<name>_SUPPORT/_EXTERNAL_DATA` folder (external binary data); 0 otherwise.
    public var externalDataFiles: Int = 0
    /// The store's persistent history; nil when it records none.
    public var history: History? = nil

    /// What a store's persistent history holds.
    public struct History: Sendable, Codable, Hashable {
        /// Transactions kept.
        public var transactions: Int
        /// Changes (one per object per transaction) in them.
        public var changes: Int
        /// The number of the oldest transaction kept; nil when none is.
        public var oldest: Int64?
        /// The number of the last transaction committed (it may have been deleted since).
        public var last: Int64
        /// When the oldest and the newest transaction kept were recorded.
        public var oldestDate: Date?, newestDate: Date?
    }

    /// Opens the store at `url` read-only (with `model`, else its model cache) and counts each entity's rows.
    public static func inspect(_ url: URL, model: ObjectModel? = nil) throws -> StoreInspection {
        let (store, origin) = try StoreSplitter.openReadOnly(url, model: model)
        let metadata = try store.metadata()
        var entities: [EntityCount] = []
        for entity in store.entities {
            let rows = try store.count(StoreFetchRequest(entityName: entity.name, includesSubentities: false))
            let all = entity.subentityNames.isEmpty
                ? rows : try store.count(StoreFetchRequest(entityName: entity.name, includesSubentities: true))
            entities.append(EntityCount(
                entity: entity.name, number: entity.entityNumber, rows: rows, rowsIncludingSubentities: all,
                isAbstract: entity.isAbstract))
        }
        let skipped = try (store as? BulkCopyStore)?.extraneousItems().map {
            SplitPlan.Skipped(kind: $0.kind, name: $0.name, rows: $0.rows, reason: $0.reason)
        } ?? []
        var history: History?
        if let tracking = store as? any HistoryTrackingStore, tracking.tracksHistory {
            // Read a page of transactions at a time: an inspection's memory stays bounded however long the history.
            var summary = History(transactions: 0, changes: 0, oldest: nil, last: try tracking.lastHistoryNumber())
            var after: Int64?
            while case let page = try tracking.history(after: after, limit: 1_000), let last = page.last {
                summary.transactions += page.count
                summary.changes += page.reduce(0) { $0 + $1.changes.count }
                if summary.oldest == nil { (summary.oldest, summary.oldestDate) = (page[0].number, page[0].timestamp) }
                summary.newestDate = last.timestamp
                after = last.number
            }
            history = summary
        }
        return StoreInspection(
            path: store.displayPath, type: store.type, configuration: store.configurationName, uuid: metadata.uuid.uuidString, storeType: metadata.storeType,
            versionIdentifiers: metadata.versionIdentifiers,
            versionHashes: metadata.versionHashes.mapValues { $0.map { String(format: "%02x", $0) }.joined() },
            additionalMetadata: metadata.additional.mapValues(Self.text), model: origin, entities: entities,
            skipped: skipped,
            externalDataFiles: store.type == .sqlite ? SQLiteExternalData(store: url, configuration: store.configurationName).fileCount() : 0,
            history: history)
    }

    /// The model recorded in the store's model cache; nil when it has none.
    public static func storedModel(_ url: URL) throws -> ObjectModel? {
        let (store, origin) = try StoreSplitter.openReadOnly(url, model: nil, fallback: try ObjectModel(entities: []))
        return origin == "model cache" ? store.model : nil
    }

    private static func text(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return ISO8601DateFormatter().string(from: d)
        case .data(let d): return "<\(d.count) bytes>"
        case .array(let a): return "[" + a.map(text).joined(separator: ", ") + "]"
        case .dictionary(let d): return "{" + d.keys.sorted().map { "\($0): \(text(d[$0]!))" }.joined(separator: ", ") + "}"
        }
    }
}

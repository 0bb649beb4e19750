// MARK: - BulkCopyStore
import SwitchyardModel

/// What a whole-store copy (the split layer) needs beyond `PersistentStore`: reading an entity in primary-key
/// batches without offsets, `Z_MAX` as stored (copied, never recomputed), the tables and triggers the model
/// does not describe, and closing the files so they can be renamed.
package protocol BulkCopyStore: PersistentStore {
    /// Up to `limit` rows of exactly `entityName` (no subentities) with a primary key above `after`, in
    /// primary-key order: a keyset page, so reading an entity costs the same per row at any depth.
    func rowBatch(entityName: String, after primaryKey: Int64?, limit: Int) throws -> [StoreRow]
    /// `Z_MAX` by entity name as the store records it (the inheritance root carries the table's counter).
    func primaryKeyMaxima() throws -> [String: Int64]
    /// The smallest and largest primary key present per inheritance root (roots without rows left out). A
    /// hand-edited or damaged store can record a `Z_MAX` below the largest; a copy then raises `Z_MAX` so no key
    /// is handed out twice. A split refuses to put two roots' objects under one root when their ranges overlap.
    func primaryKeyRanges() throws -> [String: ClosedRange<Int64>]
    /// Sets `Z_MAX` of these inheritance roots, in one transaction.
    func setPrimaryKeyMaxima(_ maxima: [String: Int64]) throws
    /// What the store holds that the model does not describe (history tables, triggers, join tables).
    func extraneousItems() throws -> [StoreExtraneousItem]
    /// Flushes and closes the files (an SQLite WAL is checkpointed away); the store is unusable afterwards.
    /// `StoreError.insideOwnTransaction`, changing nothing, from inside a read or write of this store.
    func closeFiles() throws
    /// `StoreError.insideOwnTransaction` when the calling thread is inside a read or write of this store (a
    /// `fetch(_:each:)` closure), where closing it for `operation` would wait for itself; nothing otherwise.
    func refuseInsideOwnTransaction(_ operation: String) throws
    /// Lets go of file pages the process holds mapped (LMDB's memory map), so a walk over a whole store keeps
    /// its resident memory bounded; nothing for a store that maps nothing.
    func releaseCachedPages()
    /// The rows of exactly `entityName`, counted the way a whole-store walk wants: an LMDB store lets go of the
    /// pages it maps as it goes, so counting a large table does not leave it resident.
    func walkingCount(entityName: String) throws -> Int
    /// Drops the primary keys and indexes of the entity tables of a store nobody else uses yet, so a bulk load
    /// appends rows without maintaining them; `buildDeferredIndexes` builds them once the rows are in (how
    /// PostgreSQL advises populating a database). Nothing for a store that keeps its indexes.
    func deferIndexes() throws
    /// Builds what `deferIndexes` dropped. Rows that break the primary key or a uniqueness constraint fail here.
    func buildDeferredIndexes() throws
}

extension BulkCopyStore {
    package func releaseCachedPages() {}

    package func refuseInsideOwnTransaction(_ operation: String) throws {}

    package func deferIndexes() throws {}

    package func buildDeferredIndexes() throws {}

    /// The largest primary key present per inheritance root (see `primaryKeyRanges()`).
    package func largestPrimaryKeys() throws -> [String: Int64] {
        try primaryKeyRanges().mapValues(\.upperBound)
    }

    package func walkingCount(entityName: String) throws -> Int {
        try count(StoreFetchRequest(entityName: entityName, includesSubentities: false))
    }
}

/// A table, trigger or `Z_PRIMARYKEY` entry a store holds outside the model.
package struct StoreExtraneousItem: Sendable, Hashable {
    /// "table", "trigger", "index" or "entity" (a `Z_PRIMARYKEY` row such as Core Data's persistent history).
    package var kind: String
    package var name: String
    /// Rows of a table, where known.
    package var rows: Int?
    package var reason: String
    /// Who the item belongs to, for warnings that name what is left behind by kind.
    package var owner: StoreExtraneousItem.Owner

    package init(kind: String, name: String, rows: Int? = nil, reason: String, owner: StoreExtraneousItem.Owner) {
        self.kind = kind
        self.name = name
        self.rows = rows
        self.reason = reason
        self.owner = owner
    }

    /// Who owns a table, trigger or entity that lies outside the model.
    package enum Owner: String, Sendable, Hashable, CaseIterable {
        /// Core Data's persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`, `Z_ENT` 16001-16003).
        case persistentHistory = "persistent history"
        /// `NSPersistentCloudKitContainer`'s mirroring (`ANSCK…` tables, `NSCK…` entities).
        case cloudKitMirroring = "CloudKit mirroring"
        /// Core Data's triggers (derived attributes `Z_DA_…`, and any other).
        case trigger = "triggers"
        /// A join table of a relationship the model does not have.
        case joinTable = "join tables of relationships outside the model"
        /// Another Core Data bookkeeping entity in `Z_PRIMARYKEY` (`Z_ENT` >= 16000).
        case coreDataEntity = "other Core Data entities"
        /// A table the app (or a library) created itself.
        case app = "app tables"

        /// The owner of table `name` of a Core Data SQLite file.
        package static func ofTable(_ name: String) -> Owner {
            let upper = name.uppercased()
            if ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"].contains(upper) { return .persistentHistory }
            if upper.hasPrefix("ANSCK") { return .cloudKitMirroring }
            if upper.hasPrefix("Z_"), upper.dropFirst(2).first?.isNumber == true { return .joinTable }
            return .app
        }

        /// The owner of a `Z_PRIMARYKEY` entity numbered 16000 or above.
        package static func ofEntity(_ name: String) -> Owner {
            let upper = name.uppercased()
            if ["CHANGE", "TRANSACTION", "TRANSACTIONSTRING"].contains(upper) { return .persistentHistory }
            if upper.hasPrefix("NSCK") { return .cloudKitMirroring }
            return .coreDataEntity
        }

        /// Why an item of this owner is not copied.
        package var reason: String {
            switch self {
            case .persistentHistory: return "Core Data persistent history, not part of the model"
            case .cloudKitMirroring: return "Core Data's CloudKit mirroring bookkeeping, not part of the model"
            case .trigger: return "triggers are not copied (derived attributes keep their copied values)"
            case .joinTable: return "join table of a relationship the source model does not have"
            case .coreDataEntity: return "Core Data bookkeeping entity (Z_ENT >= 16000), not part of the model"
            case .app: return "table not described by the source model (the app's own)"
            }
        }
    }
}

// MARK: - BulkCopySpec

/// How a store-to-store copy fills one target entity from one source entity, for a backend that can copy
/// without decoding rows (`SQLiteStore.copyRows(_:from:batchSize:progress:)`).
package struct BulkCopySpec: Sendable {
    package enum Value: Sendable {
        /// The source attribute's stored value, unchanged.
        case attribute(String)
        /// A constant (an attribute the source lacks, filled with its default).
        case constant(AttributeValue)
        /// The primary key the source's to-one relationship points at.
        case relatedKey(relationship: String)
        /// An attribute of the row the source's to-one relationship points at.
        case relatedAttribute(relationship: String, attribute: String)
    }
    package var sourceEntity: String
    package var targetEntity: String
    /// Target attribute name -> where its value comes from.
    package var attributes: [(target: String, value: Value)]
    /// Target to-one relationship -> source to-one relationship (same rows, so the same keys).
    package var toOnes: [(target: String, source: String)]
    /// Source entity name -> target entity name, for the entity columns of to-ones.
    package var entityNames: [String: String]

    package init(sourceEntity: String, targetEntity: String, attributes: [(target: String, value: Value)], toOnes: [(target: String, source: String)], entityNames: [String: String]) {
        self.sourceEntity = sourceEntity
        self.targetEntity = targetEntity
        self.attributes = attributes
        self.toOnes = toOnes
        self.entityNames = entityNames
    }
}

// MARK: - BulkLinkCopySpec

/// How a store-to-store copy fills one to-many relationship's bookkeeping that lives apart from its rows, for
/// a backend that can copy it without decoding it (`SQLiteStore.copyLinks(_:from:batchSize:)`): a
/// many-to-many's links with their positions, or the positions of an ordered to-many with a to-one inverse.
package struct BulkLinkCopySpec: Sendable {
    /// The to-many end in the target model, and the source model's end it is copied from.
    package var targetEnd: RelationshipEnd
    package var sourceEnd: RelationshipEnd
    /// The inverse ends: the other to-many of a many-to-many, or the members' to-one.
    package var targetInverse: RelationshipEnd
    package var sourceInverse: RelationshipEnd
    /// Whether `targetEnd`'s positions are copied (ordered in both models).
    package var ordered: Bool
    /// Whether the inverse's positions are copied (a many-to-many ordered from the other side in both models).
    package var inverseOrdered: Bool

    package init(targetEnd: RelationshipEnd, sourceEnd: RelationshipEnd, targetInverse: RelationshipEnd, sourceInverse: RelationshipEnd, ordered: Bool, inverseOrdered: Bool) {
        self.targetEnd = targetEnd
        self.sourceEnd = sourceEnd
        self.targetInverse = targetInverse
        self.sourceInverse = sourceInverse
        self.ordered = ordered
        self.inverseOrdered = inverseOrdered
    }
}

// MARK: - BulkCopyStore

/// What a whole-store copy (the split layer) needs beyond `PersistentStore`: reading an entity in primary-key
/// batches without offsets, `Z_MAX` as stored (copied, never recomputed), the tables and triggers the model
/// does not describe, and closing the files so they can be renamed.
protocol BulkCopyStore: PersistentStore {
    /// Up to `limit` rows of exactly `entityName` (no subentities) with a primary key above `after`, in
    /// primary-key order: a keyset page, so reading an entity costs the same per row at any depth.
    func rowBatch(entityName: String, after primaryKey: Int64?, limit: Int) throws -> [StoreRow]
    /// `Z_MAX` by entity name as the store records it (the inheritance root carries the table's counter).
    func primaryKeyMaxima() throws -> [String: Int64]
    /// The largest primary key present per inheritance root (roots without rows left out). A hand-edited or
    /// damaged store can record a `Z_MAX` below it; a copy then raises `Z_MAX` so no key is handed out twice.
    func largestPrimaryKeys() throws -> [String: Int64]
    /// Sets `Z_MAX` of these inheritance roots, in one transaction.
    func setPrimaryKeyMaxima(_ maxima: [String: Int64]) throws
    /// What the store holds that the model does not describe (history tables, triggers, join tables).
    func extraneousItems() throws -> [StoreExtraneousItem]
    /// Flushes and closes the files (an SQLite WAL is checkpointed away); the store is unusable afterwards.
    func closeFiles() throws
}

/// A table, trigger or `Z_PRIMARYKEY` entry a store holds outside the model.
struct StoreExtraneousItem: Sendable, Hashable {
    /// "table", "trigger", "index" or "entity" (a `Z_PRIMARYKEY` row such as Core Data's persistent history).
    var kind: String
    var name: String
    /// Rows of a table, where known.
    var rows: Int?
    var reason: String
}

// MARK: - BulkCopySpec

/// How a store-to-store copy fills one target entity from one source entity, for a backend that can copy
/// without decoding rows (`SQLiteStore.copyRows(_:from:batchSize:progress:)`).
struct BulkCopySpec: Sendable {
    enum Value: Sendable {
        /// The source attribute's stored value, unchanged.
        case attribute(String)
        /// A constant (an attribute the source lacks, filled with its default).
        case constant(AttributeValue)
        /// The primary key the source's to-one relationship points at.
        case relatedKey(relationship: String)
        /// An attribute of the row the source's to-one relationship points at.
        case relatedAttribute(relationship: String, attribute: String)
    }
    var sourceEntity: String
    var targetEntity: String
    /// Target attribute name -> where its value comes from.
    var attributes: [(target: String, value: Value)]
    /// Target to-one relationship -> source to-one relationship (same rows, so the same keys).
    var toOnes: [(target: String, source: String)]
    /// Source entity name -> target entity name, for the entity columns of to-ones.
    var entityNames: [String: String]
}

// MARK: - BulkLinkCopySpec

/// How a store-to-store copy fills one to-many relationship's bookkeeping that lives apart from its rows, for
/// a backend that can copy it without decoding it (`SQLiteStore.copyLinks(_:from:batchSize:)`): a
/// many-to-many's links with their positions, or the positions of an ordered to-many with a to-one inverse.
struct BulkLinkCopySpec: Sendable {
    /// The to-many end in the target model, and the source model's end it is copied from.
    var targetEnd: RelationshipEnd
    var sourceEnd: RelationshipEnd
    /// The inverse ends: the other to-many of a many-to-many, or the members' to-one.
    var targetInverse: RelationshipEnd
    var sourceInverse: RelationshipEnd
    /// Whether `targetEnd`'s positions are copied (ordered in both models).
    var ordered: Bool
    /// Whether the inverse's positions are copied (a many-to-many ordered from the other side in both models).
    var inverseOrdered: Bool
}

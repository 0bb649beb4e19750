import Foundation
import SwitchyardModel

// MARK: - PersistentStore

/// The backend boundary: one store holds the entities of one configuration and owns its file(s).
///
/// Requirements every backend meets (the conformance suite checks each against SQLite, LMDB and memory):
/// - **Thread safety.** A store is `Sendable`; any method may be called from any thread. Writes are serialized,
///   readers see a consistent committed snapshot and never a half-applied save.
/// - **Metadata.** `metadata()` returns what was last written (a new store starts with its type, a fresh UUID
///   and the model's version hashes); `setMetadata` replaces it, keeping app keys the caller passes.
/// - **Model cache.** A new store records the whole model that created it; `storedModel()` returns it
///   (for a real Core Data store, the model recovered from its keyed-archive `Z_MODELCACHE`).
/// - **Fetch.** Rows of the requested entity (and its subentities unless `includesSubentities` is false) that
///   match the predicate, ordered by the sort descriptors with `AttributeValue.order` semantics (NULL first,
///   ties broken by primary key ascending), then offset, then limit. Predicates must be fully substituted;
///   a key path that is not in the entity is `QueryError.unknownKeyPath`.
/// - **Count** equals the number of rows `fetch` would return without limit and offset.
/// - **Save** applies a change set in one transaction: all or nothing. An update or delete whose
///   `expectedVersion` differs from the row's `Z_OPT` fails with `StoreError.conflict`; an insert that breaks a
///   uniqueness constraint fails with `StoreError.uniquenessViolation`. Updates increment `Z_OPT`.
/// - **To-many relationships.** `relatedReferences(of:relationship:)` returns, for a batch of source rows, the
///   members of one of their to-many relationships: many-to-many through the store's links (SQLite: Core Data's
///   join table `Z_<n><REL>`), others through the members' inverse to-one; ordered relationships in their
///   stored order (SQLite: `Z_FOK_` columns), the rest by primary key; members whose rows are gone left out.
///   A save applies row deletes (which also drop every link of a deleted row), updates and inserts, then
///   `linkDeletes`, `linkInserts`, and last `orders`; a link names either end of the pair and is kept once.
///   A link or order naming a relationship that is not a (many-to-many, for links; ordered, for orders)
///   to-many of the source entity is `StoreError.unknownProperty`.
/// - **Primary keys** come from `allocatePrimaryKeys`, which hands out keys above the root entity's `Z_MAX`
///   and records the new maximum durably; keys are never reused, even after deletes.
/// - **Destroy** removes the store's files; the store is unusable afterwards.
public protocol PersistentStore: AnyObject, Sendable {
    /// The backend.
    var type: StoreType { get }
    /// The store's file or directory; `nil` for a memory store.
    var url: URL? { get }
    /// The configuration whose entities this store holds.
    var configurationName: String { get }
    /// The whole model (the store holds `entities`, a subset of it).
    var model: ObjectModel { get }
    /// The entities of `configurationName`, in entity-number order.
    var entities: [EntityDescription] { get }
    /// `NSStoreUUID`, stable across opens.
    var identifier: UUID { get }
    /// Whether the store was opened read-only.
    var isReadOnly: Bool { get }

    func metadata() throws -> StoreMetadata
    func setMetadata(_ metadata: StoreMetadata) throws
    /// The model that last wrote the store, from its model cache; nil when the store has none.
    func storedModel() throws -> ObjectModel?

    func fetch(_ request: StoreFetchRequest) throws -> [StoreRow]
    /// The rows `fetch` returns, in the same order, handed to `body` one at a time as they are read, so a
    /// caller turning rows into objects never holds every row at once (a million rows fetched into objects
    /// peak 80 MB lower). The store's read stays open while `body` runs, so `body` must not read from or
    /// write to this store, and should be quick (a long read holds back SQLite's checkpoints and LMDB's
    /// page reuse). An error `body` throws ends the read and comes out unchanged; rows handed over before it
    /// stay handed over. The default reads them all with `fetch` first.
    func fetch(_ request: StoreFetchRequest, each body: (consuming StoreRow) throws -> Void) throws
    func count(_ request: StoreFetchRequest) throws -> Int
    /// The references (concrete entity and primary key) of the rows `fetch(_:each:)` hands over, in the same
    /// order, each handed to `body` as it is read, for a caller that needs which rows match and not their
    /// values (Core Data's `managedObjectIDResultType`). A store may answer without decoding the rows' values:
    /// SQLite selects only `Z_PK` and `Z_ENT`; LMDB reads only what the predicate compares. The same rules
    /// for `body` as `fetch(_:each:)`. The default maps the rows of `fetch(_:each:)`.
    func fetchReferences(_ request: StoreFetchRequest, each body: (RowReference) throws -> Void) throws
    /// The rows with these references (missing ones are left out), in no particular order.
    func rows(for references: [RowReference]) throws -> [StoreRow]

    /// The members of to-many `relationship` of each of `sources` (rows of entities that have it), in the
    /// relationship's order; a source with no members maps to an empty list.
    func relatedReferences(of sources: [RowReference], relationship: String) throws -> [RowReference: [RowReference]]

    /// Reserves `count` new primary keys for `entityName`'s inheritance root and returns them.
    func allocatePrimaryKeys(for entityName: String, count: Int) throws -> ClosedRange<Int64>
    /// Applies `changes` in one transaction.
    func save(_ changes: StoreChangeSet) throws

    /// Deletes the store's files. The store must not be used afterwards.
    func destroy() throws
}

extension PersistentStore {
    /// Reads every row with `fetch(_:)`, then hands them to `body` in order.
    public func fetch(_ request: StoreFetchRequest, each body: (consuming StoreRow) throws -> Void) throws {
        for row in try fetch(request) { try body(row) }
    }

    /// The references of the rows `fetch(_:each:)` hands over, read through it.
    public func fetchReferences(_ request: StoreFetchRequest, each body: (RowReference) throws -> Void) throws {
        try fetch(request) { try body(RowReference(entityName: $0.entityName, primaryKey: $0.primaryKey)) }
    }

    /// A human-readable location for errors: the path, or `memory:<configuration>`.
    /// A PostgreSQL store shows its URL without the password.
    public var displayPath: String { StoreDescription.displayLocation(type: type, url: url, configuration: configurationName) }

    /// True when this store holds rows of `entityName`.
    public func serves(_ entityName: String) -> Bool {
        entities.contains { $0.name == entityName }
    }
}

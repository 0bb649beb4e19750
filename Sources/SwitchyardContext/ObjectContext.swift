import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - ObjectContext

/// A unit of work: insert, fetch, change and delete objects, then `save()` them — each store in one transaction.
///
/// Not `Sendable`: a context belongs to one task. Many contexts may share one `StoreCoordinator`.
/// ```swift
/// let context = ObjectContext(coordinator: coordinator)
/// let chat = try context.insert("Chat")
/// try chat.set("title", "Team")
/// try context.save()
/// ```
public final class ObjectContext {
    /// The coordinator whose stores this context reads and writes.
    public let coordinator: StoreCoordinator
    /// `coordinator.model`, held here: reading it through the coordinator (another module) copied the model,
    /// a retain and release of each of its stored references, at every read (about 200 instructions of an
    /// indexed lookup in callgrind).
    package let model: ObjectModel
    // The bookkeeping `var`s below skip the dynamic exclusivity check, as `ManagedObject`'s fields do and for
    // the same reasons: a check per access on the per-object paths (registering a fetched row, validating
    // and finishing a save), and no access that can overlap (assignments and mutating methods of plain values
    // that run no closure of ours). `homes` and `detachedHomes` also change from a home's `deinit`
    // (`homeDidEnd`), which no access to them can trigger: they hold their homes unretained.
    /// Objects by ID; one instance per object per context.
    @exclusivity(unchecked) package var registered = ObjectRegistry()
    /// Unsaved inserts, in insertion order.
    @exclusivity(unchecked) package var insertedObjects: [ManagedObject] = []
    /// Rows for the objects' unsaved values, many objects' to a block (see `ChangedValues`).
    package let changeArena = ChangeArena()
    /// Saved objects with unsaved changes or deletes.
    @exclusivity(unchecked) package var changedObjects: [ObjectIdentifier: ManagedObject] = [:]
    /// How `save()` treats an object another save changed since this context read it (Core Data's
    /// `mergePolicy`): `.error` (the default) throws `StoreError.conflict`; the other policies re-read that
    /// object, resolve it as `mergeChanges(from:policy:)` would, and save again.
    public var mergePolicy: MergePolicy = .error
    /// Who this context's saves are by, recorded in persistent history (`HistoryTransaction.author`), so a
    /// process can skip its own transactions when it merges: Core Data's `transactionAuthor`.
    public var transactionAuthor: String?
    /// The context's name, recorded in persistent history (`HistoryTransaction.contextName`).
    public var name: String?
    /// The last entity type a typed call registered with the coordinator (see `register(_:)`): a loop of
    /// typed fetches of one type skips the coordinator's locked set.
    @usableFromInline @exclusivity(unchecked) package var lastRegisteredType: ObjectIdentifier?
    /// Calls to `PersistentStore.relatedReferences`: how tests see that member reads are batched.
    package var memberReads = 0
    /// Whether some registered object may hold members read from its store (`committedToMany`): a save
    /// forgets them, and skips the walk over every registered object when none can.
    @exclusivity(unchecked) package var cachesMembers = false
    /// The last store layout compared with an entity's layout, and whether they are equivalent: a fetch's rows
    /// share one layout, so the comparison runs once per fetch rather than once per row. Compared by identity
    /// (`layoutMatchIdentities`), which reads no reference: binding the stored pair retained and released both
    /// layouts for every fetched row. `layoutMatch` holds them, so the identities stay valid.
    @exclusivity(unchecked) private var layoutMatch: (store: RowLayout, entity: RowLayout, equivalent: Bool)? {
        didSet { layoutMatchIdentities = layoutMatch.map { (ObjectIdentifier($0.store), ObjectIdentifier($0.entity), $0.equivalent) } }
    }
    @exclusivity(unchecked) private var layoutMatchIdentities: (store: ObjectIdentifier, entity: ObjectIdentifier, equivalent: Bool)?
    /// The home of this context's objects in each store (see `ObjectHome`), unretained: a home lives as long
    /// as objects use it, so the context alone never keeps a removed store (and its open files) alive, and a
    /// home's `deinit` takes it out of here (`homeDidEnd`), so every home recorded is alive.
    @exclusivity(unchecked) private var homes: [ObjectIdentifier: Unmanaged<ObjectHome>] = [:]
    /// The entry of `homes` found last: a fetch asks once per run of rows, and hashing the store's identity for
    /// the dictionary was about 190 instructions of an indexed lookup (callgrind). Cleared with the entry.
    @exclusivity(unchecked) private var lastHome: (store: ObjectIdentifier, home: Unmanaged<ObjectHome>)?
    /// The home of objects not assigned to a store yet, once one was needed (see `unassignedHome`).
    private var unassigned: ObjectHome?
    /// Homes without a context, for objects this context let go of (unretained, by store; see `homes`).
    @exclusivity(unchecked) private var detachedHomes: [ObjectIdentifier?: Unmanaged<ObjectHome>] = [:]

    /// Creates an empty context over `coordinator`.
    public init(coordinator: StoreCoordinator) {
        self.coordinator = coordinator
        self.model = coordinator.model
    }

    /// Closes every home made with this context (see `ObjectHome.owner`): the unassigned one and those
    /// recorded. A recorded home is alive (its `deinit` forgets it), and is never replaced while alive: it
    /// holds its store, so no other store can take its key.
    deinit {
        unassigned?.contextDidEnd()
        for home in homes.values { home.takeUnretainedValue().contextDidEnd() }
        for home in detachedHomes.values { home.takeUnretainedValue().contextDidEnd() }
    }

    /// The home of objects not assigned to a store yet.
    private var unassignedHome: ObjectHome {
        if let unassigned { return unassigned }
        let home = ObjectHome(recordedBy: self, store: nil)
        unassigned = home
        return home
    }

    /// The shared home of this context's objects in `store` (nil: not assigned to a store yet).
    package func home(for store: (any PersistentStore)?) -> ObjectHome {
        guard let store else { return unassignedHome }
        let key = ObjectIdentifier(store)
        if let last = lastHome, last.store == key { return last.home.takeUnretainedValue() }
        let home = Self.recorded(in: &homes, key: key) { ObjectHome(recordedBy: self, store: store) }
        lastHome = (key, Unmanaged.passUnretained(home))
        return home
    }

    /// A home without a context for objects taken out of this one, shared by those of one store.
    package func detachedHome(for store: (any PersistentStore)?) -> ObjectHome {
        Self.recorded(in: &detachedHomes, key: store.map { ObjectIdentifier($0) }) { ObjectHome(detachedFrom: self, store: store) }
    }

    /// The home `table` records under `key`, or `make()`'s, recorded there (unretained; see `homes`). A recorded
    /// home holds its store, so the key cannot stand for another store.
    private static func recorded<Key: Hashable>(
        in table: inout [Key: Unmanaged<ObjectHome>], key: Key, make: () -> ObjectHome
    ) -> ObjectHome {
        if let home = table[key]?.takeUnretainedValue() { return home }
        let home = make()
        table[key] = Unmanaged.passUnretained(home)
        return home
    }

    /// Called by a home's `deinit`: forgets it, wherever it is recorded.
    package func homeDidEnd(_ home: ObjectHome) {
        let key = home.store.map { ObjectIdentifier($0) }
        let pointer = Unmanaged.passUnretained(home).toOpaque()
        if let key, homes[key]?.toOpaque() == pointer { homes[key] = nil }
        if lastHome?.home.toOpaque() == pointer { lastHome = nil }
        if detachedHomes[key]?.toOpaque() == pointer { detachedHomes[key] = nil }
    }

    /// True when anything is inserted, changed or deleted and not saved.
    public var hasChanges: Bool {
        !insertedObjects.isEmpty || changedObjects.values.contains { $0.hasChanges }
    }

    /// Every object registered in the context.
    public var registeredObjects: [ManagedObject] { Array(registered.values) }

    // MARK: - Insert, assign, delete

    /// Inserts a new object of `entityName`, with the model's default values.
    public func insert(_ entityName: String) throws -> ManagedObject {
        guard let handle = coordinator.entityHandles[name: entityName] else { throw ContextError.unknownEntity(entityName) }
        guard !handle.isAbstract else { throw ContextError.abstractEntity(entityName) }
        let object = ManagedObject(entity: handle, objectID: .temporary(entityName: entityName), home: unassignedHome)
        for (position, value) in handle.defaults {
            object.changedValues.set(value, at: position, layout: handle.layout, arena: changeArena)
        }
        object.isInserted = true
        registered[object.objectID] = object
        insertedObjects.append(object)
        return object
    }

    /// Chooses the store a new object goes to, where several stores serve its entity.
    public func assign(_ object: ManagedObject, to store: any PersistentStore) throws {
        guard object.context === self else { throw ContextError.foreignObject(object.objectID.description) }
        guard coordinator.stores.contains(where: { $0 === store }) else {
            throw CoordinatorError.storeNotInCoordinator(path: store.displayPath)
        }
        guard store.serves(object.entity.name) else {
            throw CoordinatorError.entityNotInStore(entity: object.entity.name, path: store.displayPath, configuration: store.configurationName)
        }
        guard object.isInserted else { return }
        object.store = store
    }

    /// Marks `object` for deletion at the next save, when its delete rules run. An unsaved insert is dropped
    /// at once, and with it what its Cascade rules reach (the saved ones among them are marked for deletion), as
    /// Core Data propagates an inserted object's deletion too; nothing keeps pointing at it.
    public func delete(_ object: ManagedObject) throws {
        guard object.context === self else { throw ContextError.foreignObject(object.objectID.description) }
        guard object.isInserted else {
            object.isDeleted = true
            changedObjects[ObjectIdentifier(object)] = object
            return
        }
        var undo: [() -> Void] = []
        var visited: Set<ObjectIdentifier> = [ObjectIdentifier(object)]
        do {
            _ = try deleteCascadingFromInserts(object, undo: &undo, visited: &visited)
        } catch {
            // A relationship could not be read: nothing of this delete stays done.
            for step in undo.reversed() { step() }
            throw error
        }
    }

    /// Drops an unsaved insert (see `delete`); returns what restores the references to it that were cleared.
    package func dropInserted(_ object: ManagedObject) -> () -> Void {
        insertedObjects.removeAll { $0 === object }
        registered[object.objectID] = nil
        object.isInserted = false
        object.isDeleted = true
        object.context = nil
        return forgetReferences(to: object)
    }

    /// An unsaved insert that is deleted vanishes, so nothing may keep pointing at it (Core Data nullifies such
    /// references when it processes the deletion): only unsaved changes can name an unsaved object.
    /// Returns what puts the references back (for a delete that is undone).
    private func forgetReferences(to object: ManagedObject) -> () -> Void {
        var restores: [() -> Void] = []
        for other in insertedObjects + Array(changedObjects.values) {
            for (key, target) in other.changedToOne where target === object {
                restores.append { other.changedToOne[key] = .some(object) }
                other.changedToOne[key] = .some(nil)
            }
            for (key, members) in other.changedToMany where members.contains(where: { $0 === object }) {
                restores.append { other.changedToMany[key] = members }
                other.changedToMany[key] = members.filter { $0 !== object }
            }
        }
        return { for restore in restores.reversed() { restore() } }
    }

    /// Called before a saved object changes, so save knows to write it.
    package func willChange(_ object: ManagedObject) throws {
        guard !object.isDeleted else { throw ContextError.deletedObject(object.description) }
        if !object.isInserted { changedObjects[ObjectIdentifier(object)] = object }
    }

    // MARK: - Lookup and refresh

    /// The object with this ID, read from its store if it is not registered yet.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        if let object = registered[id] { return object }
        guard model.entity(named: id.entityName) != nil else { throw ContextError.objectNotFound(id.description) }
        guard let storeID = id.storeIdentifier, let store = coordinator.store(withIdentifier: storeID) else {
            throw ContextError.objectNotFound(id.description)
        }
        guard let object = try object(with: id, in: store) else { throw ContextError.objectNotFound(id.description) }
        return object
    }

    /// The registered object for `id`, or one built from its row; nil when the row is gone.
    package func object(with id: ObjectID, in store: any PersistentStore) throws -> ManagedObject? {
        if let object = registered[id] { return object }
        guard let row = try coordinator.rows(for: [id])[id] else { return nil }
        return register(row.row, from: store)
    }

    /// Returns the context's object for a fetched row, registering it or refreshing its unchanged state.
    package func register(_ row: StoreRow, from store: any PersistentStore) -> ManagedObject {
        register(row, from: store, storeIdentifier: store.identifier, entity: nil)
    }

    /// Registers fetched rows in order (see `RowRun`).
    package func register(_ fetched: [FetchedRow]) -> [ManagedObject] {
        // Growing the registry by doubling would rehash every object registered so far, several times over.
        registered.reserveCapacity(registered.count + fetched.count)
        var run = RowRun()
        return fetched.map { register($0.row, from: $0.store, run: &run) }
    }

    /// Fetches `request`'s rows and registers each as the store hands it over (see
    /// `StoreCoordinator.fetchRows(_:targets:validated:each:)`), in order. The caller has checked `request`
    /// against the coordinator's model (`validateFetch`) and found its `targets` (`targetStores(for:)`).
    /// Each object is handed to `body` owned, in order, once the store's read has ended (see `HeldObjects`).
    /// `expecting` is told their number first.
    package func registerRows(
        _ request: FetchRequest, targets: [any PersistentStore], expecting: (Int) -> Void,
        each body: (consuming ManagedObject) -> Void
    ) throws {
        var run = RowRun()
        var held = HeldObjects()
        try coordinator.fetchRows(request, targets: targets, validated: true) { store, row in
            held.append(register(consume row, from: store, run: &run))
        }
        held.handOver(expecting: expecting, to: body)
    }

    /// What consecutive rows of one fetch share: each store's identifier and home, and each entity's handle,
    /// are looked up once per run of rows from it rather than once per row.
    private struct RowRun {
        var store: ObjectIdentifier?
        var identifier = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var home: ObjectHome?
        var entity: EntityHandle?
    }

    /// Registers one row of a run (see `RowRun`).
    private func register(_ row: consuming StoreRow, from store: any PersistentStore, run: inout RowRun) -> ManagedObject {
        let key = ObjectIdentifier(store)
        if run.store != key {
            run.store = key
            run.identifier = store.identifier
            run.home = home(for: store)
        }
        if run.entity?.name != row.entityName { run.entity = coordinator.entityHandles[name: row.entityName] }
        return register(consume row, from: store, storeIdentifier: run.identifier, entity: run.entity, home: run.home)
    }

    private func register(
        _ row: consuming StoreRow, from store: any PersistentStore, storeIdentifier: UUID, entity known: EntityHandle?,
        home: ObjectHome? = nil
    ) -> ManagedObject {
        let id = ObjectID(store: storeIdentifier, entityName: row.entityName, primaryKey: row.primaryKey)
        switch registered.find(id) {
        case .registered(let existing):
            if !existing.hasChanges {
                existing.snapshot = snapshot(of: consume row, entity: existing.handle)
                // A fresh row: to-many members read before may be stale too.
                existing.committedToMany = [:]
            }
            return existing
        case .vacant(let vacancy):
            let entity = known ?? coordinator.entityHandles[name: row.entityName]!
            let object = ManagedObject(entity: entity, objectID: id, home: home ?? self.home(for: store))
            object.snapshot = snapshot(of: consume row, entity: entity)
            registered.register(object, at: vacancy)
            return object
        }
    }

    /// A fetched row as an object's snapshot, its values under the entity's layout when the store's is
    /// equivalent (so the object reads them by position).
    private func snapshot(of row: consuming StoreRow, entity: EntityHandle) -> ObjectSnapshot {
        let entityLayout = ObjectIdentifier(entity.layout)
        guard let storeLayout = row.values.layoutIdentity, storeLayout != entityLayout else { return ObjectSnapshot(consume row) }
        let equivalent: Bool
        if let match = layoutMatchIdentities, match.store == storeLayout, match.entity == entityLayout {
            equivalent = match.equivalent
        } else {
            let layout = row.values.layout!
            equivalent = layout.isEquivalent(to: entity.layout)
            layoutMatch = (layout, entity.layout, equivalent)
        }
        return ObjectSnapshot(consume row, layout: equivalent ? entity.layout : nil)
    }

    /// Discards unsaved changes to `object` (unless `mergeChanges`) and rereads it from its store;
    /// clears its cached fetched properties. With `mergeChanges`, a kept change to a many-to-many (or a to-many
    /// without inverse) is re-applied to the members the store holds now, as Core Data does.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool = false) throws {
        guard object.context === self else { throw ContextError.foreignObject(object.objectID.description) }
        object.fetchedCache = FetchedResultsCache()
        // Members read before are stale, except where kept changes still need them to compute link deltas.
        object.committedToMany = object.committedToMany.filter { mergeChanges && object.changedToMany[$0.key] != nil }
        guard !object.isInserted, object.store != nil else { return }
        guard let row = try coordinator.rows(for: [object.objectID])[object.objectID] else {
            throw ContextError.objectNotFound(object.objectID.description)
        }
        if mergeChanges {
            // As a merge keeping the changes does: the row becomes the saved state, kept lists are re-applied.
            try takeSavedState(row.row, for: object)
        } else {
            object.snapshot = snapshot(of: row.row, entity: object.handle)
            discardChanges(of: object)
        }
    }

    /// Takes `row` as the object's saved state (the newest `Z_OPT`, so a later save of kept changes does not
    /// conflict), forgetting cached fetched properties and members read before; kept list changes are made again
    /// against the members saved now (`rebaseKeptLists(of:)`).
    package func takeSavedState(_ row: StoreRow, for object: ManagedObject) throws {
        object.fetchedCache = FetchedResultsCache()
        object.committedToMany = object.committedToMany.filter { object.changedToMany[$0.key] != nil }
        object.snapshot = snapshot(of: row, entity: object.handle)
        try rebaseKeptLists(of: object)
    }

    /// Drops every unsaved change of a saved object.
    package func discardChanges(of object: ManagedObject) {
        object.changedValues.removeAll()
        object.changedToOne = [:]
        object.changedToMany = [:]
        object.touchedToMany = []
        object.isDeleted = false
        changedObjects[ObjectIdentifier(object)] = nil
    }

    /// Takes an object whose row another save deleted out of the context: it is no longer registered, and
    /// writing to it throws `ContextError.detachedObject`, as for an object this context deleted and saved.
    package func detachDeleted(_ object: ManagedObject) {
        discardChanges(of: object)
        registered[object.objectID] = nil
        object.context = nil
        _ = forgetReferences(to: object)
    }

    /// Refreshes every registered object that has no unsaved changes.
    ///
    /// As Core Data's `refreshAllObjects()`: objects without changes are reread; objects with unsaved changes
    /// keep them over the store's newest state (`refresh(_:mergeChanges: true)`), so their next save does not
    /// conflict with what other contexts saved meanwhile. Unsaved inserts are left alone. An object another
    /// context deleted keeps its last state and its unsaved changes, as a Core Data fault would until touched:
    /// the next save reports the conflict (per its merge policy), and every other object is still refreshed.
    /// (Before 2026-12-02 such an object with unsaved changes stopped the refresh with
    /// `ContextError.objectNotFound`, leaving the objects after it stale.) Other errors, such as a store that
    /// cannot be read, are thrown.
    public func refreshAllObjects() throws {
        for object in Array(registered.values) where !object.isInserted {
            do {
                try refresh(object, mergeChanges: object.hasChanges)
            } catch ContextError.objectNotFound {
                // Deleted elsewhere; see above.
            }
        }
    }

    /// Drops every unsaved change.
    public func rollback() {
        for object in insertedObjects {
            registered[object.objectID] = nil
            object.isInserted = false
            object.context = nil
        }
        insertedObjects = []
        for object in changedObjects.values {
            object.changedValues.removeAll()
            object.changedToOne = [:]
            object.changedToMany = [:]
            object.touchedToMany = []
            object.isDeleted = false
        }
        changedObjects = [:]
    }
}

@available(*, unavailable, message: "an ObjectContext is one task's unit of work; give each task its own")
extension ObjectContext: @unchecked Sendable {}

import Foundation
import Logging
import Synchronization
import SwitchyardLMDB
import SwitchyardMemory
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - StoreCoordinator

/// Routes every entity of one merged model to the store that serves its configuration.
///
/// Thread-safe: share one coordinator between tasks; give each task its own `ObjectContext`.
/// ```swift
/// let coordinator = StoreCoordinator(model: model)
/// try coordinator.addStore(.sqlite, configuration: "Cloud", at: dir.appendingPathComponent("Cloud.sqlite"))
/// try coordinator.addStore(.memory, configuration: "Cache")
/// ```
public final class StoreCoordinator: Sendable {
    /// The merged model every store is opened with.
    public let model: ObjectModel
    /// Each entity of `model` once, shared by the objects of every context (see `EntityHandle`).
    package let entityHandles: EntityHandles
    package let registry = Locked(StoreRegistry())
    /// Store fetches issued so far (one per store per `fetchRows`); tests use it to prove batching.
    package let storeFetchCount = Atomic<Int>(0)
    /// Where the coordinator logs (store changes, migration decisions and steps) and where its stores' traces
    /// go; silent unless a logger was given.
    package let logger: Logger
    /// Whether `logger` came from the caller (stores' trace lines then go to it).
    package let hasCallerLogger: Bool
    /// See `disposalHandler`.
    package let disposal = Locked<DisposalHandler?>(nil)
    /// The `EntityObject` types checked against the model (see `register(_:)`).
    package let registeredEntityTypes = Locked<Set<ObjectIdentifier>>([])
    /// Work done on a store's files before it opens (a migration chain's steps, set by `setMigrationChain`).
    package let storePreparation = Locked<StorePreparation?>(nil)
    /// Stores taken out by a move or replace, and the store now in their place (objects fetched before follow).
    /// The old store is kept too, so its `ObjectIdentifier` is never reused by another object.
    package let successors = Locked<[ObjectIdentifier: (old: any PersistentStore, new: any PersistentStore)]>([:])
    /// Whether `successors` has ever held an entry: lets `successor(of:)` skip its lock in the common case. An
    /// atomic, not a `Locked`: every `ManagedObject.store` reads it, and the lock was 500 instructions of each
    /// object's save in callgrind.
    package let hasSuccessors = Atomic<Bool>(false)
    /// Who is told about saves (see `addSaveObserver`).
    package let saveObservers = Locked(SaveObservers())
    /// Whether anyone observes saves, ordered against saves in flight (see `SaveGate`).
    package let saveGate = SaveGate()

    /// Creates a coordinator with no stores. It logs through `logger` (swift-log): stores added, migration
    /// decisions (identical, compatible, migratable or incompatible, and on what basis) and each migration step
    /// at `.info`, disposable stores recreated at `.notice`, and the trace lines of stores opened with a
    /// `StoreOptions.traceLevel` at `.debug`. Without a logger it is silent (trace lines then go to standard
    /// error).
    /// ```swift
    /// var logger = Logger(label: "app.persistence")
    /// logger.logLevel = .debug
    /// let coordinator = StoreCoordinator(model: model, logger: logger)
    /// try coordinator.addStore(.sqlite, configuration: "Cloud", at: url, options: StoreOptions(traceLevel: .statements))
    /// ```
    public init(model: ObjectModel, logger: Logger? = nil) {
        self.model = model
        self.entityHandles = EntityHandles(for: model)
        self.logger = logger ?? Logger(label: "switchyard.coordinator") { _ in SwiftLogNoOpLogHandler() }
        self.hasCallerLogger = logger != nil
    }

    /// Its stores are no longer open through it (see `OpenStoreFiles`).
    deinit {
        OpenStoreFiles.coordinatorEnded(ObjectIdentifier(self))
    }

    // MARK: - Stores

    /// Every store, in the order they were added.
    public var stores: [any PersistentStore] {
        registry.withLock { $0.stores }
    }

    /// The store with this `NSStoreUUID`.
    public func store(withIdentifier identifier: UUID) -> (any PersistentStore)? {
        registry.withLock { $0.stores.first { $0.identifier == identifier } }
    }

    /// The stores that hold rows of `entityName` (or, with `includingSubentities`, of any of its descendants).
    public func stores(serving entityName: String, includingSubentities: Bool = false) -> [any PersistentStore] {
        stores(serving: entityName, position: model.entityPosition(named: entityName), includingSubentities: includingSubentities)
    }

    /// `stores(serving:includingSubentities:)` for a caller that has looked the entity's position up already
    /// (`ObjectModel.entityPosition(named:)`; nil for a name the model lacks, whose stores are not remembered).
    package func stores(serving entityName: String, position: Int?, includingSubentities: Bool) -> [any PersistentStore] {
        let (known, stores, generation) = registry.withLock { registry in
            (position.flatMap { registry.route(entityPosition: $0, includingSubentities: includingSubentities) },
             registry.stores, registry.generation)
        }
        if let known { return known }
        let names = includingSubentities ? Set(model.entity(named: entityName)?.selfAndDescendantNames ?? [entityName]) : [entityName]
        let serving = stores.filter { store in store.entities.contains { names.contains($0.name) } }
        // Only the model's entities are remembered: any other name is a caller's mistake, and would grow the cache.
        if let position {
            registry.withLock {
                $0.remember(serving, entityPosition: position, includingSubentities: includingSubentities, generation: generation)
            }
        }
        return serving
    }

    /// The store a new object of `entityName` goes to when none was chosen: the only store serving the entity.
    /// None is `CoordinatorError.noStoreForEntity`; several is `.ambiguousStore`, naming `object` (what is being
    /// inserted) and the candidates.
    package func onlyStore(serving entityName: String, inserting object: String) throws -> any PersistentStore {
        let candidates = stores(serving: entityName)
        switch candidates.count {
        case 1: return candidates[0]
        case 0: throw CoordinatorError.noStoreForEntity(entity: entityName, configurations: model.configurations(containing: entityName))
        default:
            throw CoordinatorError.ambiguousStore(
                entity: entityName, object: object, stores: candidates.map { "\($0.displayPath) (\($0.configurationName))" })
        }
    }

    /// Opens (or creates) a store for `configuration` and adds it.
    ///
    /// A store written with another model is migrated in place when every change is inferable; a disposable
    /// one that cannot be is recreated (see `disposalHandler`).
    ///
    /// Errors: an unknown configuration, a file already added, a file that is not a store of that type, a
    /// non-disposable store that cannot be migrated (`StoreError.incompatibleModel`, with the report).
    @discardableResult
    public func addStore(
        _ type: StoreType, configuration: String, at url: URL? = nil, options: StoreOptions = .default
    ) throws -> any PersistentStore {
        try addStore(StoreDescription(type, configuration: configuration, url: url, options: options))
    }

    /// Opens (or creates) the described store and adds it.
    @discardableResult
    public func addStore(_ description: StoreDescription) throws -> any PersistentStore {
        try addStore(description, progress: nil)
    }

    package func addStore(_ description: StoreDescription, progress: (@Sendable (StoreLoadEvent) -> Void)?) throws -> any PersistentStore {
        try checkCanAdd(description)
        let store = try openMigrating(description, progress: progress)
        try register(store)
        return store
    }

    /// Adds a store opened elsewhere (it must have been opened with this coordinator's model).
    public func addStore(_ store: any PersistentStore) throws {
        try checkCanAdd(StoreDescription(store.type, configuration: store.configurationName, url: store.url))
        try register(store)
    }

    /// The store that took `store`'s place (after a move or replace), following chains; nil when `store` is
    /// still current.
    package func successor(of store: any PersistentStore) -> (any PersistentStore)? {
        // Acquiring: a reader that sees `true` also sees the entry stored before it (then reads it under the lock).
        guard hasSuccessors.load(ordering: .acquiring) else { return nil }
        return successors.withLock { map in
            var current: (any PersistentStore)? = nil
            var key = ObjectIdentifier(store)
            while let next = map[key]?.new {
                current = next
                key = ObjectIdentifier(next)
            }
            return current
        }
    }

    /// Puts `new` in `old`'s place in the store list (same position); with `followed`, objects fetched from
    /// `old` follow it to `new` (a move: same rows, same identifier).
    package func substitute(_ old: any PersistentStore, with new: any PersistentStore, followed: Bool) throws {
        try registry.withLock { registry in
            guard let i = registry.stores.firstIndex(where: { $0 === old }) else {
                throw CoordinatorError.storeNotInCoordinator(path: old.displayPath)
            }
            registry.stores[i] = new
            OpenStoreFiles.removed(old, from: self)
            OpenStoreFiles.added(new, to: self)
        }
        guard followed else { return }
        successors.withLock { $0[ObjectIdentifier(old)] = (old, new) }
        hasSuccessors.store(true, ordering: .releasing)
    }

    /// Removes a store from the coordinator (its files stay).
    public func removeStore(_ store: any PersistentStore) throws {
        try registry.withLock { registry in
            guard let i = registry.stores.firstIndex(where: { $0 === store }) else {
                throw CoordinatorError.storeNotInCoordinator(path: store.displayPath)
            }
            registry.stores.remove(at: i)
            OpenStoreFiles.removed(store, from: self)
        }
    }

    /// Loads several stores without blocking the caller, reporting progress and each store's outcome.
    ///
    /// Every description is attempted, whatever happens to the others (as Core Data calls
    /// `loadPersistentStores`' completion handler once per description): the result holds one
    /// `StoreLoadResult` per description, in `descriptions` order — loaded, migrated (with the report),
    /// recreated (a disposable store, with the report), failed (with the error, and the report when the
    /// model cannot be migrated) or cancelled. A store that failed is not added; the others are, so the
    /// stores added do not depend on the order of `descriptions`.
    ///
    /// Each store opens on a thread of its own, outside the cooperative pool (migrating it if needed, a batch at
    /// a time); `progress` receives events in order: opening, migrating entity X n of m rows, recreated (a
    /// disposable store), loaded, done.
    /// ```swift
    /// let results = await coordinator.loadStores(descriptions) { event in print(event) }
    /// let stores = try results.get()   // or look at each result's `outcome`
    /// ```
    ///
    /// Cancelling the calling task is honoured between stores and between migration batches: a migration
    /// that is stopped rolls back (the store keeps its old model and rows), and stores not yet attempted are
    /// reported `.cancelled` and not added. Stores already added stay added.
    ///
    /// With `movingEntities`, an entity the model moved from one configuration to another (both stores in
    /// `descriptions`) has its rows copied into its new store, in batches, before its old store is migrated
    /// (which drops them there); without it, they are dropped. When the new store fails to load or the rows
    /// cannot be copied, the old store is not opened (it would lose the rows) and fails with
    /// `CoordinatorError.cannotMoveEntity`.
    @discardableResult
    public func loadStores(
        _ descriptions: [StoreDescription], movingEntities: Bool = false,
        progress: @escaping @Sendable (StoreLoadEvent) -> Void = { _ in }
    ) async -> [StoreLoadResult] {
        let cancelled = Locked(false)
        return await withTaskCancellationHandler {
            await load(descriptions, movingEntities: movingEntities, progress: progress) {
                cancelled.withLock { $0 } || Task.isCancelled
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    private func load(
        _ descriptions: [StoreDescription], movingEntities: Bool, progress: @escaping @Sendable (StoreLoadEvent) -> Void,
        isCancelled: @escaping @Sendable () -> Bool
    ) async -> [StoreLoadResult] {
        let moves = movingEntities ? plannedMoves(descriptions) : []
        // Destinations of moves load first, so they can take the rows before their old stores drop them.
        let order = descriptions.indices.sorted { a, b in
            let (ma, mb) = (moves.contains { $0.destination == descriptions[a] }, moves.contains { $0.destination == descriptions[b] })
            return ma != mb ? ma : a < b
        }
        var results: [Int: StoreLoadResult] = [:]
        // Sources whose moved rows did not reach their new store: opening them would drop those rows.
        var blocked: [StoreDescription: any Error] = [:]
        for index in order {
            let description = descriptions[index]
            func finish(_ outcome: StoreLoadResult.Outcome, _ store: (any PersistentStore)? = nil) {
                results[index] = StoreLoadResult(storeDescription: description, outcome: outcome, store: store)
            }
            if isCancelled() {
                finish(.cancelled)
                continue
            }
            if let error = blocked[description] {
                finish(.failed(error, report: nil))
                continue
            }
            let path = description.displayLocation
            progress(.opening(path: path, configuration: description.configuration))
            do {
                // Opening (and migrating) blocks: the caller's other tasks keep running however long it takes.
                let (store, outcome) = try await Self.onOwnThread { [self] in
                    try checkCanAdd(description)
                    let opened = try openMigrating(description, progress: progress, isCancelled: isCancelled)
                    try register(opened.store)
                    return opened
                }
                progress(.loaded(path: path, configuration: description.configuration))
                finish(outcome, store)
                for move in moves where move.destination == description {
                    do {
                        try await Self.onOwnThread { try self.move(move, into: store, progress: progress) }
                    } catch {
                        blocked[move.source] = error
                    }
                }
            } catch is CancellationError {
                finish(.cancelled)
            } catch {
                var report: CompatibilityReport?
                if case let .incompatibleModel(_, _, r) = error as? StoreError { report = r }
                finish(.failed(error, report: report))
                for move in moves where move.destination == description {
                    blocked[move.source] = CoordinatorError.cannotMoveEntity(
                        entity: move.entity, from: move.source.url?.path ?? move.source.configuration, to: path,
                        reason: "its new store (configuration \(description.configuration)) failed to load, so its old store "
                            + "was not opened (migrating it would drop the rows): \(error)")
                }
            }
        }
        let outcomes = descriptions.indices.compactMap { results[$0] }
        progress(.done(storeCount: outcomes.addedStores.count))
        return outcomes
    }

    /// Runs blocking work on a thread of its own: not in the cooperative pool (nor Dispatch's global queues,
    /// which on Linux share the pool's threads), so the caller's other tasks keep running meanwhile.
    package static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        // The thread lets go of `body` (and so of the coordinator and stores it captures) before the caller resumes:
        // a coordinator the caller then drops is gone at once, not when this thread ends, so its store is not
        // taken for one another coordinator still has open (`OpenStoreFiles`).
        let work = Locked<(@Sendable () throws -> T)?>(body)
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                let result = Result { try work.withLock { held in defer { held = nil }; return held! }() }
                continuation.resume(with: result)
            }
            thread.name = "Switchyard.loadStores"
            thread.start()
        }
    }

    // MARK: - Private

    private func checkCanAdd(_ description: StoreDescription) throws {
        guard model.configurationNames.contains(description.configuration) else {
            throw CoordinatorError.unknownConfiguration(name: description.configuration, available: model.configurationNames)
        }
        if description.type != .memory, description.url == nil {
            throw CoordinatorError.missingURL(type: description.type, configuration: description.configuration)
        }
        if let url = description.url {
            let key = Self.canonicalPath(url)
            if let existing = stores.first(where: { $0.url.map(Self.canonicalPath) == key }) {
                throw CoordinatorError.storeAlreadyAdded(path: description.displayLocation, configuration: existing.configurationName)
            }
        }
    }

    private func register(_ store: any PersistentStore) throws {
        try registry.withLock { registry in
            let stores = registry.stores
            if let url = store.url, stores.contains(where: { $0.url.map(Self.canonicalPath) == Self.canonicalPath(url) }) {
                throw CoordinatorError.storeAlreadyAdded(path: store.displayPath, configuration: store.configurationName)
            }
            if let existing = stores.first(where: { $0.identifier == store.identifier }) {
                throw CoordinatorError.duplicateStoreIdentifier(
                    path: store.displayPath, identifier: store.identifier, existing: existing.displayPath)
            }
            registry.stores.append(store)
            // Recorded under the same lock, so a `removeStore` racing this add cannot run its `removed` first and
            // leave an entry for a store no longer here (entries last until this coordinator goes).
            OpenStoreFiles.added(store, to: self)
        }
        if hasCallerLogger {
            (store as? any TracingStore)?.tracer.use(logger)
        }
        logger.info("added store", metadata: ["path": "\(store.displayPath)", "configuration": "\(store.configurationName)"])
    }

    package func openStore(_ d: StoreDescription, migrationProgress: MigrationProgressHandler?) throws -> any PersistentStore {
        switch d.type {
        case .memory:
            return try InMemoryStore(model: model, configuration: d.configuration, options: d.options)
        case .sqlite:
            guard let url = d.url else { throw CoordinatorError.missingURL(type: d.type, configuration: d.configuration) }
            return try SQLiteStore(
                url: url, model: model, configuration: d.configuration, options: d.options, migrationProgress: migrationProgress)
        case .lmdb:
            guard let url = d.url else { throw CoordinatorError.missingURL(type: d.type, configuration: d.configuration) }
            return try LMDBStore(
                url: url, model: model, configuration: d.configuration, options: d.options, migrationProgress: migrationProgress)
        case .postgreSQL:
            guard let url = d.url else { throw CoordinatorError.missingURL(type: d.type, configuration: d.configuration) }
            guard ServerStoreOpeners.registry.withLock({ $0[.postgreSQL] }) != nil else {
                throw CoordinatorError.unsupportedStoreType(
                    .postgreSQL,
                    reason: "PostgreSQL stores come with the SwitchyardPostgreSQL product: import SwitchyardPostgreSQL and call "
                        + "StoreCoordinator.registerPostgreSQL() before loading descriptions (addStore(.postgreSQL, configuration:, url:) does it)")
            }
            return try ServerStoreOpeners.opener(for: .postgreSQL, url: url, configuration: d.configuration)(url, model, d.configuration, d.options, migrationProgress)
        }
    }

    /// What `storePreparation` runs: the description, the migration progress handler, the load events. It
    /// returns what its migration steps changed, or nil when it migrated nothing.
    package typealias StorePreparation = @Sendable (
        StoreDescription, MigrationProgressHandler?, (@Sendable (StoreLoadEvent) -> Void)?
    ) throws -> CompatibilityReport?

    /// What makes two store locations the same store: the resolved file path, or for a server store its URL
    /// without the password (host, port, database and schema).
    package static func canonicalPath(_ url: URL) -> String {
        guard url.isFileURL else { return StoreDescription.displayLocation(type: .postgreSQL, url: url, configuration: "") }
        return url.standardizedFileURL.resolvingSymlinksInPath().path
    }
}

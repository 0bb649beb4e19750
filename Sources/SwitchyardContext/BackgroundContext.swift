import Foundation
import SwitchyardCoordinator
import SwitchyardStores

// MARK: - BackgroundContext

/// An `ObjectContext` for `async` code, like a Core Data context of `.privateQueueConcurrencyType` with its
/// `perform`, or GRDB's async `read`/`write`: the context lives on a thread of its own, so its blocking file
/// I/O never occupies a thread of Swift's cooperative pool, and each `perform` runs after the previous one, on
/// that thread.
///
/// What leaves a `perform` must be `Sendable`: return `ObjectID`s or plain values, not `ManagedObject`s, and
/// look objects up again by ID in the context that needs them.
///
/// ```swift
/// let background = BackgroundContext(coordinator: coordinator)
/// let id = try await background.perform { context in
///     let chat = try context.insert("Chat")
///     try chat.set("title", "Team")
///     try context.save()
///     return chat.objectID
/// }
/// let titles = try await background.perform { context in
///     try context.fetch(FetchRequest(entityName: "Chat")).map { try $0.get("title", as: String.self) }
/// }
/// ```
///
/// Cancellation: a `perform` whose task is already cancelled when its turn comes throws `CancellationError`
/// without running its body; a body that runs long can call `try Task.checkCancellation()` between steps.
/// On a PostgreSQL store, cancelling the task also stops the statement the body waits for (the server cancels
/// it) and makes the body's later store calls throw `CancellationError`; a save stopped that way rolls back
/// that store's changes whole (a store committed earlier in the save stays committed, as after any failed
/// save) and the context keeps its changes; a commit that has begun completes. Calls to SQLite, LMDB
/// and memory stores are local and run to their end.
public actor BackgroundContext {
    /// The coordinator whose stores the context reads and writes.
    public nonisolated let coordinator: StoreCoordinator
    private let executor: DedicatedThreadExecutor
    private let context: ObjectContext

    /// The executor every `perform` runs on: the context's own thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A context on `coordinator`, with a thread of its own named `name`.
    public init(coordinator: StoreCoordinator, name: String = "Switchyard.BackgroundContext") {
        self.coordinator = coordinator
        executor = DedicatedThreadExecutor(name: name)
        context = ObjectContext(coordinator: coordinator)
    }

    deinit { executor.shutdown() }

    /// Runs `body` with the context on the context's thread, after any `perform` called before it, and returns
    /// its result. Changes stay in the context until the body calls `save()`, so a later `perform` sees them.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled before the body starts (the body does
    ///   not run) or, on a PostgreSQL store, while it waits for the server; or whatever the body throws.
    ///
    /// The body is `sending`: it may be written in main-actor code (a view model's method) and capture that
    /// code's values, which then belong to the context's thread.
    public func perform<T: Sendable>(_ body: sending (ObjectContext) throws -> T) async throws -> T {
        try Task.checkCancellation()
        let interruption = StoreInterruption()
        return try await withTaskCancellationHandler {
            try StoreInterruption.withCurrent(interruption) { try body(context) }
        } onCancel: {
            interruption.cancel()
        }
    }
}

extension StoreCoordinator {
    /// Runs `body` with a new context on a thread of its own and returns its result, like Core Data's
    /// `NSPersistentContainer.performBackgroundTask`: for one-off work from `async` code that must not block
    /// the cooperative pool. Save in the body to keep its changes; the context goes away when it returns.
    ///
    /// ```swift
    /// let count = try await coordinator.performBackgroundTask { context in
    ///     try context.count(FetchRequest(entityName: "Message"))
    /// }
    /// ```
    public func performBackgroundTask<T: Sendable>(_ body: sending (ObjectContext) throws -> T) async throws -> T {
        try await BackgroundContext(coordinator: self, name: "Switchyard.performBackgroundTask").perform(body)
    }
}

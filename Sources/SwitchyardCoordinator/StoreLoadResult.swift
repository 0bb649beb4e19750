// MARK: - StoreLoadResult
import SwitchyardModel
import SwitchyardStores

/// What `StoreCoordinator.loadStores` did with one store description: like the per-description completion
/// handler of Core Data's `loadPersistentStores`, one result per description, in description order.
///
/// ```swift
/// for result in await coordinator.loadStores(descriptions) {
///     if case .failed(let error, _) = result.outcome { print(result.storeDescription.configuration, error) }
/// }
/// ```
public struct StoreLoadResult: Sendable {
    /// How the store was loaded, or why it was not.
    public enum Outcome: Sendable {
        /// Opened (or created) as it was: no migration was needed.
        case loaded
        /// Opened and migrated in place to the coordinator's model; the report says what changed.
        case migrated(CompatibilityReport)
        /// A disposable store whose model could not be migrated: recreated empty (or after quarantine).
        case recreated(CompatibilityReport)
        /// Not added. `report` is the compatibility report when the store's model cannot be migrated
        /// (`StoreError.incompatibleModel`); the store's files were not changed.
        case failed(any Error, report: CompatibilityReport?)
        /// Not attempted (or a migration stopped and rolled back) because the calling task was cancelled:
        /// not added, files unchanged.
        case cancelled

        /// The outcome without its payload, for comparisons.
        public var kind: Kind {
            switch self {
            case .loaded: return .loaded
            case .migrated: return .migrated
            case .recreated: return .recreated
            case .failed: return .failed
            case .cancelled: return .cancelled
            }
        }
    }

    /// An outcome without its payload.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `Outcome.loaded`.
        case loaded
        /// `Outcome.migrated`.
        case migrated
        /// `Outcome.recreated`.
        case recreated
        /// `Outcome.failed`.
        case failed
        /// `Outcome.cancelled`.
        case cancelled
    }

    /// The description this result is for.
    public let storeDescription: StoreDescription
    /// What happened to it.
    public let outcome: Outcome
    /// The store, added to the coordinator; nil when it was not added (failed or cancelled).
    public let store: (any PersistentStore)?

    /// Creates a result (the coordinator makes them; public for tests and wrappers).
    public init(storeDescription: StoreDescription, outcome: Outcome, store: (any PersistentStore)?) {
        self.storeDescription = storeDescription
        self.outcome = outcome
        self.store = store
    }

    /// The error that kept the store out: the failure, `CancellationError` when cancelled, nil when added.
    public var error: (any Error)? {
        switch outcome {
        case let .failed(error, _): return error
        case .cancelled: return CancellationError()
        case .loaded, .migrated, .recreated: return nil
        }
    }

    /// The compatibility report: what a migration changed, why a disposable store was recreated, or why the
    /// store's model cannot be migrated; nil otherwise.
    public var report: CompatibilityReport? {
        switch outcome {
        case let .migrated(report), let .recreated(report): return report
        case let .failed(_, report): return report
        case .loaded, .cancelled: return nil
        }
    }

    /// The added store, or the error that kept it out (as `Result.get()`).
    public func get() throws -> any PersistentStore {
        if let store { return store }
        throw error ?? CancellationError()
    }
}

extension Array where Element == StoreLoadResult {
    /// The stores that were added, in description order.
    public var addedStores: [any PersistentStore] { compactMap(\.store) }

    /// The added stores in description order, or the first failure's error (`CancellationError` when the
    /// first store left out was cancelled): the all-or-error view of a load.
    public func get() throws -> [any PersistentStore] {
        try map { try $0.get() }
    }
}

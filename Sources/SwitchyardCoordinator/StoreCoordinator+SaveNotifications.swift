import Foundation
import SwitchyardModel

// MARK: - Save notifications

extension StoreCoordinator {
    /// The observers of saves, by token (see `addSaveObserver`).
    package struct SaveObservers: Sendable {
        package var callbacks: [UInt64: @Sendable (SaveNotification) -> Void] = [:]
        package var next: UInt64 = 0
    }

    /// A stream of every later save's changes through this coordinator (from any context, on any task), in the
    /// order the saves committed: Core Data's did-save notification as an `AsyncSequence`. The stream buffers
    /// what it has not delivered; it ends when the consuming task is cancelled or drops it.
    ///
    /// ```swift
    /// for await saved in coordinator.saveNotifications() {
    ///     try context.mergeChanges(from: saved)
    /// }
    /// ```
    public func saveNotifications() -> AsyncStream<SaveNotification> {
        AsyncStream { continuation in
            let observation = addSaveObserver { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Calls `observer` after every later save through this coordinator, on the thread that saved, before
    /// `save()` returns; for synchronous code. Keep the returned observation: releasing it (or `cancel()`)
    /// removes the observer. An observer must not save through the same coordinator.
    public func addSaveObserver(_ observer: @escaping @Sendable (SaveNotification) -> Void) -> SaveObservation {
        let token = saveObservers.withLock { observers -> UInt64 in
            observers.next += 1
            observers.callbacks[observers.next] = observer
            return observers.next
        }
        // Saves that began before this, unobserved, finish first: whatever they wrote is visible to a read
        // made after this returns, and every later save reaches the observer.
        saveGate.addObserver()
        return SaveObservation { [weak self] in
            guard let self else { return }
            saveObservers.withLock { observers in observers.callbacks[token] = nil }
            saveGate.removeObserver()
        }
    }

    /// Runs a save's writes (a context's save or a batch) inside the save gate: `body` learns whether anyone
    /// observes (collect changes only then) and appends what each committed store wrote to `published`, which is
    /// published afterwards, also when `body` throws after a store committed.
    package func observingSave<T>(_ body: (_ observing: Bool, _ published: inout [StoreSaveChanges]) throws -> T) rethrows -> T {
        let observing = saveGate.begin()
        var published: [StoreSaveChanges] = []
        defer {
            saveGate.end(observed: observing)
            if observing { publish(SaveNotification(coordinator: self, stores: published)) }
        }
        return try body(observing, &published)
    }

    /// Delivers `notification` to every observer registered now.
    package func publish(_ notification: SaveNotification) {
        guard !notification.stores.isEmpty else { return }
        let callbacks = saveObservers.withLock { observers in observers.callbacks.sorted { $0.key < $1.key }.map(\.value) }
        for callback in callbacks { callback(notification) }
    }
}

import Foundation
import SwitchyardModel

// MARK: - StoreInterruption

/// How a store call learns that the task it runs for was cancelled while it runs.
///
/// `BackgroundContext.perform` makes one for its body and cancels it from the task's cancellation handler; a
/// store that can stop a running call (PostgreSQL cancels the statement on the server) registers how with
/// `whileRunning(interrupt:_:)`. Outside a `perform` there is none (`current` is nil) and store calls run to
/// their end, as before.
///
/// `current` belongs to the thread that runs the body (a `perform` body is synchronous, on its context's
/// thread), not to the task: a `Task` the body or a save's observer starts (a live query's refresh) inherits
/// task-locals, and must not be stopped by, or take over, the body's interruption.
///
/// Once cancelled, the store calls made under it throw `CancellationError` before they start, and a running
/// statement is asked to stop; what ends a transaction (`COMMIT`, `ROLLBACK`) is made with
/// `StoreInterruption.uninterruptible`, so a save is kept whole or not at all.
package final class StoreInterruption: Sendable {
    private static let key = "switchyard.StoreInterruption"

    /// The interruption of the body running on this thread, if its store calls can be interrupted.
    package static var current: StoreInterruption? {
        Thread.current.threadDictionary[key] as? StoreInterruption
    }

    /// Runs `body` with `interruption` as this thread's `current`.
    package static func withCurrent<T>(_ interruption: StoreInterruption?, _ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[key]
        dictionary[key] = interruption
        defer { dictionary[key] = previous }
        return try body()
    }

    private struct State {
        var isCancelled = false
        var interrupt: (@Sendable () -> Void)?
    }
    private let state = Locked(State())

    package init() {}

    /// True once `cancel()` ran.
    package var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Marks the interruption cancelled and calls the running call's `interrupt`, if any (once).
    /// Called from the cancelling task's thread: `interrupt` must not block. It runs with the state locked, so
    /// `whileRunning` cannot return in the middle of it: once `whileRunning` returns, an interrupt that was
    /// called has done what it does (PostgreSQL's records the cancel request its statement waits for).
    package func cancel() {
        state.withLock { state in
            guard !state.isCancelled else { return }
            state.isCancelled = true
            state.interrupt?()
            state.interrupt = nil
        }
    }

    /// Throws `CancellationError` once cancelled.
    package func check() throws {
        if isCancelled { throw CancellationError() }
    }

    /// Runs `body` with `interrupt` registered, so a `cancel()` while `body` runs calls it; throws
    /// `CancellationError` without running `body` when already cancelled. Calls do not nest: the store
    /// registers once per statement.
    package func whileRunning<T>(interrupt: @escaping @Sendable () -> Void, _ body: () throws -> T) throws -> T {
        try state.withLock { state in
            if state.isCancelled { throw CancellationError() }
            state.interrupt = interrupt
        }
        defer { state.withLock { $0.interrupt = nil } }
        return try body()
    }

    /// Runs `body` with no interruption: what ends a transaction, and clean-up after a failure.
    package static func uninterruptible<T>(_ body: () throws -> T) rethrows -> T {
        try withCurrent(nil) { try body() }
    }
}

import Foundation

// MARK: - Locked

/// A value guarded by a lock, so a `Sendable` type can hold mutable state.
/// Kept tiny and internal: every access is a short critical section, never a call out to user code.
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline var value: Value
    @usableFromInline let lock = NSLock()

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    @inlinable package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

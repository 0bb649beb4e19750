#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Locked

/// A value guarded by a lock, so a `Sendable` type can hold mutable state.
/// Kept tiny and internal: every access is a short critical section, never a call out to user code.
///
/// The class owns one pthread mutex, made in `init` and destroyed in `deinit`. With an `NSLock` an access
/// cost about 260 instructions in callgrind (the lock object's two calls each way, and a dynamic exclusivity
/// check on the value), and an indexed LMDB lookup through a context takes nine. (The standard library's
/// `Mutex` is not used: its `sending` closure needs a `Sendable` value, and wrapped to allow any value its
/// generic metadata was looked up on every access, costing more than `NSLock`.)
@usableFromInline package final class Locked<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: the value is read and written only inside `withLock`, under the mutex.
    // `@exclusivity(unchecked)`: the mutex already makes each access exclusive; the dynamic check cost more
    // than the lock.
    @usableFromInline @exclusivity(unchecked) var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        Self.check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
    }

    deinit {
        Self.check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
        defer { Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }
        return try body(&value)
    }

    /// A failing call on a mutex this class initialized, and locks only inside `withLock`, is a programmer error
    /// (a default mutex locked twice on one thread hangs rather than failing, as `NSLock` did).
    @inlinable static func check(_ code: Int32, _ call: StaticString) {
        precondition(code == 0, "\(call) failed with \(code)")
    }
}

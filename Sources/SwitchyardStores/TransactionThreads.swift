import Foundation

/// The threads with a read or write of one store in flight, one entry per transaction (a thread inside two
/// reads is listed twice). A store's close waits until this is empty, so it first asks whether the closing
/// thread is listed: a close from inside the store's own read (a `fetch(_:each:)` closure) would otherwise wait
/// for itself forever. Not thread-safe: its owner keeps it under its own lock.
package struct TransactionThreads {
    private var threads: [pthread_t] = []

    package init() {
        threads.reserveCapacity(4)
    }

    /// No transaction is in flight.
    package var isEmpty: Bool { threads.isEmpty }

    /// Records a transaction begun on the calling thread.
    package mutating func enter() {
        threads.append(pthread_self())
    }

    /// Forgets one transaction of the calling thread (ended there: every store transaction begins and ends in
    /// one synchronous call).
    package mutating func leave() {
        let me = pthread_self()
        if let i = threads.lastIndex(where: { pthread_equal($0, me) != 0 }) {
            threads.swapAt(i, threads.count - 1)
        }
        if !threads.isEmpty { threads.removeLast() }
    }

    /// Whether the calling thread has a transaction in flight.
    package var containsCurrentThread: Bool {
        let me = pthread_self()
        return threads.contains { pthread_equal($0, me) != 0 }
    }
}

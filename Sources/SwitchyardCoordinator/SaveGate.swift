import Foundation

// MARK: - SaveGate

/// Orders the registration of save observers against saves in flight, so an observer never misses a save
/// that its own first read could not see yet: a save asks at its start whether anyone observes (collecting
/// its changes only then), and adding an observer waits for the saves that started unobserved to finish.
/// A live query that registers and then fetches therefore either sees a save's rows or gets its notification.
package final class SaveGate: @unchecked Sendable {
    // @unchecked Sendable: `observers` and `unobservedInFlight` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var observers = 0
    private var unobservedInFlight = 0

    package init() {}

    /// A save (or batch) begins: whether anyone observes. An unobserved save counts as in flight until `end`.
    package func begin() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if observers > 0 { return true }
        unobservedInFlight += 1
        return false
    }

    /// The save that `begin` answered `observed` for is over (committed or failed).
    package func end(observed: Bool) {
        guard !observed else { return }
        condition.lock()
        unobservedInFlight -= 1
        if unobservedInFlight == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// An observer is added: later saves collect their changes; waits for saves that began unobserved.
    package func addObserver() {
        condition.lock()
        observers += 1
        while unobservedInFlight > 0 { condition.wait() }
        condition.unlock()
    }

    /// An observer is removed.
    package func removeObserver() {
        condition.lock()
        observers -= 1
        condition.unlock()
    }
}

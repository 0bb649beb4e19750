import Foundation
import SwitchyardStores

// MARK: - ObjectHome

/// An object's context and store, shared by every object a context holds in one store: one word in each
/// object instead of three (a weak context and a store existential), which a million fetched objects feel.
///
/// A context keeps one home per store (and one for objects not assigned to a store yet); an object moves to
/// another home when it is assigned, moved to a successor store, or detached from its context. Not `Sendable`,
/// like the objects and the context it points to.
package final class ObjectHome {
    /// The context that made this home and records it (see `ObjectContext.home(for:)`), valid while
    /// `ownerIsAlive`; unretained rather than `weak`, so that reading it costs no atomic load of a side table,
    /// and the context, which nothing then refers to weakly, retains and releases without one (a weak load and a
    /// side-table release were about 110 of the 850 instructions of setting an attribute, callgrind). Never read
    /// once `ownerIsAlive` is false: the context's `deinit` clears it on every home it made, before its memory
    /// goes. Objects, their homes and their context are used from one task (none of them is `Sendable`), so
    /// neither deinit can race the other's reads.
    private let owner: Unmanaged<ObjectContext>?
    /// Whether `owner` is still alive (false from the start for a home no context made).
    @exclusivity(unchecked) private var ownerIsAlive: Bool
    /// Whether the objects here belong to `owner`: false for a home without a context, and from the moment
    /// the context is deinitialized.
    @exclusivity(unchecked) package private(set) var isLive: Bool
    /// The store the objects live in (or are assigned to before their first save); nil when not known yet.
    package let store: (any PersistentStore)?

    /// A home of `context`'s objects, which `context` must record or hold (`ObjectContext.home(for:)`, its
    /// unassigned home): its `contextDidEnd` is what keeps this home from reaching the context after it is gone.
    /// Internal, so nothing outside the context's module makes one.
    init(recordedBy context: ObjectContext, store: (any PersistentStore)?) {
        self.owner = Unmanaged.passUnretained(context)
        self.ownerIsAlive = true
        self.isLive = true
        self.store = store
    }

    /// A home with no context, nothing records.
    package init(withoutContext store: (any PersistentStore)?) {
        self.owner = nil
        self.ownerIsAlive = false
        self.isLive = false
        self.store = store
    }

    /// A home without a context, for objects `owner` let go of, recorded by `owner` so that they share it (as
    /// for `init(recordedBy:store:)`, `owner` must record it).
    init(detachedFrom owner: ObjectContext, store: (any PersistentStore)?) {
        self.owner = Unmanaged.passUnretained(owner)
        self.ownerIsAlive = true
        self.isLive = false
        self.store = store
    }

    /// Tells the context that recorded this home to forget it. The context holds its homes unretained, not
    /// weakly: a weak reference gave every home a side table, so each object's retain of its home took
    /// the slow path (callgrind and `perf`: about 2% of inserting and saving objects).
    deinit {
        if ownerIsAlive, let owner { owner.takeUnretainedValue().homeDidEnd(self) }
    }

    /// The context; nil once it is gone, or for an object taken out of it.
    package var context: ObjectContext? {
        @inline(__always) get { isLive ? owner?.takeUnretainedValue() : nil }
    }

    /// The context unretained, for a caller that borrows it (`Unmanaged._withUnsafeGuaranteedRef`) while its
    /// object, and so this home and the context, stay alive; nil as for `context`.
    package var unretainedContext: Unmanaged<ObjectContext>? {
        @inline(__always) get { isLive ? owner : nil }
    }

    /// Called by the context's `deinit`: the objects of this home have no context from now on.
    package func contextDidEnd() {
        isLive = false
        ownerIsAlive = false
    }
}

@available(*, unavailable, message: "an ObjectHome belongs to one context's objects")
extension ObjectHome: @unchecked Sendable {}

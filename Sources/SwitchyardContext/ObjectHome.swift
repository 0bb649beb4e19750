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
    /// The context, valid while `isLive`; unretained rather than `weak`, so that reading it costs no
    /// atomic load of a side table, and the context, which nothing then refers to weakly, retains and
    /// releases without one (a weak load and a side-table release were about 110 of the 850 instructions of
    /// setting an attribute, callgrind). Never read once `isLive` is false: the context's `deinit` clears it
    /// on every home it made, before its memory goes. Objects, their homes and
    /// their context are used from one task (none of them is `Sendable`), so the deinit cannot race a read.
    private let reference: Unmanaged<ObjectContext>?
    /// False for a home without a context, and from the moment its context is deinitialized.
    @exclusivity(unchecked) package private(set) var isLive: Bool
    /// The store the objects live in (or are assigned to before their first save); nil when not known yet.
    package let store: (any PersistentStore)?

    package init(context: ObjectContext?, store: (any PersistentStore)?) {
        self.reference = context.map { Unmanaged.passUnretained($0) }
        self.isLive = context != nil
        self.store = store
    }

    /// The context; nil once it is gone, or for an object taken out of it.
    package var context: ObjectContext? {
        @inline(__always) get { isLive ? reference?.takeUnretainedValue() : nil }
    }

    /// Called by the context's `deinit`: the objects of this home have no context from now on.
    package func contextDidEnd() {
        isLive = false
    }
}

@available(*, unavailable, message: "an ObjectHome belongs to one context's objects")
extension ObjectHome: @unchecked Sendable {}

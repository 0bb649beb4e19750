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
    /// The context; nil once it is gone, or for an object taken out of it. Set only in `init`, so no access can
    /// overlap another: reading it (every attribute set asks for the live context) skips the run-time
    /// exclusivity check a class's `var` pays on every read (about 75 instructions, callgrind). (A `weak let`
    /// would say the same, but needs a newer compiler than the package's tools version, 6.1.)
    @exclusivity(unchecked) package private(set) weak var context: ObjectContext?
    /// The store the objects live in (or are assigned to before their first save); nil when not known yet.
    package let store: (any PersistentStore)?

    package init(context: ObjectContext?, store: (any PersistentStore)?) {
        self.context = context
        self.store = store
    }
}

@available(*, unavailable, message: "an ObjectHome belongs to one context's objects")
extension ObjectHome: @unchecked Sendable {}

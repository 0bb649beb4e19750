import SwitchyardModel

// MARK: - KeyPathNameCache

/// Each `EntityObject` type's `keyPathNames`, read once per type.
///
/// Generated types (and the README's example) declare `keyPathNames` as a computed `static var` (a `static let`
/// of key paths is not concurrency-safe in Swift 6), so every read built the key paths and a dictionary of them:
/// for a typed predicate, a quarter of an indexed LMDB lookup in callgrind. The key paths are immutable objects
/// and the dictionary a value copied out under the lock, so sharing them between threads is safe.
enum KeyPathNameCache {
    /// One type's names, boxed so that reading them back is a class cast rather than a dictionary cast.
    private final class Names<E: EntityObject> {
        let byKeyPath: [PartialKeyPath<E>: String]
        init(_ byKeyPath: [PartialKeyPath<E>: String]) { self.byKeyPath = byKeyPath }
    }

    /// By type: each value is the `Names<E>` of the type `E` its key identifies.
    private static let byType = Locked<[ObjectIdentifier: AnyObject]>([:])

    /// `E.keyPathNames`, as first read.
    static func names<E: EntityObject>(of type: E.Type) -> [PartialKeyPath<E>: String] {
        let id = ObjectIdentifier(type)
        if let cached = byType.withLock({ $0[id] }) as? Names<E> { return cached.byKeyPath }
        let names = E.keyPathNames
        byType.withLock { $0[id] = Names(names) }
        return names
    }
}

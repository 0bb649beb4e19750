import SwitchyardModel
import SwitchyardQuery

// MARK: - KeyPathNameCache

/// The model names of each `EntityObject` type's key paths (`keyPathNames`), read once per type.
///
/// Generated types (and the README's example) declare `keyPathNames` as a computed `static var` (a `static let`
/// of key paths is not concurrency-safe in Swift 6), so every read built the key paths and a dictionary of them:
/// for a typed predicate, a quarter of an indexed LMDB lookup in callgrind. A key path found once is then found
/// again by identity: a key path literal the runtime can cache is one object, made once, and hashing its address is
/// a fraction of hashing the key path's components (about 800 instructions) plus casting the cached dictionary back
/// to its type (600 more), which a predicate such as `\.name == name` paid on every call. Key paths made anew each
/// time (built with `appending`, or a literal inside a generic function or with subscript arguments) are found by
/// value, as before, once `identityLimit` of a type's are remembered.
enum KeyPathNameCache {
    /// One type's names: as listed, and by the identity of key paths already looked up.
    private struct Names {
        /// `E.keyPathNames` for the type `E` these names are of (as `[PartialKeyPath<E>: String]`).
        let listed: [AnyKeyPath: String]
        /// Key path objects seen, each held (so its address names no other key path) with its name and that name
        /// as a predicate operand (made once: an operand is two allocations, a fifth of building `\.name == x`).
        var seen: [ObjectIdentifier: (keyPath: AnyKeyPath, name: String, operand: PredicateOperand)] = [:]
    }

    /// Key paths remembered by identity per type, at most: key paths built at run time (`appending`) are new
    /// objects each time and must not grow the cache without bound; past this they are found by value.
    private static let identityLimit = 256

    /// By type (`ObjectIdentifier` of the `EntityObject` type).
    private static let byType = Locked<[ObjectIdentifier: Names]>([:])

    /// The model name `E.keyPathNames` gives `keyPath`, nil when it lists none.
    static func name<E: EntityObject>(of keyPath: PartialKeyPath<E>) -> String? {
        lookUp(keyPath)?.name
    }

    /// The key path operand (`.keyPath([name])`) of the model name `E.keyPathNames` gives `keyPath`.
    static func operand<E: EntityObject>(of keyPath: PartialKeyPath<E>) -> PredicateOperand? {
        lookUp(keyPath)?.operand
    }

    private static func lookUp<E: EntityObject>(_ keyPath: PartialKeyPath<E>) -> (name: String, operand: PredicateOperand)? {
        let type = ObjectIdentifier(E.self)
        let identity = ObjectIdentifier(keyPath)
        if let found = byType.withLock({ $0[type]?.seen[identity] }) { return (found.name, found.operand) }
        // Built outside the lock: `keyPathNames` is the user's code.
        let listed = byType.withLock { $0[type]?.listed } ?? Dictionary(uniqueKeysWithValues: E.keyPathNames.map { ($0.key as AnyKeyPath, $0.value) })
        guard let name = listed[keyPath] else {
            byType.withLock { cache in if cache[type] == nil { cache[type] = Names(listed: listed) } }
            return nil
        }
        let operand = PredicateOperand.keyPath([name])
        byType.withLock { cache in
            // In place: a copy of the entry would copy its `seen` table at every insert.
            if cache[type] == nil { cache[type] = Names(listed: listed) }
            if cache[type]!.seen.count < identityLimit { cache[type]!.seen[identity] = (keyPath, name, operand) }
        }
        return (name, operand)
    }
}

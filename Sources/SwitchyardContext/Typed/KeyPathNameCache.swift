import SwitchyardModel
import SwitchyardQuery
import Synchronization

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
    /// A key path object seen, of one type: the pair of identities one lookup hashes (it hashed the type and
    /// then, in that type's own table, the key path: two finds, about 270 instructions of an indexed lookup).
    private struct Seen: Hashable {
        let type: ObjectIdentifier
        let keyPath: ObjectIdentifier
    }

    /// A key path object seen, held (so its address names no other key path) with its name and that name as a
    /// predicate operand (made once: an operand is two allocations, a fifth of building `\.name == x`). Never
    /// freed once made: `Tables.seen` keeps every entry for the life of the process (see `last`).
    // @unchecked: every property is a `let` set in `init`, before the entry is shared, and `AnyKeyPath` (not
    // `Sendable`) is only held and compared by identity (`===`), never read or applied through the entry.
    private final class Entry: @unchecked Sendable {
        let type: ObjectIdentifier
        let keyPath: AnyKeyPath
        let name: String
        let operand: PredicateOperand

        init(type: ObjectIdentifier, keyPath: AnyKeyPath, name: String, operand: PredicateOperand) {
            self.type = type
            self.keyPath = keyPath
            self.name = name
            self.operand = operand
        }
    }

    /// What the cache holds, behind one lock.
    private struct Tables {
        /// `E.keyPathNames` of each type `E` looked up (as `[PartialKeyPath<E>: String]`), by its identity.
        var listed: [ObjectIdentifier: [AnyKeyPath: String]] = [:]
        /// Every entry made, by type and key path identity. Only ever grows (at most `identityLimit` a type).
        var seen: [Seen: Entry] = [:]
        /// How many of `seen` are of each type (see `identityLimit`).
        var seenCount: [ObjectIdentifier: Int] = [:]
    }

    /// Key paths remembered by identity per type, at most: key paths built at run time (`appending`) are new
    /// objects each time and must not grow the cache without bound; past this they are found by value.
    private static let identityLimit = 256

    private static let tables = Locked(Tables())

    /// The address of the entry found or made last (0: none yet), read without the lock: a loop building
    /// `\.name == x` finds the same key path again, and the lock and the hashed find were about 600
    /// instructions of an indexed lookup (callgrind). Safe to dereference: an entry is published here
    /// (releasing) only once made, and no entry is ever freed (`Tables.seen` keeps them all).
    private static let last = Atomic<UInt>(0)

    /// The model name `E.keyPathNames` gives `keyPath`, nil when it lists none.
    static func name<E: EntityObject>(of keyPath: PartialKeyPath<E>) -> String? {
        lookUp(keyPath)?.name
    }

    /// The key path operand (`.keyPath([name])`) of the model name `E.keyPathNames` gives `keyPath`.
    static func operand<E: EntityObject>(of keyPath: PartialKeyPath<E>) -> PredicateOperand? {
        lookUp(keyPath)?.operand
    }

    private static func lookUp<E: EntityObject>(_ keyPath: PartialKeyPath<E>) -> Entry? {
        let type = ObjectIdentifier(E.self)
        if let address = UnsafeRawPointer(bitPattern: last.load(ordering: .acquiring)) {
            let entry = Unmanaged<Entry>.fromOpaque(address).takeUnretainedValue()
            if entry.keyPath === keyPath, entry.type == type { return entry }
        }
        let key = Seen(type: type, keyPath: ObjectIdentifier(keyPath))
        if let found = tables.withLock({ $0.seen[key] }) { return remembered(found) }
        // Built outside the lock: `keyPathNames` is the user's code.
        let listed = tables.withLock { $0.listed[type] } ?? Dictionary(uniqueKeysWithValues: E.keyPathNames.map { ($0.key as AnyKeyPath, $0.value) })
        guard let name = listed[keyPath] else {
            tables.withLock { tables in if tables.listed[type] == nil { tables.listed[type] = listed } }
            return nil
        }
        let made = Entry(type: type, keyPath: keyPath, name: name, operand: .keyPath([name]))
        let kept = tables.withLock { tables -> Bool in
            if tables.listed[type] == nil { tables.listed[type] = listed }
            if tables.seen[key] != nil { return false }
            guard tables.seenCount[type, default: 0] < identityLimit else { return false }
            tables.seen[key] = made
            tables.seenCount[type, default: 0] += 1
            return true
        }
        // Only an entry `seen` keeps may be published (see `last`).
        return kept ? remembered(made) : made
    }

    /// `entry` (one `Tables.seen` keeps), published as the last found.
    private static func remembered(_ entry: Entry) -> Entry {
        last.store(UInt(bitPattern: Unmanaged.passUnretained(entry).toOpaque()), ordering: .releasing)
        return entry
    }
}

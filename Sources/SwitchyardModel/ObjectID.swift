import Foundation

// MARK: - ObjectID

/// Identifies one object across the coordinator: the store's UUID, the entity and the primary key,
/// printable as Core Data's `x-coredata://UUID/Entity/pN` and parsable back.
///
/// Objects not saved yet have a temporary ID, printed `x-coredata:///Entity/tUUID`.
/// ```swift
/// let id = try ObjectID(uri: "x-coredata://6B2F.../Message/p42")
/// id.primaryKey   // 42
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    package enum Storage: Sendable, Hashable {
        case permanent(store: UUID, primaryKey: Int64)
        case temporary(UUID)

        /// `ObjectID.predicateKey` of an ID with this storage.
        package var predicateKey: Int64 {
            switch self {
            case .permanent(_, let pk): return pk
            case .temporary(let t): return ObjectID.temporaryKey(of: t)
            }
        }
    }

    /// The object's concrete entity.
    public let entityName: String
    package let storage: Storage

    /// A permanent ID of a saved object.
    public init(store: UUID, entityName: String, primaryKey: Int64) {
        self.entityName = entityName
        self.storage = .permanent(store: store, primaryKey: primaryKey)
    }

    /// A fresh temporary ID for a newly inserted object.
    package static func temporary(entityName: String) -> ObjectID {
        ObjectID(entityName: entityName, storage: .temporary(nextTemporaryUUID()))
    }

    /// Temporary IDs are a random per-process UUID with a counter in its last 8 bytes: unique like `UUID()`
    /// within the process, without a system call per inserted object.
    private static let temporaryCounter = Locked<(base: uuid_t, next: UInt64)>((UUID().uuid, 0))

    private static func nextTemporaryUUID() -> UUID {
        temporaryCounter.withLock { state in
            state.next &+= 1
            var raw = state.base
            withUnsafeMutableBytes(of: &raw) { bytes in
                withUnsafeBytes(of: state.next.bigEndian) { counter in
                    for i in 0..<8 { bytes[8 + i] = counter[i] }
                }
            }
            return UUID(uuid: raw)
        }
    }

    package init(entityName: String, storage: Storage) {
        self.entityName = entityName
        self.storage = storage
    }

    /// Hashes the key and store (or temporary UUID) only: the entity name adds nothing for telling objects
    /// apart in practice, and hashing it cost a string hash per registered row. Equality still compares it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }

    /// True until the object is saved.
    public var isTemporary: Bool {
        if case .temporary = storage { return true }
        return false
    }

    /// The store's `NSStoreUUID` (nil while temporary).
    public var storeIdentifier: UUID? {
        if case .permanent(let store, _) = storage { return store }
        return nil
    }

    /// The key an unsaved object stands for while predicates are evaluated in its context: negative (never a
    /// primary key), unique within the process, from the counter in the temporary UUID. Nil once permanent.
    package var temporaryKey: Int64? {
        guard case .temporary(let t) = storage else { return nil }
        return Self.temporaryKey(of: t)
    }

    private static func temporaryKey(of t: UUID) -> Int64 {
        var counter: UInt64 = 0
        withUnsafeBytes(of: t.uuid) { bytes in
            for i in 8..<16 { counter = counter << 8 | UInt64(bytes[i]) }
        }
        return -Int64(truncatingIfNeeded: counter & 0x3FFF_FFFF_FFFF_FFFF) - 1
    }

    /// The key that stands for this object in predicate evaluation: `Z_PK`, or `temporaryKey` while unsaved.
    package var predicateKey: Int64 {
        storage.predicateKey
    }

    /// `Z_PK` (nil while temporary).
    public var primaryKey: Int64? {
        if case .permanent(_, let pk) = storage { return pk }
        return nil
    }

    /// `x-coredata://UUID/Entity/pN`, or `x-coredata:///Entity/tUUID` while temporary.
    public var uriRepresentation: String {
        switch storage {
        case let .permanent(store, pk): return "x-coredata://\(store.uuidString)/\(entityName)/p\(pk)"
        case let .temporary(t): return "x-coredata:///\(entityName)/t\(t.uuidString)"
        }
    }

    public var description: String { uriRepresentation }
}

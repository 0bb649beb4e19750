import Foundation
import SwitchyardModel

// MARK: - ObjectRegistry

/// A context's objects by `ObjectID`, one instance per object.
///
/// An open-addressing table of the objects, each beside a 4-byte fingerprint of its ID: its primary key (or the
/// negative temporary key while unsaved) mixed with its store's UUID. An `Int64` and two words of a UUID hash far
/// faster than an `ObjectID` (through `Hasher`), and an entry costs 12 bytes: for a context holding a million
/// objects, 24 MB where `[ObjectID: ManagedObject]` took 80. Objects whose keys coincide (each store numbers its
/// objects from 1, and Core Data numbers each inheritance tree on its own) land apart through the store's UUID,
/// or share a home slot and are told apart by their whole ID. Until 2026-12-04 such objects went to a second
/// `[ObjectID: ManagedObject]` table, which made every object of a second store in one context cost a `Hasher`
/// hash of its ID: a fifth of a fetched-property prefetch across two stores (`perf`).
///
/// Every object is registered under its own ID (`registry[object.objectID] = object`); an object's ID changes
/// only while it is not registered.
///
/// The table holds its objects as `Unmanaged` references, retained by hand when placed and released when taken
/// out or when the registry ends (`deinit`): an array of a trivial type is moved and freed without a call per
/// slot. As an array of optional references, freeing a table destroyed every slot through the generic value
/// witnesses (about 280 instructions each, empty or not): at every doubling and when the context ended, a
/// third of the instructions of fetching 100,000 objects (callgrind). Noncopyable, so no copy can outlive or
/// double the references it holds.
package struct ObjectRegistry: ~Copyable {
    /// Open addressing with linear probing: an object sits at the first free slot from its fingerprint's home
    /// slot, and no free slot lies between. The count is zero or a power of two. Each object here holds one
    /// retain.
    private var slots: [Unmanaged<ManagedObject>?] = []
    /// `fingerprint(of:)` of the ID of the object in each slot. A probe compares these and reads an object's
    /// own ID only where they match: reading the key of every object passed on the way (two dependent loads
    /// each) missed the cache once the context held 100,000 objects, and showed as the registry's lookups and
    /// moves in `perf` (about 7% of the object-layer benchmark).
    private var fingerprints: [UInt32] = []
    /// The number of registered objects.
    package private(set) var count = 0

    /// An empty registry.
    package init() {}

    deinit {
        for slot in slots { slot?.release() }
    }

    /// The object registered under `id`.
    package subscript(id: ObjectID) -> ManagedObject? {
        get {
            if case .registered(let object) = find(id) { return object }
            return nil
        }
        set {
            assert(newValue.map { $0.hasID(id) } ?? true, "ObjectRegistry: an object registered under another ID")
            let fingerprint = Self.fingerprint(of: id)
            if count > 0, case (let index, true) = probe(for: id, fingerprint: fingerprint) {
                if let newValue {
                    let old = slots[index]!
                    slots[index] = .passRetained(newValue)
                    old.release()
                } else {
                    remove(at: index)
                }
            } else if let newValue {
                insert(newValue, fingerprint: fingerprint)
            }
        }
    }

    /// Where `register(_:at:)` puts an object that `find(_:)` did not find.
    package struct Vacancy {
        /// The free slot ending the ID's probe; nil when the table is empty.
        fileprivate let index: Int?
        fileprivate let fingerprint: UInt32
    }

    /// What `find(_:)` found.
    package enum Lookup {
        case registered(ManagedObject)
        case vacant(Vacancy)
    }

    /// The object registered under `id`, or where to register one for it (`register(_:at:)`, before any other
    /// change to the registry). With that, registering a fetched row's new object probes the table once where a
    /// lookup and then an assignment probed it three times (the lookup, the assignment's own, the insertion's);
    /// the probes of a table of 100,000 objects miss the cache.
    package func find(_ id: ObjectID) -> Lookup {
        let fingerprint = Self.fingerprint(of: id)
        guard count > 0 else { return .vacant(Vacancy(index: nil, fingerprint: fingerprint)) }
        let (index, found) = probe(for: id, fingerprint: fingerprint)
        if found { return .registered(slots[index]!.takeUnretainedValue()) }
        return .vacant(Vacancy(index: index, fingerprint: fingerprint))
    }

    /// Registers `object` where `find(_:)` found no object of its ID, the registry unchanged since.
    package mutating func register(_ object: consuming ManagedObject, at vacancy: Vacancy) {
        assert(Self.fingerprint(of: object.objectID) == vacancy.fingerprint, "ObjectRegistry: an object registered under another ID")
        if let index = vacancy.index, count + 1 <= Self.maxLoad(slots.count) {
            assert(slots[index] == nil, "ObjectRegistry: the registry changed since find")
            slots[index] = .passRetained(object)
            fingerprints[index] = vacancy.fingerprint
            count += 1
        } else {
            insert(object, fingerprint: vacancy.fingerprint)
        }
    }

    /// Makes room for `capacity` objects in all without growing the table again.
    package mutating func reserveCapacity(_ capacity: Int) {
        if capacity > Self.maxLoad(slots.count) { resize(to: Self.slotCount(for: capacity)) }
    }

    /// Every registered object (in no particular order).
    package var values: Values { Values(slots: slots) }

    /// The registered objects. The references are unretained: each object is kept alive by the registry, so
    /// nothing may be unregistered while a `Values` is iterated (no caller does; each takes a copy with
    /// `Array(_:)` where its loop changes the registry).
    package struct Values: Sequence {
        package let slots: [Unmanaged<ManagedObject>?]

        package struct Iterator: IteratorProtocol {
            package var slots: IndexingIterator<[Unmanaged<ManagedObject>?]>
            package mutating func next() -> ManagedObject? {
                while let slot = slots.next() {
                    if let object = slot { return object.takeUnretainedValue() }
                }
                return nil
            }
        }

        package func makeIterator() -> Iterator { Iterator(slots: slots.makeIterator()) }
    }

    // MARK: Table

    /// At most this many objects in `slotCount` slots (7/8: probes stay short with a hash that spreads
    /// consecutive keys).
    private static func maxLoad(_ slotCount: Int) -> Int { slotCount - slotCount / 8 }

    /// The smallest power of two whose load limit holds `count` objects.
    private static func slotCount(for count: Int) -> Int {
        var n = 16
        while maxLoad(n) < count { n *= 2 }
        return n
    }

    /// The upper half of the Fibonacci hash of `id`'s key mixed with a salt (consecutive primary keys land
    /// far apart). Its top bits are the ID's home slot (`home(_:)`), so a moved or rehashed object's home is found
    /// without reading its ID.
    ///
    /// The salt, the store's UUID, spreads the objects of two stores whose keys coincide. Objects of two
    /// inheritance trees of one store with the same key share a home slot and are told apart by
    /// `ManagedObject.hasID(_:)`. The entity's name is left out on purpose: `ObjectID`'s `==` compares names as
    /// Swift strings, under which differently encoded spellings (`"Café"` composed or decomposed) are equal, so
    /// anything read from the name's bytes (even its length) could send an equal ID to another slot.
    private static func fingerprint(of id: ObjectID) -> UInt32 {
        var salt: UInt64 = 0
        if case .permanent(let store, _) = id.storage {
            withUnsafeBytes(of: store.uuid) { bytes in
                salt = bytes.loadUnaligned(as: UInt64.self) ^ bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
        let key = UInt64(bitPattern: id.storage.predicateKey)
        return UInt32(truncatingIfNeeded: ((key ^ salt) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    /// The home slot of a key with this fingerprint.
    private func home(_ fingerprint: UInt32) -> Int {
        let bits = slots.count.trailingZeroBitCount
        precondition(bits > 0 && bits <= 32, "ObjectRegistry: a table of 2 to 2^32 slots")
        return Int(truncatingIfNeeded: fingerprint >> UInt32(32 - bits))
    }

    /// Walks `id`'s probe sequence in a table holding objects: the slot of the object whose ID is `id` (`found`),
    /// or the free slot that ends the sequence.
    private func probe(for id: ObjectID, fingerprint: UInt32) -> (index: Int, found: Bool) {
        let mask = slots.count - 1
        var i = home(fingerprint)
        while let slot = slots[i] {
            if fingerprints[i] == fingerprint, slot._withUnsafeGuaranteedRef({ $0.hasID(id) }) { return (i, true) }
            i = (i + 1) & mask
        }
        return (i, false)
    }

    private mutating func insert(_ object: consuming ManagedObject, fingerprint: UInt32) {
        if count + 1 > Self.maxLoad(slots.count) { resize(to: Self.slotCount(for: count + 1)) }
        place(object, fingerprint: fingerprint)
        count += 1
    }

    /// Puts `object` in the first free slot from its home, retained.
    private mutating func place(_ object: consuming ManagedObject, fingerprint: UInt32) {
        let mask = slots.count - 1
        var i = home(fingerprint)
        while slots[i] != nil { i = (i + 1) & mask }
        slots[i] = .passRetained(object)
        fingerprints[i] = fingerprint
    }

    /// Empties a slot, then moves back each later object of the run that may no longer be found past the gap.
    private mutating func remove(at index: Int) {
        let mask = slots.count - 1
        var gap = index
        let removed = slots[gap]!
        // Released once the table is consistent again: the release may end the object.
        defer { removed.release() }
        slots[gap] = nil
        count -= 1
        var i = (gap + 1) & mask
        while slots[i] != nil {
            let h = home(fingerprints[i])
            // The object stays when its home lies cyclically in (gap, i]: it is still reached from there.
            let reachable = gap <= i ? (gap < h && h <= i) : (gap < h || h <= i)
            if !reachable {
                slots.swapAt(gap, i)
                fingerprints[gap] = fingerprints[i]
                gap = i
            }
            i = (i + 1) & mask
        }
    }

    /// Rehashes into a table of `count` slots (a power of two). The references move as plain words (an object
    /// keeps the one retain the registry holds for it), and the old table is freed without a call per slot.
    private mutating func resize(to count: Int) {
        precondition(count > 0 && count & (count - 1) == 0 && count.trailingZeroBitCount <= 32, "ObjectRegistry: a table of 2 to 2^32 slots")
        let old = slots, oldFingerprints = fingerprints
        slots = Array(repeating: nil, count: count)
        fingerprints = Array(repeating: 0, count: count)
        let mask = count - 1, shift = UInt32(32 - count.trailingZeroBitCount)
        for (j, slot) in old.enumerated() {
            guard let slot else { continue }
            let fingerprint = oldFingerprints[j]
            var i = Int(truncatingIfNeeded: fingerprint >> shift)
            while slots[i] != nil { i = (i + 1) & mask }
            slots[i] = slot
            fingerprints[i] = fingerprint
        }
    }
}

import Foundation
import SwitchyardModel

// MARK: - ObjectRegistry

/// A context's objects by `ObjectID`, one instance per object.
///
/// Objects are found by `predicateKey` first (the primary key, or the negative temporary key while unsaved): an
/// `Int64` hashes and compares far faster than an `ObjectID` (store UUID, entity name and key). The table holds
/// the objects, each under its own key (`ManagedObject.predicateKey`), and beside each a 4-byte fingerprint of
/// that key, so an entry costs 12 bytes: for a context holding a million objects, 24 MB where a
/// `[Int64: ManagedObject]` took 32 and `[ObjectID: ...]` 80. The rare object whose key another registered
/// object already uses (another store, or another inheritance tree) goes to a second table keyed by the whole ID.
///
/// Every object is registered under its own ID (`registry[object.objectID] = object`); an object's ID changes
/// only while it is not registered.
package struct ObjectRegistry {
    /// Open addressing with linear probing: an object sits at the first free slot from its key's home slot, and
    /// no free slot lies between. The count is zero or a power of two.
    private var slots: [ManagedObject?] = []
    /// `fingerprint(of:)` of the key of the object in each slot. A probe compares these and reads an object's
    /// own key only where they match: reading the key of every object passed on the way (two dependent loads
    /// each) missed the cache once the context held 100,000 objects, and showed as the registry's lookups and
    /// moves in `perf` (about 7% of the object-layer benchmark).
    private var fingerprints: [UInt32] = []
    /// Objects in `slots`.
    private var keyed = 0
    private var others: [ObjectID: ManagedObject] = [:]

    /// An empty registry.
    package init() {}

    /// The object registered under `id`.
    package subscript(id: ObjectID) -> ManagedObject? {
        get {
            if let index = index(of: id.predicateKey), let object = slots[index], object.hasID(id) { return object }
            return others.isEmpty ? nil : others[id]
        }
        set {
            assert(newValue.map { $0.hasID(id) } ?? true, "ObjectRegistry: an object registered under another ID")
            let key = id.predicateKey
            let index = index(of: key)
            if let index, slots[index]!.hasID(id) {
                if let newValue { slots[index] = newValue } else { remove(at: index) }
            } else if index != nil || others[id] != nil {
                others[id] = newValue
            } else if let newValue {
                insert(newValue, key: key)
            }
        }
    }

    /// The number of registered objects.
    package var count: Int { keyed + others.count }

    /// Makes room for `capacity` objects in all without growing the table again.
    package mutating func reserveCapacity(_ capacity: Int) {
        if capacity > Self.maxLoad(slots.count) { resize(to: Self.slotCount(for: capacity)) }
    }

    /// Every registered object (in no particular order).
    package var values: Values { Values(slots: slots, others: others.values) }

    /// The registered objects, one table after the other.
    package struct Values: Sequence {
        package let slots: [ManagedObject?]
        package let others: Dictionary<ObjectID, ManagedObject>.Values

        package struct Iterator: IteratorProtocol {
            package var first: IndexingIterator<[ManagedObject?]>
            package var second: Dictionary<ObjectID, ManagedObject>.Values.Iterator
            package mutating func next() -> ManagedObject? {
                while let slot = first.next() {
                    if let object = slot { return object }
                }
                return second.next()
            }
        }

        package func makeIterator() -> Iterator { Iterator(first: slots.makeIterator(), second: others.makeIterator()) }
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

    /// The upper half of `key`'s Fibonacci hash (consecutive primary keys land far apart). Its top bits are the
    /// key's home slot (`home(_:)`), so a moved or rehashed object's home is found without reading its key.
    private static func fingerprint(of key: Int64) -> UInt32 {
        UInt32(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    /// The home slot of a key with this fingerprint.
    private func home(_ fingerprint: UInt32) -> Int {
        let bits = slots.count.trailingZeroBitCount
        precondition(bits > 0 && bits <= 32, "ObjectRegistry: a table of 2 to 2^32 slots")
        return Int(truncatingIfNeeded: fingerprint >> UInt32(32 - bits))
    }

    /// The slot of the object in the table whose key is `key`.
    private func index(of key: Int64) -> Int? {
        guard keyed > 0 else { return nil }
        let mask = slots.count - 1
        let fingerprint = Self.fingerprint(of: key)
        var i = home(fingerprint)
        while slots[i] != nil {
            if fingerprints[i] == fingerprint, slots[i]!.predicateKey == key { return i }
            i = (i + 1) & mask
        }
        return nil
    }

    private mutating func insert(_ object: ManagedObject, key: Int64) {
        if keyed + 1 > Self.maxLoad(slots.count) { resize(to: Self.slotCount(for: keyed + 1)) }
        place(object, fingerprint: Self.fingerprint(of: key))
        keyed += 1
    }

    /// Puts `object` in the first free slot from its home.
    private mutating func place(_ object: ManagedObject, fingerprint: UInt32) {
        let mask = slots.count - 1
        var i = home(fingerprint)
        while slots[i] != nil { i = (i + 1) & mask }
        slots[i] = object
        fingerprints[i] = fingerprint
    }

    /// Empties a slot, then moves back each later object of the run that may no longer be found past the gap.
    private mutating func remove(at index: Int) {
        let mask = slots.count - 1
        var gap = index
        slots[gap] = nil
        keyed -= 1
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

    private mutating func resize(to count: Int) {
        let old = slots, oldFingerprints = fingerprints
        slots = Array(repeating: nil, count: count)
        fingerprints = Array(repeating: 0, count: count)
        for (i, slot) in old.enumerated() {
            if let object = slot { place(object, fingerprint: oldFingerprints[i]) }
        }
    }
}

import Foundation
import SwitchyardModel

// MARK: - ObjectRegistry

/// A context's objects by `ObjectID`, one instance per object.
///
/// Objects are found by `predicateKey` first (the primary key, or the negative temporary key while unsaved): an
/// `Int64` hashes and compares far faster than an `ObjectID` (store UUID, entity name and key). The table holds
/// only the objects, each under its own key (`ManagedObject.predicateKey`), so an entry costs one word: for a
/// context holding a million objects, 16 MB where a `[Int64: ManagedObject]` took 32 and `[ObjectID: ...]` 80.
/// The rare object whose key another registered object already uses (another store, or another inheritance
/// tree) goes to a second table keyed by the whole ID.
///
/// Every object is registered under its own ID (`registry[object.objectID] = object`); an object's ID changes
/// only while it is not registered.
package struct ObjectRegistry {
    /// Open addressing with linear probing: an object sits at the first free slot from its key's home slot, and
    /// no free slot lies between. The count is zero or a power of two.
    private var slots: [ManagedObject?] = []
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

    /// The home slot of `key`: Fibonacci hashing, so consecutive primary keys land far apart.
    private func home(_ key: Int64) -> Int {
        let bits = slots.count.trailingZeroBitCount
        return Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }

    /// The slot of the object in the table whose key is `key`.
    private func index(of key: Int64) -> Int? {
        guard keyed > 0 else { return nil }
        let mask = slots.count - 1
        var i = home(key)
        while let object = slots[i] {
            if object.predicateKey == key { return i }
            i = (i + 1) & mask
        }
        return nil
    }

    private mutating func insert(_ object: ManagedObject, key: Int64) {
        if keyed + 1 > Self.maxLoad(slots.count) { resize(to: Self.slotCount(for: keyed + 1)) }
        let mask = slots.count - 1
        var i = home(key)
        while slots[i] != nil { i = (i + 1) & mask }
        slots[i] = object
        keyed += 1
    }

    /// Empties a slot, then moves back each later object of the run that may no longer be found past the gap.
    private mutating func remove(at index: Int) {
        let mask = slots.count - 1
        var gap = index
        slots[gap] = nil
        keyed -= 1
        var i = (gap + 1) & mask
        while let object = slots[i] {
            let h = home(object.predicateKey)
            // The object stays when its home lies cyclically in (gap, i]: it is still reached from there.
            let reachable = gap <= i ? (gap < h && h <= i) : (gap < h || h <= i)
            if !reachable {
                slots[gap] = object
                slots[i] = nil
                gap = i
            }
            i = (i + 1) & mask
        }
    }

    private mutating func resize(to count: Int) {
        let old = slots
        slots = Array(repeating: nil, count: count)
        keyed = 0
        for case let object? in old { insert(object, key: object.predicateKey) }
    }
}

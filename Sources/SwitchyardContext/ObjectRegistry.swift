import Foundation
import SwitchyardModel

// MARK: - ObjectRegistry

/// A context's objects by `ObjectID`, one instance per object.
///
/// Saved objects are found by primary key first: an `Int64` key hashes and compares far faster than an
/// `ObjectID` (store UUID, entity name and key), and an entry costs 16 bytes instead of 56 — for a context
/// holding a million objects, about 80 MB less. Unsaved objects share that table under their temporary key
/// (negative, so never a primary key). The rare object whose key another registered object already uses
/// (another store, or another inheritance tree) goes to a second table keyed by the whole ID.
package struct ObjectRegistry {
    private var byKey: [Int64: ManagedObject] = [:]
    private var others: [ObjectID: ManagedObject] = [:]

    /// The object registered under `id`.
    package subscript(id: ObjectID) -> ManagedObject? {
        get {
            if let object = byKey[id.predicateKey], object.hasID(id) { return object }
            return others.isEmpty ? nil : others[id]
        }
        set {
            let key = id.predicateKey
            if let current = byKey[key], current.hasID(id) {
                byKey[key] = newValue
            } else if others[id] != nil || byKey[key] != nil {
                others[id] = newValue
            } else if let newValue {
                byKey[key] = newValue
            }
        }
    }

    /// The number of registered objects.
    package var count: Int { byKey.count + others.count }

    /// Makes room for `capacity` saved objects without growing the table again.
    package mutating func reserveCapacity(_ capacity: Int) {
        byKey.reserveCapacity(capacity)
    }

    /// Every registered object (in no particular order).
    package var values: Values { Values(byKey: byKey.values, others: others.values) }

    /// The registered objects, one table after the other.
    package struct Values: Sequence {
        package let byKey: Dictionary<Int64, ManagedObject>.Values
        package let others: Dictionary<ObjectID, ManagedObject>.Values

        package struct Iterator: IteratorProtocol {
            package var first: Dictionary<Int64, ManagedObject>.Values.Iterator
            package var second: Dictionary<ObjectID, ManagedObject>.Values.Iterator
            package mutating func next() -> ManagedObject? { first.next() ?? second.next() }
        }

        package func makeIterator() -> Iterator { Iterator(first: byKey.makeIterator(), second: others.makeIterator()) }
        package var underestimatedCount: Int { byKey.count + others.count }
    }
}

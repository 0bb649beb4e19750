import Foundation

// MARK: - StoreEqualityKey

/// A hashable stand-in for an `AttributeValue` under `AttributeValue.storeEqual`: two values the store calls
/// equal always get the same key (numbers by their value as a `Double`, text and URIs by their text, data and
/// UUIDs by their bytes), so sets and groupings of values are hash lookups instead of scans. Different values
/// may share a key (integers beyond 2^53, canonically equivalent strings with different bytes), so a match
/// by key is confirmed with `storeEqual` (see `StoreEqualityIndex`).
package enum StoreEqualityKey: Hashable, Sendable {
    case null
    case number(Double)
    case text(String)
    case bytes(Data)

    package init(_ value: AttributeValue) {
        switch value {
        case .null: self = .null
        case .integer, .double, .decimal, .bool, .date: self = .number(value.numericValue ?? 0)
        case .string, .uri: self = .text(value.stringValue ?? "")
        case .binary, .uuid: self = .bytes(value.bytesValue ?? Data())
        }
    }
}

// MARK: - StoreEqualityIndex

/// Values under `AttributeValue.storeEqual`, each numbered in the order it was first inserted: a hash lookup
/// plus a `storeEqual` check against the few values sharing the key.
///
/// Not generic on purpose: a generic type used from another module runs unspecialized there and looks up its
/// type metadata at every call, which callgrind put at half of a fetched-property prefetch's instructions.
/// Callers keep their payloads in an array indexed by the slot (see `StoreEqualityMap`).
package struct StoreEqualityIndex: Sendable {
    private struct Entry {
        var value: AttributeValue
        var slot: Int
    }
    /// The values sharing one key: nearly always one, kept inline (no array per key).
    private struct Bucket {
        var first: Entry
        var rest: [Entry] = []
    }
    private var buckets: [StoreEqualityKey: Bucket] = [:]
    /// The number of slots handed out (removed values keep theirs).
    package private(set) var slotCount = 0

    /// An empty index with room for `capacity` values.
    package init(capacity: Int = 0) {
        buckets.reserveCapacity(capacity)
    }

    /// The slot of the value `storeEqual` to `value`, if present.
    package func slot(of value: AttributeValue) -> Int? {
        guard let bucket = buckets[StoreEqualityKey(value)] else { return nil }
        if AttributeValue.storeEqual(bucket.first.value, value) { return bucket.first.slot }
        return bucket.rest.first { AttributeValue.storeEqual($0.value, value) }?.slot
    }

    /// The slot of the value `storeEqual` to `value`; when there is none, `value` is added with the next slot.
    package mutating func insert(_ value: AttributeValue) -> (slot: Int, inserted: Bool) {
        let next = slotCount
        var result = (slot: next, inserted: true)
        func apply(_ bucket: inout Bucket?) {
            guard bucket != nil else {
                bucket = Bucket(first: Entry(value: value, slot: next))
                return
            }
            if AttributeValue.storeEqual(bucket!.first.value, value) {
                result = (bucket!.first.slot, false)
            } else if let entry = bucket!.rest.first(where: { AttributeValue.storeEqual($0.value, value) }) {
                result = (entry.slot, false)
            } else {
                bucket!.rest.append(Entry(value: value, slot: next))
            }
        }
        apply(&buckets[StoreEqualityKey(value)])
        if result.inserted { slotCount += 1 }
        return result
    }

    /// Forgets the value `storeEqual` to `value` and returns its slot (not handed out again).
    package mutating func remove(_ value: AttributeValue) -> Int? {
        var removed: Int?
        func apply(_ bucket: inout Bucket?) {
            guard let current = bucket else { return }
            if AttributeValue.storeEqual(current.first.value, value) {
                removed = current.first.slot
                if current.rest.isEmpty {
                    bucket = nil
                } else {
                    bucket!.first = bucket!.rest.removeFirst()
                }
            } else if let i = current.rest.firstIndex(where: { AttributeValue.storeEqual($0.value, value) }) {
                removed = current.rest[i].slot
                bucket!.rest.remove(at: i)
            }
        }
        apply(&buckets[StoreEqualityKey(value)])
        return removed
    }
}

// MARK: - StoreEqualityMap

/// A set of values under `AttributeValue.storeEqual`, each with an associated payload: a `StoreEqualityIndex`
/// numbering the values and the payloads in an array by that number.
package struct StoreEqualityMap<Payload> {
    private var index = StoreEqualityIndex()
    /// By slot; nil for a removed value.
    private var payloads: [Payload?] = []

    /// An empty map.
    package init() {}

    /// The payload stored for a value `storeEqual` to `value`; assigning nil removes it.
    package subscript(value: AttributeValue) -> Payload? {
        get { index.slot(of: value).flatMap { payloads[$0] } }
        set {
            guard let newValue else {
                if let slot = index.remove(value) { payloads[slot] = nil }
                return
            }
            let (slot, inserted) = index.insert(value)
            if inserted { payloads.append(newValue) } else { payloads[slot] = newValue }
        }
    }

    /// Changes, in place, the payload of the value `storeEqual` to `value`, starting from `initial` when there
    /// is none yet.
    package mutating func update(_ value: AttributeValue, initial: @autoclosure () -> Payload, _ body: (inout Payload) -> Void) {
        let (slot, inserted) = index.insert(value)
        if inserted {
            var payload = initial()
            body(&payload)
            payloads.append(payload)
        } else {
            body(&payloads[slot]!)
        }
    }

    /// Whether a value `storeEqual` to `value` is present.
    package func contains(_ value: AttributeValue) -> Bool { index.slot(of: value) != nil }
}

extension StoreEqualityMap: Sendable where Payload: Sendable {}

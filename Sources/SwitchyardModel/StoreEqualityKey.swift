import Foundation

// MARK: - StoreEqualityKey

/// A hashable stand-in for an `AttributeValue` under `AttributeValue.storeEqual`: two values the store calls
/// equal always get the same key (numbers by their value as a `Double`, text and URIs by their text, data and
/// UUIDs by their bytes), so sets and groupings of values are hash lookups instead of scans. Different values
/// may share a key (integers beyond 2^53, canonically equivalent strings with different bytes), so a match
/// by key is confirmed with `storeEqual` (see `StoreEqualitySet`).
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

// MARK: - StoreEqualityMap

/// A set of values under `AttributeValue.storeEqual`, each with an associated payload: insertion and lookup
/// are a hash lookup plus a `storeEqual` check against the few values sharing the key.
package struct StoreEqualityMap<Payload> {
    fileprivate struct Entry {
        var value: AttributeValue
        var payload: Payload
    }
    /// The values sharing one key: nearly always one, kept inline (no array per key).
    fileprivate struct Bucket {
        var first: Entry
        var rest: [Entry] = []
    }
    private var buckets: [StoreEqualityKey: Bucket] = [:]

    /// An empty map.
    package init() {}

    /// The payload stored for a value `storeEqual` to `value`.
    package subscript(value: AttributeValue) -> Payload? {
        get {
            guard let bucket = buckets[StoreEqualityKey(value)] else { return nil }
            if AttributeValue.storeEqual(bucket.first.value, value) { return bucket.first.payload }
            return bucket.rest.first { AttributeValue.storeEqual($0.value, value) }?.payload
        }
        set {
            Self.set(newValue, for: value, in: &buckets[StoreEqualityKey(value)])
        }
    }

    /// Sets, replaces or (for nil) removes the payload of `value` in its bucket, in place.
    private static func set(_ payload: Payload?, for value: AttributeValue, in slot: inout Bucket?) {
        guard var bucket = slot else {
            if let payload { slot = Bucket(first: Entry(value: value, payload: payload)) }
            return
        }
        slot = nil  // the bucket is uniquely held while it changes
        if AttributeValue.storeEqual(bucket.first.value, value) {
            if let payload {
                bucket.first.payload = payload
            } else if bucket.rest.isEmpty {
                return
            } else {
                bucket.first = bucket.rest.removeFirst()
            }
        } else if let i = bucket.rest.firstIndex(where: { AttributeValue.storeEqual($0.value, value) }) {
            if let payload { bucket.rest[i].payload = payload } else { bucket.rest.remove(at: i) }
        } else if let payload {
            bucket.rest.append(Entry(value: value, payload: payload))
        }
        slot = bucket
    }

    /// Changes, in place, the payload of the value `storeEqual` to `value`, starting from `initial` when there
    /// is none yet.
    package mutating func update(_ value: AttributeValue, initial: @autoclosure () -> Payload, _ body: (inout Payload) -> Void) {
        func apply(_ slot: inout Bucket?) {
            guard slot != nil else {
                var payload = initial()
                body(&payload)
                slot = Bucket(first: Entry(value: value, payload: payload))
                return
            }
            if AttributeValue.storeEqual(slot!.first.value, value) {
                body(&slot!.first.payload)
            } else if let i = slot!.rest.firstIndex(where: { AttributeValue.storeEqual($0.value, value) }) {
                body(&slot!.rest[i].payload)
            } else {
                var payload = initial()
                body(&payload)
                slot!.rest.append(Entry(value: value, payload: payload))
            }
        }
        apply(&buckets[StoreEqualityKey(value)])
    }

    /// Whether a value `storeEqual` to `value` is present.
    package func contains(_ value: AttributeValue) -> Bool { self[value] != nil }
}

extension StoreEqualityMap: Sendable where Payload: Sendable {}
extension StoreEqualityMap.Entry: Sendable where Payload: Sendable {}
extension StoreEqualityMap.Bucket: Sendable where Payload: Sendable {}

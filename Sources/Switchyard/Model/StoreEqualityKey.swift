import Foundation

// MARK: - StoreEqualityKey

/// A hashable stand-in for an `AttributeValue` under `AttributeValue.storeEqual`: two values the store calls
/// equal always get the same key (numbers by their value as a `Double`, text and URIs by their text, data and
/// UUIDs by their bytes), so sets and groupings of values are hash lookups instead of scans. Different values
/// may share a key (integers beyond 2^53, canonically equivalent strings with different bytes), so a match
/// by key is confirmed with `storeEqual` (see `StoreEqualitySet`).
enum StoreEqualityKey: Hashable, Sendable {
    case null
    case number(Double)
    case text(String)
    case bytes(Data)

    init(_ value: AttributeValue) {
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
struct StoreEqualityMap<Payload> {
    private var buckets: [StoreEqualityKey: [(value: AttributeValue, payload: Payload)]] = [:]

    /// The payload stored for a value `storeEqual` to `value`.
    subscript(value: AttributeValue) -> Payload? {
        get {
            buckets[StoreEqualityKey(value)]?.first { AttributeValue.storeEqual($0.value, value) }?.payload
        }
        set {
            let key = StoreEqualityKey(value)
            var bucket = buckets[key] ?? []
            if let i = bucket.firstIndex(where: { AttributeValue.storeEqual($0.value, value) }) {
                if let newValue { bucket[i].payload = newValue } else { bucket.remove(at: i) }
            } else if let newValue {
                bucket.append((value, newValue))
            }
            buckets[key] = bucket.isEmpty ? nil : bucket
        }
    }

    /// Changes, in place, the payload of the value `storeEqual` to `value`, starting from `initial` when there
    /// is none yet.
    mutating func update(_ value: AttributeValue, initial: @autoclosure () -> Payload, _ body: (inout Payload) -> Void) {
        func apply(_ bucket: inout [(value: AttributeValue, payload: Payload)]) {
            if let i = bucket.firstIndex(where: { AttributeValue.storeEqual($0.value, value) }) {
                body(&bucket[i].payload)
            } else {
                var payload = initial()
                body(&payload)
                bucket.append((value, payload))
            }
        }
        apply(&buckets[StoreEqualityKey(value), default: []])
    }

    /// Whether a value `storeEqual` to `value` is present.
    func contains(_ value: AttributeValue) -> Bool { self[value] != nil }
}

extension StoreEqualityMap: Sendable where Payload: Sendable {}

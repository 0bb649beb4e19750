import Foundation

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

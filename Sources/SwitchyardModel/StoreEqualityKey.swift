import Foundation

// MARK: - StoreEqualityKey

/// A hashable stand-in for an `AttributeValue` under `AttributeValue.storeEqual`, for keys of a `Dictionary`
/// or `Set` (the memory store groups rows by the values of a uniqueness constraint with arrays of them): equal
/// when `storeEqual` says so, hashed with `StoreEqualityIndex`'s hash, the one place the rule "numbers by their
/// value as a `Double`, text by its bytes, data and UUIDs by their bytes" is written.
package struct StoreEqualityKey: Hashable, Sendable {
    /// The value it stands for.
    package let value: AttributeValue

    /// A key standing for `value`.
    package init(_ value: AttributeValue) { self.value = value }

    /// `AttributeValue.storeEqual` of the two values.
    package static func == (lhs: Self, rhs: Self) -> Bool { AttributeValue.storeEqual(lhs.value, rhs.value) }

    /// `StoreEqualityIndex.hash` of the value: equal under `storeEqual`, equal hash.
    package func hash(into hasher: inout Hasher) { hasher.combine(StoreEqualityIndex.hash(value)) }
}

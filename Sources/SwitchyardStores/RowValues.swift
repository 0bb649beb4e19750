import Foundation
import SwitchyardModel

// MARK: - RowValues

/// A row's attribute values by name: a dictionary to its users, an array ordered by a `RowLayout` inside.
///
/// A missing value and `.null` are the same thing: reading either gives `nil` through the subscript (and
/// `.null` through `StoreRow`'s), iterating skips both, and assigning `nil` or `.null` removes the value. Names
/// outside the layout (a row built by hand, or a value the store's entity does not have) are kept beside it,
/// so a store can still name an unknown attribute in its error.
///
/// ```swift
/// var values: RowValues = ["title": "Dune", "pages": 412]
/// values["pages"] = nil
/// values.count    // 1
/// ```
@usableFromInline package struct RowValues: Sendable {
    /// The layout and the values beside it, in one word: every fetched object keeps a `RowValues` in its
    /// snapshot, so each field here costs a million objects 8 MB. (Both payloads are class references, whose
    /// spare bits hold the case; a dictionary payload would not fit.)
    @usableFromInline enum Shape: Sendable {
        /// Values by this layout only (the common case).
        case laid(RowLayout)
        /// Values beside the layout, or no layout at all.
        case beside(Beside)
    }

    /// Values whose names the layout does not have (a row built by hand, or a value the store's entity lacks),
    /// and the layout if there is one.
    ///
    /// `extra` changes only through a `RowValues` holding the only reference to the box (checked with
    /// `isKnownUniquelyReferenced` in `extra`'s `_modify`); any other holder sees it immutable: hence
    /// `@unchecked Sendable`, as for `RowStorage`.
    @usableFromInline final class Beside: @unchecked Sendable {
        let layout: RowLayout?
        var extra: [String: AttributeValue]
        init(layout: RowLayout?, extra: [String: AttributeValue]) {
            self.layout = layout
            self.extra = extra
        }
        /// The values of a row built with no layout and nothing in it yet.
        static let empty = Beside(layout: nil, extra: [:])
    }

    @usableFromInline var shape: Shape
    /// Values by layout position in row `row` of `storage` (`.null` where absent); the block is possibly shared
    /// with other rows.
    @usableFromInline var storage: RowStorage
    @usableFromInline var row: Int

    /// Nil for a row built without a layout: everything lives beside it.
    public var layout: RowLayout? {
        switch shape {
        case .laid(let layout): return layout
        case .beside(let beside): return beside.layout
        }
    }

    /// The identity of `layout`, read without retaining it (for a comparison).
    package var layoutIdentity: ObjectIdentifier? {
        switch shape {
        case .laid(let layout): return ObjectIdentifier(layout)
        case .beside(let beside): return beside.layout.map { ObjectIdentifier($0) }
        }
    }

    /// Non-null values whose names the layout does not have.
    private var extra: [String: AttributeValue] {
        get {
            switch shape {
            case .laid: return [:]
            case .beside(let beside): return beside.extra
            }
        }
        set {
            let layout = self.layout
            shape = newValue.isEmpty && layout != nil ? .laid(layout!) : .beside(Beside(layout: layout, extra: newValue))
        }
        _modify {
            // A row without a layout is built one name at a time: its box is changed in place when this row holds
            // the only reference, so a change does not copy the dictionary.
            if case .beside(var box) = shape {
                shape = .beside(Beside.empty)
                if !isKnownUniquelyReferenced(&box) { box = Beside(layout: box.layout, extra: box.extra) }
                defer { shape = box.extra.isEmpty && box.layout != nil ? .laid(box.layout!) : .beside(box) }
                yield &box.extra
            } else {
                var copy = extra
                defer { extra = copy }
                yield &copy
            }
        }
    }

    /// Empty values with no layout.
    public init() {
        shape = .beside(Beside.empty)
        storage = RowStorage.empty
        row = 0
    }

    /// Values positioned by `layout`; `slots` must have one value per name (`.null` where absent).
    public init(layout: RowLayout, slots: [AttributeValue]) {
        precondition(slots.count == layout.names.count, "RowValues: \(slots.count) slots for \(layout.names.count) names")
        precondition(zip(slots, layout.isLive).allSatisfy { $1 || $0.isNull }, "RowValues: a retired position holds a value")
        shape = .laid(layout)
        storage = RowStorage(pattern: layout.slots, values: slots)
        row = 0
    }

    /// Values positioned by `layout` in row `row` of `storage` (see `RowArena`), whose pattern has one position
    /// per name of the layout; retired positions of the layout must hold `.null`.
    package init(layout: RowLayout, storage: RowStorage, row: Int) {
        assert(row < storage.count, "RowValues: row outside its storage")
        assert(storage.pattern.width == layout.names.count, "RowValues: \(storage.pattern.width) positions for \(layout.names.count) names")
        shape = .laid(layout)
        self.storage = storage
        self.row = row
    }

    /// The non-null entries of `dictionary`, with no layout.
    public init(_ dictionary: [String: AttributeValue]) {
        self.init()
        // Taken as it is unless it holds nulls: no name is hashed again.
        extra = dictionary.contains { $0.value.isNull } ? dictionary.filter { !$0.value.isNull } : dictionary
    }

    /// The non-null entries of `dictionary`, positioned by `layout` where it has the name.
    public init(_ dictionary: [String: AttributeValue], layout: RowLayout) {
        self.init(layout: layout, slots: Array(repeating: .null, count: layout.names.count))
        for (name, value) in dictionary { self[name] = value }
    }

    /// Values the block holding this row has room for (what keeping the row keeps allocated).
    package var storageCapacity: Int { storage.capacity * storage.pattern.width }

    /// The number of layout positions.
    private var width: Int { layout?.names.count ?? 0 }

    /// Whether every value sits at a position of `layout` (none beside it): then the slots are the whole row.
    package var isLaidOut: Bool {
        if case .laid = shape { return true }
        return false
    }

    /// The value at `position` of `layout` (`.null` when absent), without looking the name up.
    package func slot(_ position: Int) -> AttributeValue { storage[row, position] }

    /// The value at `position` (`.null` when absent) when these values lie by `layout` itself, nil otherwise: a
    /// read by position for a caller holding its entity's layout, which neither retains the layout nor hashes a
    /// name.
    // Inlinable: a call into this module per attribute read, with the retains around it, was a third of the
    // read (callgrind).
    @inlinable @inline(__always)
    package func slot(_ position: Int, laidOutBy layout: RowLayout) -> AttributeValue? {
        guard case .laid(let own) = shape, own === layout else { return nil }
        return storage[row, position]
    }

    /// Puts the same values under `other`, which the caller has checked is equivalent to `layout`
    /// (`RowLayout.isEquivalent(to:)`): the context's layout for a store's, so its reads go by position. A row
    /// without a layout, or with values outside it, is left as it is.
    package mutating func adopt(_ other: RowLayout) {
        guard case .laid = shape else { return }
        shape = .laid(other)
    }

    /// Writes the value at `position` of `layout` (`.null` clears it), first copying this row out of a block
    /// other rows share: the subscript's write for a caller that knows the position.
    package mutating func setSlot(_ position: Int, _ value: AttributeValue) {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(row: row)
            row = 0
        }
        storage[row, position] = value
    }

    /// The value under `name`, `.null` when absent: the subscript's read for a loop over many rows, where
    /// `cache` keeps the last layout seen and `name`'s position in it, so the name is hashed once per layout
    /// rather than once per row. Start with `(nil, nil)`; the rows must outlive the loop.
    package func value(named name: String, cache: inout (layout: ObjectIdentifier?, position: Int?)) -> AttributeValue {
        guard let layout else { return extra[name] ?? .null }
        let id = ObjectIdentifier(layout)
        if cache.layout != id { cache = (id, layout.positions[name: name]) }
        if let position = cache.position { return slot(position) }
        return extra.isEmpty ? .null : extra[name] ?? .null
    }

    /// The value stored under `name`; nil when absent or null. Assigning nil or `.null` removes it.
    public subscript(name: String) -> AttributeValue? {
        get {
            if let layout, let position = layout.positions[name: name] {
                let value = slot(position)
                // Not `value.isNull ? nil : value`: that `nil` would be `AttributeValue.null`, not `.none`.
                if value.isNull { return .none }
                return value
            }
            return extra.isEmpty ? nil : extra[name]
        }
        set {
            let value = (newValue?.isNull ?? true) ? nil : newValue
            if let layout, let position = layout.positions[name: name] {
                setSlot(position, value ?? .null)
            } else {
                extra[name] = value
            }
        }
    }

    /// The number of non-null values.
    public var count: Int { (0..<width).reduce(0) { slot($1).isNull ? $0 : $0 + 1 } + extra.count }

    /// Whether every value is absent.
    public var isEmpty: Bool { extra.isEmpty && (0..<width).allSatisfy { slot($0).isNull } }

    /// The names that have a non-null value.
    public var keys: [String] { map(\.key) }

    /// The values as a dictionary (non-null entries only).
    public var dictionary: [String: AttributeValue] {
        var result = extra
        if let layout {
            for position in 0..<width where !slot(position).isNull { result[layout.names[position]] = slot(position) }
        }
        return result
    }
}

// MARK: - Collection behaviour

extension RowValues: Sequence {
    /// Iterates the non-null values: layout positions in order, then the others.
    public struct Iterator: IteratorProtocol {
        private let values: RowValues
        private var position = 0
        private var extraIterator: Dictionary<String, AttributeValue>.Iterator

        package init(_ values: RowValues) {
            self.values = values
            extraIterator = values.extra.makeIterator()
        }

        /// The next non-null name and value.
        public mutating func next() -> (key: String, value: AttributeValue)? {
            if let layout = values.layout {
                while position < values.width {
                    defer { position += 1 }
                    let value = values.slot(position)
                    if !value.isNull { return (layout.names[position], value) }
                }
            }
            return extraIterator.next()
        }
    }

    /// An iterator over the non-null values.
    public func makeIterator() -> Iterator { Iterator(self) }
    /// Zero: counting the non-null values would cost a pass over them.
    public var underestimatedCount: Int { 0 }
}

extension RowValues: ExpressibleByDictionaryLiteral {
    /// Values with no layout; null entries are dropped.
    public init(dictionaryLiteral elements: (String, AttributeValue)...) {
        self.init()
        for (name, value) in elements where !value.isNull { extra[name] = value }
    }
}

extension RowValues: Hashable {
    /// Equal when the same names have equal non-null values, whatever the layouts.
    public static func == (a: RowValues, b: RowValues) -> Bool {
        if let la = a.layout, la === b.layout, a.extra.isEmpty, b.extra.isEmpty {
            return (0..<a.width).allSatisfy { a.slot($0) == b.slot($0) }
        }
        return a.dictionary == b.dictionary
    }

    /// Hashes the non-null entries, whatever the layout.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(dictionary)
    }
}

extension RowValues: CustomStringConvertible {
    /// The non-null entries, sorted by name.
    public var description: String {
        "[" + dictionary.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

import SwitchyardModel

// MARK: - StoreRows

/// The new rows of a `StoreChangeSet`: a random-access collection of `StoreRow`s, built like an array.
///
/// ```swift
/// var rows: StoreRows = [StoreRow(entityName: "Chat", primaryKey: 1, values: ["title": .string("Team")])]
/// rows.append(StoreRow(entityName: "Chat", primaryKey: 2, values: ["title": .string("Family")]))
/// try store.save(StoreChangeSet(inserts: rows))
/// ```
///
/// A context saving many new objects fills it with the objects' own value blocks rather than a `StoreRow`
/// each, and each row is made as it is read: about 20 bytes a row where a `StoreRow` takes 64 (64 MB less at
/// the peak of saving a million new objects). Any change to such a collection first turns it into plain rows.
public struct StoreRows: RandomAccessCollection, RangeReplaceableCollection, ExpressibleByArrayLiteral, Sendable, Hashable,
    CustomStringConvertible
{
    /// The rows, unless `compact` holds them.
    private var rows: [StoreRow]
    /// The rows as a context's new objects hold them; `rows` is empty then.
    private var compact: CompactRows?

    /// No rows.
    public init() {
        rows = []
    }

    /// The given rows, in order.
    public init(_ rows: [StoreRow]) {
        self.rows = rows
    }

    /// The given rows, in order.
    public init(arrayLiteral rows: StoreRow...) {
        self.rows = rows
    }

    /// Rows made as they are read from `compact`.
    package init(_ compact: CompactRows) {
        rows = []
        self.compact = compact.count == 0 ? nil : compact
    }

    /// The position of the first row (0).
    public var startIndex: Int { 0 }

    /// The position after the last row: the number of rows.
    public var endIndex: Int { compact?.count ?? rows.count }

    /// The row at `position`.
    public subscript(position: Int) -> StoreRow {
        if let compact { return compact.row(at: position) }
        return rows[position]
    }

    /// Replaces the rows in `subrange` with `newElements`.
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == StoreRow {
        materialize()
        rows.replaceSubrange(subrange, with: newElements)
    }

    /// Makes room for `n` rows.
    public mutating func reserveCapacity(_ n: Int) {
        materialize()
        rows.reserveCapacity(n)
    }

    /// Makes every row of `compact` a `StoreRow` of `rows`.
    private mutating func materialize() {
        guard let compact else { return }
        rows = (0..<compact.count).map { compact.row(at: $0) }
        self.compact = nil
    }

    /// True when both hold equal rows in the same order, however each was built.
    public static func == (a: StoreRows, b: StoreRows) -> Bool {
        a.elementsEqual(b)
    }

    /// Hashes the rows in order (equal collections hash alike, however each was built).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for row in self { hasher.combine(row) }
    }

    /// The rows as an array would print them.
    public var description: String { Array(self).description }
}

// MARK: - CompactRows

/// New rows kept as a context holds its new objects: the primary keys (the array the context allocated, shared),
/// and per row the entity (a number into `entities`), the object's block of changed values (one row at its start,
/// laid out by the entity's layout; nil when no value was set) and, only when some row has one, its to-one
/// references. Rows whose values differ from their object's (transient values left out) are kept whole in `whole`.
package struct CompactRows: Sendable {
    /// Names and value layouts of the rows' entities.
    private var entities: [(name: String, layout: RowLayout)] = []
    private var entityOfRow: [UInt32] = []
    private var keys: [Int64] = []
    private var blocks: [RowStorage?] = []
    /// Empty, or one dictionary per row.
    private var toOne: [[String: RowReference]] = []
    private var whole: [Int: StoreRow] = [:]

    /// Rows to be appended with the given primary keys, in order.
    package init(primaryKeys: [Int64]) {
        keys = primaryKeys
        entityOfRow.reserveCapacity(primaryKeys.count)
        blocks.reserveCapacity(primaryKeys.count)
    }

    /// The number of rows appended.
    package var count: Int { blocks.count }

    /// Adds the next row (version 1, the next primary key) of the entity `entityName`, whose values are row 0 of
    /// `block` laid out by `layout` (all null when `block` is nil).
    package mutating func append(entityName: String, layout: RowLayout, block: RowStorage?, toOne: [String: RowReference] = [:]) {
        precondition(blocks.count < keys.count, "CompactRows: more rows than primary keys")
        let entity: Int
        if let last = entityOfRow.last, last != Self.wholeRow, entities[Int(last)].layout === layout, entities[Int(last)].name == entityName {
            entity = Int(last)
        } else if let found = entities.firstIndex(where: { $0.layout === layout && $0.name == entityName }) {
            entity = found
        } else {
            precondition(entities.count < Int(Self.wholeRow), "CompactRows: too many entities")
            entity = entities.count
            entities.append((entityName, layout))
        }
        entityOfRow.append(UInt32(entity))
        blocks.append(block)
        if !toOne.isEmpty || !self.toOne.isEmpty {
            if self.toOne.count < blocks.count - 1 {
                self.toOne.append(contentsOf: repeatElement([:], count: blocks.count - 1 - self.toOne.count))
            }
            self.toOne.append(toOne)
        }
    }

    /// Adds `row` as it is; its primary key must be the next one.
    package mutating func append(_ row: StoreRow) {
        precondition(blocks.count < keys.count && keys[blocks.count] == row.primaryKey, "CompactRows: \(row.reference) out of order")
        entityOfRow.append(Self.wholeRow)
        blocks.append(nil)
        if !toOne.isEmpty { toOne.append([:]) }
        whole[blocks.count - 1] = row
    }

    /// `entityOfRow` of a row kept in `whole`.
    private static let wholeRow = UInt32.max

    /// The row at `position`.
    package func row(at position: Int) -> StoreRow {
        if entityOfRow[position] == Self.wholeRow { return whole[position]! }
        let entity = entities[Int(entityOfRow[position])]
        let values = blocks[position].map { RowValues(layout: entity.layout, storage: $0, row: 0) }
            ?? RowValues(layout: entity.layout, slots: Array(repeating: .null, count: entity.layout.names.count))
        return StoreRow(
            entityName: entity.name, primaryKey: keys[position], values: values,
            toOne: position < toOne.count ? toOne[position] : [:])
    }
}

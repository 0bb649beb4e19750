import SwitchyardModel

// MARK: - CompactRows

/// New rows kept as a context holds its new objects: the primary keys (the array the context allocated, shared),
/// and per row the entity (a number into `entities`) with the row of its values in their block, the block (a
/// change block many objects share, laid out by the entity's layout; nil when no value was set) and, only when
/// some row has one, its to-one references. Rows whose values differ from their object's (transient values left
/// out) are kept whole in `whole`.
///
/// The blocks are shared with the objects, as a `StoreRow`'s values were: a row handed out is not written again
/// (a `ChangedValues` copies it before a later change), so the rows read the values as they were when appended.
package struct CompactRows: Sendable {
    /// Names and value layouts of the rows' entities, and the values of a row of each with none set (made once,
    /// the first time such a row is appended).
    private var entities: [(name: String, layout: RowLayout, nulls: RowValues?)] = []
    /// Each row's number in `entities` (high 16 bits) and the row of its values in its block (low 16 bits), or
    /// `wholeRow`: one word a row.
    private var entityOfRow: [UInt32] = []
    /// The rows' primary keys, given up front (more than `count` until every row is appended).
    private var keys: [Int64] = []
    /// Each row's block of values; nil when no value is set, or for a whole row.
    private var blocks: [RowStorage?] = []
    /// Empty, or one dictionary per row.
    private var toOne: [[String: RowReference]] = []
    /// Rows kept as they were given, by position.
    private var whole: [Int: StoreRow] = [:]

    /// Rows to be appended with the given primary keys, in order.
    package init(primaryKeys: [Int64]) {
        keys = primaryKeys
        entityOfRow.reserveCapacity(primaryKeys.count)
        blocks.reserveCapacity(primaryKeys.count)
    }

    /// The number of rows appended.
    package var count: Int { blocks.count }

    /// Adds the next row (version 1, the next primary key) of the entity `entityName`, whose values are row
    /// `values.row` of `values.storage` laid out by `layout` (all null when `values` is nil). A row past 65,535
    /// of its block is kept whole.
    package mutating func append(
        entityName: String, layout: RowLayout, values: (storage: RowStorage, row: Int)?, toOne: [String: RowReference] = [:]
    ) {
        precondition(blocks.count < keys.count, "CompactRows: more rows than primary keys")
        if let values, values.row > Int(UInt16.max) {
            return append(StoreRow(
                entityName: entityName, primaryKey: keys[blocks.count],
                values: RowValues(layout: layout, storage: values.storage, row: values.row), toOne: toOne))
        }
        let entity: Int
        if let last = entityOfRow.last, last != Self.wholeRow, entities[Int(last >> 16)].layout === layout,
            entities[Int(last >> 16)].name == entityName
        {
            entity = Int(last >> 16)
        } else if let found = entities.firstIndex(where: { $0.layout === layout && $0.name == entityName }) {
            entity = found
        } else {
            precondition(entities.count < Int(UInt16.max), "CompactRows: too many entities")
            entity = entities.count
            entities.append((entityName, layout, nil))
        }
        if values == nil, entities[entity].nulls == nil {
            entities[entity].nulls = RowValues(layout: layout, slots: Array(repeating: .null, count: layout.names.count))
        }
        entityOfRow.append(UInt32(entity) << 16 | UInt32(values?.row ?? 0))
        blocks.append(values?.storage)
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
        let packed = entityOfRow[position]
        let entity = Int(packed >> 16)
        // Each field read where it lies (a copy of the entity's tuple retained and released all three).
        let values = blocks[position].map { RowValues(layout: entities[entity].layout, storage: $0, row: Int(packed & 0xFFFF)) }
            ?? entities[entity].nulls!
        return StoreRow(
            entityName: entities[entity].name, primaryKey: keys[position], values: values,
            toOne: position < toOne.count ? toOne[position] : [:])
    }
}

import SwitchyardModel

// MARK: - StoreRows

/// The new rows of a `StoreChangeSet`: a random-access collection of `StoreRow`s, built like an array.
///
/// ```swift
/// var changes = StoreChangeSet()
/// changes.inserts = [StoreRow(entityName: "Chat", primaryKey: 1, values: ["title": .string("Team")])]
/// changes.inserts.append(StoreRow(entityName: "Chat", primaryKey: 2, values: ["title": .string("Family")]))
/// changes.inserts[1].version = 3
/// try store.save(changes)
/// ```
///
/// It was an array (`[StoreRow]`) before: code that assigns an array writes `StoreRows(array)`, and code that needs
/// an array writes `Array(changes.inserts)`. A context saving its new objects fills it with the objects' own value
/// blocks rather than a `StoreRow` each, and each row is made as it is read: 12 bytes a row (20 once a row has a
/// to-one) where a `StoreRow` takes 64. Any change to such a collection first turns it into plain rows.
public struct StoreRows: RandomAccessCollection, MutableCollection, RangeReplaceableCollection, ExpressibleByArrayLiteral,
    Sendable, Hashable, CustomStringConvertible, CustomReflectable
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
        get {
            // Read in place: `if let compact` copied the compact rows, a retain and a release of each of their
            // arrays for every row read (about a third of the atomic operations of a store reading a new row).
            if let row = compact?.row(at: position) { return row }
            return rows[position]
        }
        set {
            materialize()
            rows[position] = newValue
        }
    }

    /// Replaces the rows in `subrange` with `newElements`.
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == StoreRow {
        materialize()
        rows.replaceSubrange(subrange, with: newElements)
    }

    /// Adds `row` at the end.
    public mutating func append(_ row: StoreRow) {
        materialize()
        rows.append(row)
    }

    /// Adds `newRows` at the end, in order.
    public mutating func append<S: Sequence>(contentsOf newRows: S) where S.Element == StoreRow {
        materialize()
        rows.append(contentsOf: newRows)
    }

    /// Makes room for `n` rows (rows made as they are read are kept so until changed).
    public mutating func reserveCapacity(_ n: Int) {
        guard compact == nil else { return }
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

    /// The rows, as `dump` shows an array's.
    public var customMirror: Mirror { Mirror(self, unlabeledChildren: Array(self), displayStyle: .collection) }
}

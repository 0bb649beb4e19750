import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - LMDBBytePredicate

/// A predicate compiled against LMDB's row encoding, for scans that count rows: comparisons of one of the
/// entity's own attributes with a constant (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`, without
/// `[c]`/`[d]`), combined with AND, OR and NOT, read straight from the encoded bytes — no `AttributeValue`,
/// `String` or key path is built per row.
///
/// Results are exactly `PredicateEvaluator`'s (three-valued logic; numbers compared by their exact
/// values, an integer with a double as SQLite compares them; strings by UTF-8 bytes; storage classes ordered null < number
/// < text). A row holding a kind this path does not read (decimal, data, UUID, URI) answers nil, and the
/// caller evaluates it the general way. Anything else in the predicate means it is not compiled at all.
package struct LMDBBytePredicate {
    /// A constant side of a comparison.
    package enum Constant {
        case null
        /// An integer or a boolean (0 or 1): compared exactly with every number.
        case exact(Int64)
        /// A double or a date (seconds since 2001).
        case number(Double)
        case text([UInt8])
    }

    package indirect enum Node {
        case constant(Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        /// `slot op constant`; `nullTest` when the predicate compares with a literal nil (`IS [NOT] NULL`).
        case compare(slot: Int, op: ComparisonOperator, constant: Constant, nullTest: Bool)
        /// `slot IN {constants}`.
        case member(slot: Int, list: LMDBMemberList)
    }

    /// One attribute's value in a row.
    package enum Scalar {
        case null
        case exact(Int64)
        case number(Double)
        case text(UnsafeRawBufferPointer)
        /// A kind this path does not read.
        case other
    }

    package let root: Node
    /// The attribute each slot reads.
    package let names: [String]

    /// Compiles `predicate` for rows of `entity`; nil when some part of it is not of the supported shape.
    package init?(_ predicate: FetchPredicate, entity: EntityDescription) {
        var names: [String] = []
        func slot(_ path: [String]) -> Int? {
            guard path.count == 1, let attribute = entity.attribute(named: path[0]), !attribute.isTransient else { return nil }
            if let i = names.firstIndex(of: path[0]) { return i }
            names.append(path[0])
            return names.count - 1
        }
        func constant(_ operand: PredicateOperand) -> Constant? {
            guard case .constant(let value) = operand else { return nil }
            switch value {
            case .null: return .null
            case .integer(let i): return .exact(i)
            case .bool(let b): return .exact(b ? 1 : 0)
            case .double(let d): return .number(d)
            case .date(let d): return .number(d.timeIntervalSinceReferenceDate)
            case .string(let s): return .text(Array(s.utf8))
            default: return nil
            }
        }
        func compile(_ predicate: FetchPredicate) -> Node? {
            switch predicate {
            case .constant(let value): return .constant(value)
            case .and(let parts):
                let nodes = parts.compactMap(compile)
                return nodes.count == parts.count ? .and(nodes) : nil
            case .or(let parts):
                let nodes = parts.compactMap(compile)
                return nodes.count == parts.count ? .or(nodes) : nil
            case .not(let inner): return compile(inner).map { .not($0) }
            case .comparison(let c):
                guard c.options.isEmpty, c.modifier == .direct else { return nil }
                var op = c.op
                var left = c.left, right = c.right
                if case .constant = left, case .keyPath = right {
                    // `5 < x` is `x > 5`.
                    switch op {
                    case .equal, .notEqual: break
                    case .less: op = .greater
                    case .lessOrEqual: op = .greaterOrEqual
                    case .greater: op = .less
                    case .greaterOrEqual: op = .lessOrEqual
                    default: return nil
                    }
                    swap(&left, &right)
                }
                guard case .keyPath(let path) = left, let s = slot(path) else { return nil }
                let nullTest = c.left == .constant(.null) || c.right == .constant(.null)
                switch op {
                case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
                    guard let k = constant(right) else { return nil }
                    return .compare(slot: s, op: op, constant: k, nullTest: nullTest)
                case .between:
                    guard case .list(let bounds) = right, bounds.count == 2, let lo = constant(bounds[0]), let hi = constant(bounds[1])
                    else { return nil }
                    return .and([
                        .compare(slot: s, op: .greaterOrEqual, constant: lo, nullTest: false),
                        .compare(slot: s, op: .lessOrEqual, constant: hi, nullTest: false),
                    ])
                case .in:
                    if case .list(let elements) = right {
                        let list = elements.compactMap(constant)
                        return list.count == elements.count ? .member(slot: s, list: LMDBMemberList(list)) : nil
                    }
                    return constant(right).map { .member(slot: s, list: LMDBMemberList([$0])) }
                default:
                    return nil
                }
            }
        }
        guard let root = compile(predicate) else { return nil }
        self.root = root
        self.names = names
    }

    // MARK: Evaluation

    /// One walk's evaluation state: what each layout's rows need (found once per layout, the current one kept
    /// in plain fields) and the buffer a row's values are read into. A value, used by one walk on one thread.
    package struct Scan {
        package let predicate: LMDBBytePredicate
        package let schema: LMDBSchema
        /// Per layout: the slot each attribute position feeds (-1 for none), and each slot's value when the row
        /// does not hold it (the layout's implicit default, or null when the layout lacks the attribute).
        private struct LayoutSlots {
            let layout: LMDBEntityLayout
            let slotAtPosition: [Int]
            let defaults: [Scalar]
            let wanted: Int
        }
        private var layouts: [Int: LayoutSlots] = [:]
        /// Which entity numbers the walk counts (`LMDBReader.family(of:includesSubentities:)`): a row of any
        /// other entity, known or not, does not match. Checked once per change of entity number, not per row.
        private let family: [Bool]
        private var currentNumber = -1
        private var currentInFamily = false
        private var currentLayout: LMDBEntityLayout?
        /// `currentLayout`'s number of attribute positions, read without touching the layout per row.
        private var currentWidth = 0
        private var slotAtPosition: [Int] = []
        private var defaults: [Scalar] = []
        private var wanted = 0
        private var values: [Scalar]
        private var isRead: [Bool]
        /// Bytes of string defaults, kept for as long as the walk.
        private let owned = OwnedBytes()
        /// Whether the predicate reads one attribute (`score >= 5`, `a > 1 AND a < 9`): no buffer, one value.
        private let isOneSlot: Bool
        /// For one attribute, its position in the current layout (-1 when the layout lacks it) and its value
        /// when a row does not hold it: plain fields, so the per-row path reads no array.
        private var onePosition = -1
        private var oneDefault: Scalar = .null
        /// Whether the predicate is one comparison of its one attribute with a non-null constant (`score >= 5`):
        /// decided per row without walking the predicate's tree, from `singleOp` and `singleConstant` (plain
        /// fields: binding an optional tuple copied the constant at every row).
        private let isSingle: Bool
        private let singleOp: ComparisonOperator
        private let singleConstant: Constant

        package init(_ predicate: LMDBBytePredicate, schema: LMDBSchema, family: [Bool]) {
            self.predicate = predicate
            self.schema = schema
            self.family = family
            isOneSlot = predicate.names.count == 1
            if predicate.names.count == 1, case .compare(0, let op, let constant, false) = predicate.root, !LMDBBytePredicate.isNull(constant) {
                (isSingle, singleOp, singleConstant) = (true, op, constant)
            } else {
                (isSingle, singleOp, singleConstant) = (false, .equal, .null)
            }
            values = Array(repeating: .null, count: predicate.names.count)
            isRead = Array(repeating: false, count: predicate.names.count)
        }

        /// Rows of the family the walk has read (what `LMDBReader.rowsVisited` counts).
        package private(set) var rowsInFamily = 0

        /// The predicate's result on one encoded row; false for a row of an entity outside the family; nil when
        /// the row holds a value this path does not read.
        package mutating func matches(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64) throws -> Bool? {
            var r = LMDBByteReader(bytes)
            // The entity number first: a row outside the family is skipped before anything else of it is read.
            let number = try LMDBRowCoding.readEntityNumber(&r)
            if number != currentNumber { try enter(number, primaryKey: primaryKey) }
            guard currentInFamily else { return false }
            rowsInFamily += 1
            _ = try r.signed()   // Z_OPT
            // The common case, one attribute (`score >= 5`, `a > 1 AND a < 9`): no buffer, one value.
            if isOneSlot {
                var value = oneDefault
                if onePosition >= 0 {
                    while let found = try LMDBRowCoding.nextAttribute(&r, width: currentWidth, layout: currentLayout!, primaryKey: primaryKey) {
                        guard found == onePosition else {
                            try LMDBRowCoding.skipValue(&r)
                            continue
                        }
                        guard let read = try Self.read(&r) else { return nil }
                        value = read
                        break
                    }
                }
                if case .other = value { return nil }
                if isSingle {
                    // Null compared with a constant is unknown, which does not match.
                    if LMDBBytePredicate.isNull(value) { return false }
                    return LMDBBytePredicate.holds(singleOp, LMDBBytePredicate.order(value, singleConstant))
                }
                if case .true = predicate.truth(predicate.root, { _ in value }) { return true }
                return false
            }
            let count = values.count
            for i in 0..<count { isRead[i] = false }
            var missing = wanted
            while missing > 0, let found = try LMDBRowCoding.nextAttribute(&r, width: currentWidth, layout: currentLayout!, primaryKey: primaryKey) {
                let target = slotAtPosition[found]
                guard target >= 0 else {
                    try LMDBRowCoding.skipValue(&r)
                    continue
                }
                guard let read = try Self.read(&r) else { return nil }
                values[target] = read
                if !isRead[target] { missing -= 1 }
                isRead[target] = true
            }
            for i in 0..<count where !isRead[i] {
                // Not in the row: the layout's implicit default (a value only a migration added), or null.
                if case .other = defaults[i] { return nil }
                values[i] = defaults[i]
            }
            let values = self.values
            if case .true = predicate.truth(predicate.root, { values[$0] }) { return true }
            return false
        }

        /// One tagged value; nil for a kind this path does not read. A double or date inline, the rest out of line.
        @inline(__always)
        private static func read(_ r: inout LMDBByteReader) throws -> Scalar? {
            if let number = r.taggedDouble() { return .number(number) }
            return try readAny(&r)
        }

        @inline(never)
        private static func readAny(_ r: inout LMDBByteReader) throws -> Scalar? {
            typealias Tag = LMDBRowCoding.Tag
            let raw = try r.byte()
            switch raw {
            case Tag.integer.rawValue: return .exact(try r.signed())
            case Tag.double.rawValue, Tag.date.rawValue: return .number(try r.double())
            case Tag.string.rawValue: return .text(try r.lengthPrefixed())
            case Tag.boolFalse.rawValue: return .exact(0)
            case Tag.boolTrue.rawValue: return .exact(1)
            case Tag.null.rawValue: return .null
            case Tag.decimal.rawValue, Tag.binary.rawValue, Tag.uuid.rawValue, Tag.uri.rawValue: return nil
            default: throw LMDBRowCoding.unknownTag(raw)
            }
        }

        /// Makes the layout of entity `number` the current one.
        private mutating func enter(_ number: Int, primaryKey: Int64) throws {
            currentNumber = number
            // Outside the family (an unknown number too): skipped, as a fetch skips it, without its layout.
            currentInFamily = number >= 0 && number < family.count && family[number]
            guard currentInFamily else { return }
            guard let layout = schema.layout(number: number) else {
                throw LMDBRowCoding.DecodingError(description: "row p\(primaryKey) has unknown entity number \(number)")
            }
            let slots = layouts[number] ?? makeSlots(for: layout)
            layouts[number] = slots
            currentLayout = layout
            currentWidth = layout.attributeNames.count
            slotAtPosition = slots.slotAtPosition
            defaults = slots.defaults
            wanted = slots.wanted
            if isOneSlot {
                onePosition = slots.slotAtPosition.firstIndex(of: 0) ?? -1
                oneDefault = slots.defaults[0]
            }
        }

        private func makeSlots(for layout: LMDBEntityLayout) -> LayoutSlots {
            var slotAtPosition = Array(repeating: -1, count: layout.attributeNames.count)
            var defaults: [Scalar] = []
            var wanted = 0
            for (slot, name) in predicate.names.enumerated() {
                guard let position = layout.attributeIndex[name: name] else {
                    defaults.append(.null)
                    continue
                }
                slotAtPosition[position] = slot
                wanted += 1
                defaults.append(owned.scalar(layout.implicitDefault(at: position)))
            }
            return LayoutSlots(layout: layout, slotAtPosition: slotAtPosition, defaults: defaults, wanted: wanted)
        }
    }

    /// Keeps the bytes of string constants a scan points into, until the scan is gone.
    package final class OwnedBytes {
        private var buffers: [UnsafeMutableRawBufferPointer] = []

        deinit { for buffer in buffers { buffer.deallocate() } }

        package func scalar(_ value: AttributeValue) -> Scalar {
            switch value {
            case .null: return .null
            case .integer(let i): return .exact(i)
            case .bool(let b): return .exact(b ? 1 : 0)
            case .double(let d): return .number(d)
            case .date(let d): return .number(d.timeIntervalSinceReferenceDate)
            case .string(let s):
                let bytes = Array(s.utf8)
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                buffer.copyBytes(from: bytes)
                buffers.append(buffer)
                return .text(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count]))
            default: return .other
            }
        }
    }

    @inline(__always)
    private func truth(_ node: Node, _ value: (Int) -> Scalar) -> Truth {
        switch node {
        case .constant(let value): return Truth(value)
        case .and(let parts):
            var result = Truth.true
            for part in parts {
                result = result && truth(part, value)
                if result == .false { return .false }
            }
            return result
        case .or(let parts):
            var result = Truth.false
            for part in parts {
                result = result || truth(part, value)
                if result == .true { return .true }
            }
            return result
        case .not(let inner): return !truth(inner, value)
        case .compare(let slot, let op, let constant, let nullTest):
            let value = value(slot)
            if nullTest, op == .equal || op == .notEqual {
                let same = Self.isNull(value) ? Self.isNull(constant) : (!Self.isNull(constant) && Self.order(value, constant) == .orderedSame)
                return Truth(op == .equal ? same : !same)
            }
            if Self.isNull(value) || Self.isNull(constant) { return .unknown }
            return Truth(Self.holds(op, Self.order(value, constant)))
        case .member(let slot, let list):
            if list.isEmpty { return .false }
            let value = value(slot)
            if Self.isNull(value) { return .unknown }
            if list.contains(value) { return .true }
            return list.containsNull ? .unknown : .false
        }
    }

    /// Whether `op` holds for two values in this order (the compiled comparisons are the six of `<`, `==`, …).
    @inline(__always)
    fileprivate static func holds(_ op: ComparisonOperator, _ order: ComparisonResult) -> Bool {
        switch op {
        case .equal: return order == .orderedSame
        case .notEqual: return order != .orderedSame
        case .less: return order == .orderedAscending
        case .lessOrEqual: return order != .orderedDescending
        case .greater: return order == .orderedDescending
        default: return order != .orderedAscending
        }
    }

    @inline(__always)
    fileprivate static func isNull(_ value: Scalar) -> Bool {
        if case .null = value { return true }
        return false
    }

    @inline(__always)
    fileprivate static func isNull(_ constant: Constant) -> Bool {
        if case .null = constant { return true }
        return false
    }

    /// `AttributeValue.order` for a non-null row value and a non-null constant.
    @inline(__always)
    fileprivate static func order(_ value: Scalar, _ constant: Constant) -> ComparisonResult {
        func result<T: Comparable>(_ l: T, _ r: T) -> ComparisonResult {
            l == r ? .orderedSame : (l < r ? .orderedAscending : .orderedDescending)
        }
        switch (value, constant) {
        case (.exact(let l), .exact(let r)): return result(l, r)
        case (.exact(let l), .number(let r)): return AttributeValue.compare(l, r)
        case (.number(let l), .exact(let r)): return AttributeValue.compare(l, r)
        case (.number(let l), .number(let r)): return result(l, r)
        case (.text(let l), .text(let r)):
            let c = r.withUnsafeBytes { LMDBMemberList.compare(l, $0) }
            return c == 0 ? .orderedSame : (c < 0 ? .orderedAscending : .orderedDescending)
        // Numbers before text, as SQLite orders storage classes.
        case (.exact, .text), (.number, .text): return .orderedAscending
        case (.text, .exact), (.text, .number): return .orderedDescending
        default: return .orderedSame   // nulls and `.other` never get here
        }
    }
}

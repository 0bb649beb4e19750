import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardQuery

// MARK: - Long IN lists

extension SQLPredicateCompiler {
    /// Lists longer than this bind as one JSON array (see `jsonArray(of:hint:)`).
    private static var longListLength: Int { 16 }

    /// `l IN values` for a list longer than `longListLength` as one bound JSON array: `jsonArray(of:hint:)`
    /// for texts and integers, `taggedArray(of:hint:)` for the rest. Nil (the list is bound element by
    /// element) for a short list, or one holding what neither form carries.
    static func longList(_ l: SQLFragment, _ values: [Operand], hint: AttributeType?) -> SQLFragment? {
        guard values.count > longListLength, jsonEachAvailable else { return nil }
        if let json = jsonArray(of: values, hint: hint) {
            return l + SQLFragment(
                " IN (SELECT value FROM json_each(?))", [json.databaseValue], bindsLongJSONList: json.utf8.count > cachedJSONLength)
        }
        guard let (json, holdsNull, holdsWideInteger) = taggedArray(of: values, hint: hint) else { return nil }
        // A REAL column's affinity is applied to the subquery's values, turning an integer beyond 2^53 into the
        // nearest double, where SQLite compares a list of parameters with NUMERIC affinity, exactly. Such a list
        // compares without affinity on the column (numbers compare exactly then; texts in the list have already
        // taken the affinity away), which gives up the column's index: only then.
        let real = hint == .double || hint == .float
        let column = real && holdsWideInteger && !l.sql.hasPrefix("+") ? "+" + l : l
        let list = column + SQLFragment(
            " IN (SELECT \(listValueFunctionName)(value) FROM json_each(?))", [json.databaseValue],
            bindsLongJSONList: json.utf8.count > cachedJSONLength)
        // `l IN (..., NULL)` is unknown rather than false where l is not found; `OR NULL` says the same.
        return holdsNull ? "(" + list + " OR NULL)" : list
    }

    /// A long `IN` list of texts and integers as one JSON array, read back by `json_each`: one parameter instead
    /// of one per element. A prefetch's list holds a key per source, which went past the most parameters SQLite
    /// binds (32,766 by default, 250,000 in Debian's build), and preparing and binding thousands of them cost
    /// more than the lookups; the statement's text no longer changes with the list's length either, so it is
    /// prepared once per connection. `json_each` hands back a JSON string as TEXT and an integer as INTEGER,
    /// the storage classes the elements bind as. Its `value` column has BLOB affinity where a bound parameter has
    /// none, so SQLite does not apply a TEXT column's affinity to it as it does to a list's elements: integers
    /// compared with a text column would stop matching text that reads as them (`'5'`). Those lists stay
    /// element by element (`withoutAffinity` already takes the affinity away when the list holds a number);
    /// with the same storage class on both sides, and for numeric columns, both forms give the same rows.
    ///
    /// Nil (the list is bound element by element) when SQLite lacks `json_each`, an element is not a constant
    /// that binds as text without U+0000 or as an integer, or an integer is compared with a text column.
    private static func jsonArray(of values: [Operand], hint: AttributeType?) -> String? {
        let textColumn = hint == .string || hint == .uri || hint == .objectID
        // Built as bytes and made a String once: appending to a String per element cost more than the lookups.
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(values.count * 24)
        for (i, value) in values.enumerated() {
            guard case .constant(let constant) = value, !constant.isNull, !constant.holdsNUL else { return nil }
            if i > 0 { json.append(UInt8(ascii: ",")) }
            switch SQLiteValueCoding.bind(constant, hint: hint).storage {
            case .int64(let integer):
                guard !textColumn else { return nil }
                json.append(contentsOf: String(integer).utf8)
            case .string(let text): appendJSONString(text, to: &json, tag: nil)
            default: return nil
            }
        }
        json.append(UInt8(ascii: "]"))
        return String(decoding: json, as: UTF8.self)
    }

    /// The rows of a long `IN` list that drives a query (see `drivingList`): a JSON array of the list's texts
    /// (a text column) or integers (an integer column), each once, since a join returns a row once per equal
    /// value. Texts are told apart by their bytes, as SQLite's binary collation tells them apart (Swift's `==`
    /// takes canonically equivalent texts as one). Nil for a short list, one holding anything else (NULL, a
    /// text with U+0000, a number for a text column or the reverse), or when SQLite lacks `json_each`.
    static func distinctJSONList(_ items: [PredicateOperand], type: AttributeType) -> String? {
        guard items.count > longListLength, jsonEachAvailable else { return nil }
        var json: [UInt8] = [UInt8(ascii: "[")]
        switch type {
        case .string:
            json.reserveCapacity(items.count * 24)
            // Each text's JSON form is its bytes, escaped the one way appendJSONString escapes: equal forms are
            // equal texts. A duplicate's form is taken off again.
            var seen = EncodedSpans(capacity: items.count)
            for item in items {
                guard case .constant(.string(var text)) = item,
                      text.withUTF8({ $0.isEmpty || memchr($0.baseAddress!, 0, $0.count) == nil })
                else { return nil }
                let mark = json.count
                if json.count > 1 { json.append(UInt8(ascii: ",")) }
                let start = json.count
                appendJSONString(text, to: &json, tag: nil)
                if !seen.insert(start..<json.count, of: json) { json.removeSubrange(mark...) }
            }
        case .integer16, .integer32, .integer64:
            json.reserveCapacity(items.count * 8)
            var seen = Set<Int64>(minimumCapacity: items.count)
            for item in items {
                guard case .constant(.integer(let integer)) = item else { return nil }
                guard seen.insert(integer).inserted else { continue }
                if json.count > 1 { json.append(UInt8(ascii: ",")) }
                json.append(contentsOf: String(integer).utf8)
            }
        default:
            return nil
        }
        json.append(UInt8(ascii: "]"))
        return String(decoding: json, as: UTF8.self)
    }

    /// Byte ranges of one buffer, each once by content: open addressing over `ByteHash`es, the ranges compared
    /// with `memcmp`. (A `Set` of the texts hashed with `Hasher` cost more than SQLite's temporary index this
    /// de-duplication lets a driving list avoid: 1,700 instructions a text in callgrind, against about 200.)
    private struct EncodedSpans {
        private var spans: [Range<Int>] = []
        /// Index into `spans` plus one; 0 is empty. A power of two at least twice the capacity.
        private var table: [Int32]

        init(capacity: Int) {
            var size = 16
            while size < capacity * 2 { size *= 2 }
            table = Array(repeating: 0, count: size)
            spans.reserveCapacity(capacity)
        }

        /// Adds `span` of `buffer` unless an equal one is in; whether it was added.
        mutating func insert(_ span: Range<Int>, of buffer: [UInt8]) -> Bool {
            if spans.count * 2 >= table.count { grow(buffer) }
            return buffer.withUnsafeBufferPointer { bytes in
                let mask = table.count - 1
                let hash = ByteHash.hash(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[span])))
                var slot = Int(truncatingIfNeeded: hash) & mask
                while table[slot] != 0 {
                    let other = spans[Int(table[slot]) - 1]
                    if other.count == span.count
                        && memcmp(bytes.baseAddress! + other.lowerBound, bytes.baseAddress! + span.lowerBound, span.count) == 0 {
                        return false
                    }
                    slot = (slot + 1) & mask
                }
                spans.append(span)
                table[slot] = Int32(spans.count)
                return true
            }
        }

        private mutating func grow(_ buffer: [UInt8]) {
            let old = spans
            spans.removeAll(keepingCapacity: true)
            table = Array(repeating: 0, count: table.count * 2)
            for span in old { _ = insert(span, of: buffer) }
        }
    }

    /// Appends `text` as a JSON string, `tag` before it inside the quotes: `"` and `\` escaped, control
    /// characters as `\u00XX`, the rest as is.
    private static func appendJSONString(_ text: String, to json: inout [UInt8], tag: UInt8?) {
        json.append(UInt8(ascii: "\""))
        if let tag { json.append(tag) }
        func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        // Nearly every key needs no escape: its bytes are copied at once.
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: needsEscape) else { return false }
            json.append(contentsOf: bytes)
            return true
        } ?? false
        if copied {
            json.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case 0..<0x20:
                json.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                json.append(hexDigits[Int(byte >> 4)])
                json.append(hexDigits[Int(byte & 0xF)])
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }

    /// A long `IN` list of any constants as one JSON array of tagged texts, each turned back into the value it
    /// binds as by `SWITCHYARD_LIST_VALUE` (`listValueFunction`): `i` and an integer, `r` and the bits of a
    /// double, `t` and a text, `b` and a blob in base 64. Doubles and dates (REAL), UUIDs and data (BLOB) have
    /// no exact JSON form, and lists of them went past the most parameters SQLite binds. The function's result
    /// has no affinity, as a bound parameter has none, so SQLite compares it with the column as it compares a
    /// list's elements (`json_each`'s own `value` column has BLOB affinity; see `jsonArray(of:hint:)`); the
    /// subquery does not depend on the row, so SQLite decodes the list once. NULL elements are left out and
    /// reported (`holdsNull`): `IN` with a NULL is unknown where the value is not found. `holdsWideInteger`:
    /// an integer beyond 2^53, which no double holds exactly.
    ///
    /// Nil (the list is bound element by element) when an element is not a constant or is text holding U+0000,
    /// which SQLite's text functions end at.
    private static func taggedArray(
        of values: [Operand], hint: AttributeType?
    ) -> (json: String, holdsNull: Bool, holdsWideInteger: Bool)? {
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(values.count * 28)
        var holdsNull = false, holdsWideInteger = false
        for value in values {
            guard case .constant(let constant) = value, !constant.holdsNUL else { return nil }
            if constant.isNull {
                holdsNull = true
                continue
            }
            let element: (tag: UInt8, text: String)
            switch SQLiteValueCoding.bind(constant, hint: hint).storage {
            case .int64(let integer):
                element = (ListTag.integer, String(integer))
                if integer.magnitude > 1 << 53 { holdsWideInteger = true }
            case .double(let double): element = (ListTag.double, String(double.bitPattern))
            case .string(let text): element = (ListTag.text, text)
            case .blob(let data): element = (ListTag.blob, data.base64EncodedString())
            case .null:
                holdsNull = true
                continue
            }
            if json.count > 1 { json.append(UInt8(ascii: ",")) }
            appendJSONString(element.text, to: &json, tag: element.tag)
        }
        json.append(UInt8(ascii: "]"))
        return (String(decoding: json, as: UTF8.self), holdsNull, holdsWideInteger)
    }

    static let listValueFunctionName = "SWITCHYARD_LIST_VALUE"

    /// The first byte of a `taggedArray(of:hint:)` element: what the rest of it stands for.
    private enum ListTag {
        static let integer = UInt8(ascii: "i")
        static let double = UInt8(ascii: "r")
        static let text = UInt8(ascii: "t")
        static let blob = UInt8(ascii: "b")
    }

    /// `SWITCHYARD_LIST_VALUE(tagged)`: the value a `taggedArray(of:hint:)` element stands for; NULL for text
    /// it did not write. Pure and deterministic.
    static let listValueFunction = DatabaseFunction(listValueFunctionName, argumentCount: 1, pure: true) { values in
        guard case .string(let tagged) = values[0].storage, let tag = tagged.utf8.first else { return nil }
        let body = Substring(tagged.utf8.dropFirst())
        switch tag {
        case ListTag.integer: return Int64(body)
        case ListTag.double: return UInt64(body).map { Double(bitPattern: $0) }
        case ListTag.text: return String(body)
        case ListTag.blob: return Data(base64Encoded: String(body))
        default: return nil
        }
    }

    /// The longest JSON list a cached statement may keep bound (see `SQLFragment.bindsLongJSONList`).
    static let cachedJSONLength = 4_096

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether this process's SQLite has `json_each` (built in since 3.38 unless compiled out): asked once.
    private static let jsonEachAvailable: Bool = {
        do {
            let probe = try DatabaseQueue()
            return try probe.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM json_each('[1,\"a\"]')") } == 2
        } catch {
            return false   // no json_each: lists bind element by element
        }
    }()
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - LMDBRowCoding

/// The `rows` database value: a compact, versioned, self-describing encoding of one `StoreRow`.
///
/// ```
/// format version (1 byte: 2; 1 for rows written before it, in ascending position)
/// concrete entity number            unsigned LEB128
/// Z_OPT                             zigzag LEB128
/// attributes:  (position + 1, type tag, payload)*  then 0     position in LMDBEntityLayout.attributeNames
/// to-ones:     (position + 1, entity number, primary key)* then 0
/// ```
/// Attributes may come in any order, each position at most once: a new row is written in the layout's
/// `writeOrder` (fixed-size values first, so scans comparing numbers step over little), an update keeps the
/// stored row's order, and rows written by earlier versions are in ascending position. Readers take them as
/// they come. Only non-null attributes and set relationships are written. Each value carries its own type tag, so a
/// row decodes to the same `AttributeValue` it was saved as without consulting the attribute's type.
/// An attribute added by a migration with a default is not written into existing rows: its position has an
/// implicit default in the stored layout (`LMDBEntityLayout.implicitDefaults`), which a row that lacks the
/// position reads; a row that holds nil there says so with the `null` tag.
package enum LMDBRowCoding {
    /// The format byte rows are written with: 2 since rows may hold their attributes in any order (see the
    /// type's comment), so a Switchyard from before refuses them ("written by a newer Switchyard?") rather than
    /// patch one by ascending position and lose the update. Format 1 rows (ascending) are read as ever.
    package static let formatVersion: UInt8 = 2

    /// A value's type tag.
    package enum Tag: UInt8 {
        case integer = 1, double, decimal, string, boolFalse, boolTrue, date, binary, uuid, uri
        /// An explicit nil, written only at positions with an implicit default.
        case null
    }

    /// A row that cannot be decoded (damaged, or written by a newer format).
    package struct DecodingError: Error, CustomStringConvertible, LocalizedError {
        package let description: String
        package var errorDescription: String? { description }
    }

    /// The error for the row `primaryKey` of the store at `path` that cannot be decoded (`error` says why):
    /// one wording for every reader.
    package static func damagedRow(path: String, primaryKey: Int64, _ error: any Error) -> StoreError {
        let reason = error is LMDBByteReader.Overrun ? "it ends early" : "\(error)"
        return StoreError.notAStore(path: path, expected: .lmdb, reason: "damaged row p\(primaryKey): \(reason)")
    }

    /// Runs `body`, reporting a row it cannot decode as `damagedRow`.
    package static func reportingDamage<T>(path: String, primaryKey: Int64, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch where error is DecodingError || error is LMDBByteReader.Overrun {
            throw damagedRow(path: path, primaryKey: primaryKey, error)
        }
    }

    // MARK: - Encoding

    /// Appends the encoding of `image` (values already normalized) to `writer`.
    package static func encode(_ image: LMDBRowImage, into writer: inout LMDBByteWriter) {
        encodeAttributes(layout: image.layout, version: image.version, into: &writer) { image.attributes[$0] }
        for (position, target) in image.toOnes.enumerated() {
            guard let target else { continue }
            writer.unsigned(UInt64(position + 1))
            writer.unsigned(UInt64(target.number))
            writer.signed(target.primaryKey)
        }
        writer.byte(0)
    }

    /// Appends the encoding of a row of `layout` with no to-one, whose value at each position `value` gives
    /// (normalized): the bytes `encode(_:into:)` writes for the image holding those values, without the image
    /// (a new row's values go from the change set to the bytes, see `LMDBStore.apply`).
    @inline(__always)
    package static func encodeRow(
        layout: LMDBEntityLayout, version: Int64, into writer: inout LMDBByteWriter, value: (Int) throws -> AttributeValue
    ) rethrows {
        try encodeAttributes(layout: layout, version: version, into: &writer, value: value)
        writer.byte(0)
    }

    /// The header and attributes of a row, in `layout.writeOrder`, and the byte that ends them. A null value is
    /// left out, except where the model's default would otherwise fill it in (`implicitDefaultPositions`).
    @inline(__always)
    private static func encodeAttributes(
        layout: LMDBEntityLayout, version: Int64, into writer: inout LMDBByteWriter, value: (Int) throws -> AttributeValue
    ) rethrows {
        writer.byte(formatVersion)
        writer.unsigned(UInt64(layout.number))
        writer.signed(version)
        let defaults = layout.implicitDefaultPositions
        for position in layout.writeOrder {
            let value = try value(position)
            if value.isNull {
                guard !defaults.isEmpty, defaults.contains(position) else { continue }
                writer.unsigned(UInt64(position + 1))
                writer.byte(Tag.null.rawValue)
                continue
            }
            writer.unsigned(UInt64(position + 1))
            encode(value, into: &writer)
        }
        writer.byte(0)
    }

    /// Appends the encoding of `row`, whose entity is `layout`'s (keys the layout does not know are skipped).
    package static func encode(_ row: StoreRow, layout: LMDBEntityLayout, schema: LMDBSchema, into writer: inout LMDBByteWriter) {
        encode(image(of: row, layout: layout, schema: schema), into: &writer)
    }

    /// `row` by position.
    package static func image(of row: StoreRow, layout: LMDBEntityLayout, schema: LMDBSchema) -> LMDBRowImage {
        var image = LMDBRowImage(layout: layout, primaryKey: row.primaryKey, version: row.version)
        for (name, value) in row.values {
            if let i = layout.attributeIndex[name: name] { image.attributes[i] = value }
        }
        for (name, target) in row.toOne {
            if let i = layout.toOneIndex[name], let number = schema.numbers[target.entityName] {
                image.toOnes[i] = LMDBRowImage.Target(number: number, primaryKey: target.primaryKey)
            }
        }
        return image
    }

    /// One tagged value.
    package static func encode(_ value: AttributeValue, into w: inout LMDBByteWriter) {
        switch value {
        case .null:
            break   // never written: absent means null
        case .integer(let i):
            w.byte(Tag.integer.rawValue)
            w.signed(i)
        case .double(let d):
            w.byte(Tag.double.rawValue)
            w.double(d)
        case .decimal(let d):
            w.byte(Tag.decimal.rawValue)
            encode(decimal: d, into: &w)
        case .string(let s):
            w.byte(Tag.string.rawValue)
            w.lengthPrefixed(s.utf8)
        case .bool(let b):
            w.byte(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .date(let date):
            w.byte(Tag.date.rawValue)
            w.double(date.timeIntervalSinceReferenceDate)
        case .binary(let data):
            w.byte(Tag.binary.rawValue)
            w.lengthPrefixed(data)
        case .uuid(let uuid):
            w.byte(Tag.uuid.rawValue)
            withUnsafeBytes(of: uuid.uuid) { w.bytes.append(contentsOf: $0) }
        case .uri(let url):
            w.byte(Tag.uri.rawValue)
            w.lengthPrefixed(url.absoluteString.utf8)
        }
    }

    /// A decimal as flags (bit 0 negative, bit 1 NaN), the exponent, and the significand's decimal digits:
    /// exact for all 38 digits and every exponent, using only Foundation's public API.
    private static func encode(decimal d: Decimal, into w: inout LMDBByteWriter) {
        if d.isNaN {
            w.byte(2)
            return
        }
        w.byte(d.sign == .minus && !d.isZero ? 1 : 0)
        w.signed(Int64(d.exponent))
        w.lengthPrefixed(d.significand.magnitude.description.utf8)
    }

    // MARK: - Decoding

    /// The concrete entity number of an encoded row, read without decoding the rest.
    @inline(__always)
    package static func entityNumber(of bytes: UnsafeRawBufferPointer) throws -> Int {
        var r = LMDBByteReader(bytes)
        return try readEntityNumber(&r)
    }

    /// Reads a row's format version and entity number (the caller looks the entity up, or recognises the one
    /// it saw last), leaving the reader at its Z_OPT.
    @inline(__always)
    static func readEntityNumber(_ r: inout LMDBByteReader) throws -> Int {
        try checkVersion(&r)
        return Int(truncatingIfNeeded: try r.unsigned())
    }

    /// Decodes a whole row straight into a `StoreRow` (what fetches return). `primaryKey` comes from the key.
    package static func decode(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, schema: LMDBSchema) throws -> StoreRow {
        var values: [AttributeValue] = []
        var toOne: [String: RowReference] = [:]
        let (layout, version) = try parse(bytes, primaryKey: primaryKey, schema: schema) { layout, _ in
            values = layout.initialValues
        } attribute: { layout, position, value in
            // Retired positions hold values of properties the model dropped: not part of the row any more.
            if layout.attributeTypes[position] != .undefined { values[position] = value }
        } target: { layout, position, target, key in
            if !layout.toOneDestinations[position].isEmpty {
                toOne[layout.toOneNames[position]] = RowReference(entityName: target.name, primaryKey: key)
            }
        }
        return StoreRow(
            entityName: layout.name, primaryKey: primaryKey, version: version,
            values: RowValues(layout: layout.rowLayout, slots: values), toOne: toOne)
    }

    /// Decodes a whole row by position (what saves work on; retired positions are kept, so an update writes
    /// them back unchanged).
    package static func decodeImage(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, schema: LMDBSchema) throws -> LMDBRowImage {
        var image: LMDBRowImage?
        _ = try parse(bytes, primaryKey: primaryKey, schema: schema) { layout, version in
            image = LMDBRowImage(layout: layout, primaryKey: primaryKey, version: version)
            for (position, value) in layout.implicitDefaults { image?.attributes[position] = value }
        } attribute: { _, position, value in
            image?.attributes[position] = value
        } target: { _, position, target, key in
            image?.toOnes[position] = LMDBRowImage.Target(number: target.number, primaryKey: key)
        }
        guard let image else { throw DecodingError(description: "row p\(primaryKey) has no header") }
        return image
    }

    /// Reads the format byte, entity and Z_OPT at the start of a row.
    @inline(__always)
    static func readHeader(
        _ r: inout LMDBByteReader, primaryKey: Int64, schema: LMDBSchema
    ) throws -> (layout: LMDBEntityLayout, version: Int64) {
        try checkVersion(&r)
        let number = Int(truncatingIfNeeded: try r.unsigned())
        guard let layout = schema.layout(number: number) else {
            throw DecodingError(description: "row p\(primaryKey) has unknown entity number \(number)")
        }
        return (layout, try r.signed())
    }

    /// The next attribute's position, or `nil` at the end of the attributes.
    package static func nextAttribute(_ r: inout LMDBByteReader, layout: LMDBEntityLayout, primaryKey: Int64) throws -> Int? {
        try nextAttribute(&r, width: layout.attributeNames.count, layout: layout, primaryKey: primaryKey)
    }

    /// `nextAttribute(_:layout:primaryKey:)` with the layout's width known (a scan keeps it per entity, so the
    /// layout is touched only to name it in an error).
    @inline(__always)
    static func nextAttribute(
        _ r: inout LMDBByteReader, width: Int, layout: @autoclosure () -> LMDBEntityLayout, primaryKey: Int64
    ) throws -> Int? {
        let tagged = Int(truncatingIfNeeded: try r.unsigned())
        if tagged == 0 { return nil }
        guard tagged > 0, tagged <= width else {
            throw DecodingError(description: "\(layout().name)/p\(primaryKey) names attribute \(tagged - 1) of \(width)")
        }
        return tagged - 1
    }

    /// The next to-one (position, target layout, primary key), or `nil` at the end of the row.
    package static func nextToOne(
        _ r: inout LMDBByteReader, layout: LMDBEntityLayout, primaryKey: Int64, schema: LMDBSchema
    ) throws -> (position: Int, target: LMDBEntityLayout, key: Int64)? {
        let tagged = Int(truncatingIfNeeded: try r.unsigned())
        if tagged == 0 { return nil }
        let targetNumber = Int(truncatingIfNeeded: try r.unsigned())
        let targetKey = try r.signed()
        guard tagged > 0, tagged <= layout.toOneNames.count, let target = schema.layout(number: targetNumber) else {
            throw DecodingError(description: "\(layout.name)/p\(primaryKey) has an unknown to-one \(tagged - 1) -> entity \(targetNumber)")
        }
        return (tagged - 1, target, targetKey)
    }

    /// Walks an encoded row, handing each attribute and to-one to the callbacks; returns its layout and Z_OPT.
    private static func parse(
        _ bytes: UnsafeRawBufferPointer, primaryKey: Int64, schema: LMDBSchema, begin: (LMDBEntityLayout, Int64) -> Void,
        attribute: (LMDBEntityLayout, Int, AttributeValue) -> Void,
        target: (LMDBEntityLayout, Int, LMDBEntityLayout, Int64) -> Void
    ) throws -> (LMDBEntityLayout, Int64) {
        var r = LMDBByteReader(bytes)
        do {
            let (layout, version) = try readHeader(&r, primaryKey: primaryKey, schema: schema)
            begin(layout, version)
            while let position = try nextAttribute(&r, layout: layout, primaryKey: primaryKey) {
                attribute(layout, position, try decodeValue(&r))
            }
            while let (position, targetLayout, key) = try nextToOne(&r, layout: layout, primaryKey: primaryKey, schema: schema) {
                target(layout, position, targetLayout, key)
            }
            return (layout, version)
        } catch is LMDBByteReader.Overrun {
            throw DecodingError(description: "row p\(primaryKey) ends early (\(bytes.count) bytes)")
        }
    }

    /// One tagged value.
    @inline(__always)
    package static func decodeValue(_ r: inout LMDBByteReader) throws -> AttributeValue {
        try decodeValue(tag: try r.byte(), &r)
    }

    /// One tagged value written straight into its slot (`position` of `row` in `storage`): numbers, dates,
    /// Booleans and text without an `AttributeValue` in between, which a fetch built and then took apart for
    /// every value of every row (callgrind: about 250 instructions a value, half of them the `AttributeValue`'s
    /// copies and the subscript's switch over it).
    @inline(__always)
    package static func decodeValue(_ r: inout LMDBByteReader, into storage: RowStorage, row: Int, position: Int) throws {
        let raw = try r.byte()
        switch Tag(rawValue: raw) {
        case .integer: storage.set(row, position, integer: try r.signed())
        case .double: storage.set(row, position, double: try r.double())
        case .date: storage.set(row, position, date: try readDate(&r))
        case .boolFalse: storage.set(row, position, bool: false)
        case .boolTrue: storage.set(row, position, bool: true)
        case .string: storage.set(row, position, string: try readString(&r))
        default: storage[row, position] = try decodeValue(tag: raw, &r)
        }
    }

    /// The value after its tag byte `raw`.
    @inline(__always)
    private static func decodeValue(tag raw: UInt8, _ r: inout LMDBByteReader) throws -> AttributeValue {
        guard let tag = Tag(rawValue: raw) else { throw DecodingError(description: "unknown value tag \(raw)") }
        switch tag {
        case .integer: return .integer(try r.signed())
        case .double: return .double(try r.double())
        case .decimal: return .decimal(try decodeDecimal(&r))
        case .string: return .string(try readString(&r))
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .date: return .date(try readDate(&r))
        case .binary: return .binary(Data(try r.lengthPrefixed()))
        case .uuid:
            guard let uuid = UUID(bytes: Data(try r.bytes(16))) else { throw DecodingError(description: "bad UUID") }
            return .uuid(uuid)
        case .uri:
            let text = String(decoding: try r.lengthPrefixed(), as: UTF8.self)
            guard let url = URL(string: text) else { throw DecodingError(description: "bad URI \(text)") }
            return .uri(url)
        case .null: return .null
        }
    }

    /// A date after its tag: seconds since the reference date.
    @inline(__always)
    private static func readDate(_ r: inout LMDBByteReader) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try r.double())
    }

    /// Text after its tag: length-prefixed UTF-8.
    @inline(__always)
    private static func readString(_ r: inout LMDBByteReader) throws -> String {
        String(decoding: try r.lengthPrefixed(), as: UTF8.self)
    }

    /// Steps over one tagged value without building it (no string or data is created).
    @inline(__always)
    static func skipValue(_ r: inout LMDBByteReader) throws {
        // A scan skips every attribute before the ones it reads: the common values inline, the rest out of line.
        if r.skipFixedOrShortValue() { return }
        try skipAnyValue(&r)
    }

    /// `skipValue` for every tag, on the raw tag byte (`Tag`'s values).
    @inline(never)
    static func skipAnyValue(_ r: inout LMDBByteReader) throws {
        let raw = try r.byte()
        switch raw {
        case Tag.integer.rawValue: try r.skipVarint()
        case Tag.double.rawValue, Tag.date.rawValue: try r.skip(8)
        case Tag.string.rawValue, Tag.binary.rawValue, Tag.uri.rawValue: try r.skip(r.unsigned())
        case Tag.boolFalse.rawValue, Tag.boolTrue.rawValue, Tag.null.rawValue: break
        case Tag.uuid.rawValue: try r.skip(16)
        case Tag.decimal.rawValue:
            try r.skip(1)
            try r.skipVarint()
            try r.skip(r.unsigned())
        default: throw unknownTag(raw)
        }
    }

    /// The error for a tag byte no `Tag` has, kept out of line so the per-value readers stay small.
    @inline(never)
    static func unknownTag(_ raw: UInt8) -> DecodingError {
        DecodingError(description: "unknown value tag \(raw)")
    }

    private static func decodeDecimal(_ r: inout LMDBByteReader) throws -> Decimal {
        let flags = try r.byte()
        if flags & 2 != 0 { return .nan }
        let exponent = try r.signed()
        let digits = String(decoding: try r.lengthPrefixed(), as: UTF8.self)
        guard digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let significand = Decimal(string: digits),
            (-1024...1024).contains(exponent)
        else {
            throw DecodingError(description: "bad decimal \(digits)e\(exponent)")
        }
        return Decimal(sign: flags & 1 != 0 ? .minus : .plus, exponent: Int(exponent), significand: significand)
    }

    @inline(__always)
    private static func checkVersion(_ r: inout LMDBByteReader) throws {
        let version = try r.byte()
        guard version == 1 || version == formatVersion else {
            throw DecodingError(description: "row format \(version) is not 1 or \(formatVersion) (written by a newer Switchyard?)")
        }
    }
}

import Foundation
import Testing
@testable import Switchyard

/// `LMDBRowCoding` (row values), `LMDBRowKey` and `LMDBIndexKey`: round trips over every attribute type and
/// the ordering and equality properties the store relies on.
@Suite struct LMDBCodingTests {
    let model: ObjectModel
    let schema: LMDBSchema

    init() throws {
        model = try SQLiteTestModels.garage()
        schema = LMDBSchema(
            model: model, served: try model.entities(inConfiguration: "Default"), numbers: LMDBSchema.numbers(model: model, stored: [:]))
    }

    private func roundTrip(_ row: StoreRow) throws -> StoreRow {
        let layout = try #require(schema.layout(named: row.entityName))
        var writer = LMDBByteWriter()
        LMDBRowCoding.encode(row, layout: layout, schema: schema, into: &writer)
        let bytes = writer.bytes
        #expect(bytes.first == LMDBRowCoding.formatVersion)
        #expect(try bytes.withUnsafeBytes { try LMDBRowCoding.entityNumber(of: $0) } == layout.number)
        return try bytes.withUnsafeBytes { try LMDBRowCoding.decode($0, primaryKey: row.primaryKey, schema: schema) }
    }

    // MARK: - Rows

    @Test func everyAttributeTypeRoundTrips() throws {
        let values: [String: AttributeValue] = [
            "i16": .integer(-32768), "i32": .integer(2_147_483_647), "i64": .integer(Int64.min),
            "dec": .decimal(Decimal(string: "-12345678901234567890.123456789")!), "dbl": .double(-0.125),
            "flt": .double(3.5), "str": "héllo 👋 \u{0}zero", "flag": .bool(true),
            "when": .date(Date(timeIntervalSinceReferenceDate: -978_307_200.000_001)),
            "blob": .binary(Data((0...255).map { UInt8($0) })), "uid": .uuid(UUID(uuidString: "C4637490-BD7F-4428-B093-63A1720E17D2")!),
            "link": .uri(URL(string: "https://example.com/a?b=c#d")!), "thing": .binary(Data("plist".utf8)),
        ]
        let row = StoreRow(entityName: "AllTypes", primaryKey: 7, version: 12, values: values)
        let back = try roundTrip(row)
        #expect(back == row)
        for (name, value) in values { #expect(back[name] == value, "attribute \(name)") }
    }

    @Test(arguments: [
        AttributeValue.integer(0), .integer(1), .integer(-1), .integer(Int64.max), .integer(Int64.min), .integer(1 << 53 + 1),
        .double(0), .double(-0.0), .double(.infinity), .double(-.infinity), .double(.leastNonzeroMagnitude), .double(1e308),
        .string(""), .string("a"), .string(String(repeating: "x", count: 100_000)), .binary(Data()), .binary(Data([0, 0, 0])),
        .bool(false), .date(Date(timeIntervalSinceReferenceDate: 0)), .date(.distantFuture),
        .decimal(0), .decimal(Decimal(string: "0.000000015")!), .decimal(Decimal(string: "1e127")!), .decimal(Decimal(string: "-1e-127")!),
        .decimal(Decimal(string: "99999999999999999999999999999999999999")!), .decimal(Decimal(string: "3.3333333333")!),
        .uri(URL(string: "file:///tmp/x%20y")!), .uri(URL(string: "urn:isbn:0451450523")!), .uuid(UUID()),
    ])
    func singleValueRoundTrips(value: AttributeValue) throws {
        var writer = LMDBByteWriter()
        LMDBRowCoding.encode(value, into: &writer)
        let back = try writer.bytes.withUnsafeBytes { buffer -> AttributeValue in
            var reader = LMDBByteReader(buffer)
            let decoded = try LMDBRowCoding.decodeValue(&reader)
            #expect(reader.isAtEnd)
            return decoded
        }
        #expect(back == value)
        if case .double(let d) = value, d == 0 { #expect(back.numericValue?.sign == d.sign) }   // -0.0 kept as written
        // The same bytes decoded straight into a slot, as a fetch does: a wide and a narrow position (text there
        // is boxed), each over a value already there, which the write replaces.
        let storage = RowStorage(pattern: SlotPattern(wide: [true, false]), capacity: 1)
        let row = storage.appendRow()
        for position in 0..<2 {
            storage[row, position] = .string("already there, \(position)")
            try writer.bytes.withUnsafeBytes { buffer in
                var reader = LMDBByteReader(buffer)
                try LMDBRowCoding.decodeValue(&reader, into: storage, row: row, position: position)
                #expect(reader.isAtEnd)
            }
            #expect(storage[row, position] == value, "position \(position)")
            if case .double(let d) = value, d == 0 { #expect(storage[row, position].numericValue?.sign == d.sign) }
        }
    }

    /// An unknown tag decoded into a slot is an error, and the slot keeps its value.
    @Test func anUnknownTagIntoASlotThrows() throws {
        #expect(LMDBRowCoding.Tag(rawValue: 0xFE) == nil)
        let storage = RowStorage(pattern: SlotPattern(wide: [true]), capacity: 1)
        let row = storage.appendRow()
        storage[row, 0] = .integer(42)
        try [UInt8(0xFE), 1, 2].withUnsafeBytes { buffer in
            var reader = LMDBByteReader(buffer)
            #expect(throws: LMDBRowCoding.DecodingError.self) {
                try LMDBRowCoding.decodeValue(&reader, into: storage, row: row, position: 0)
            }
        }
        #expect(storage[row, 0] == .integer(42))
    }

    @Test func nanDecimalAndDoubleRoundTrip() throws {
        for value in [AttributeValue.decimal(.nan), .double(.nan)] {
            var writer = LMDBByteWriter()
            LMDBRowCoding.encode(value, into: &writer)
            let back = try writer.bytes.withUnsafeBytes { buffer -> AttributeValue in
                var reader = LMDBByteReader(buffer)
                return try LMDBRowCoding.decodeValue(&reader)
            }
            switch back {
            case .decimal(let d): #expect(d.isNaN)
            case .double(let d): #expect(d.isNaN)
            default: Issue.record("\(back)")
            }
        }
    }

    @Test func emptyRowsNullsAndToOnesRoundTrip() throws {
        let empty = StoreRow(entityName: "Note", primaryKey: 1, version: 1)
        #expect(try roundTrip(empty) == empty)
        // A null value is not stored: the row reads back without the key, as every store returns it.
        let withNull = StoreRow(entityName: "Owner", primaryKey: 2, values: ["name": .null, "rating": 2.5])
        #expect(try roundTrip(withNull).values == ["rating": 2.5])
        // Inherited and own properties keep their positions; to-ones name the concrete target entity.
        let car = StoreRow(entityName: "Car", primaryKey: Int64(Int32.max) + 5, version: Int64.max, values: ["plate": "", "doors": 5, "name": "Zoe"],
                           toOne: ["owner": RowReference(entityName: "Owner", primaryKey: 3)])
        #expect(try roundTrip(car) == car)
        let owner = StoreRow(entityName: "Owner", primaryKey: 3, toOne: ["favorite": RowReference(entityName: "Truck", primaryKey: 9)])
        #expect(try roundTrip(owner).toOne["favorite"] == RowReference(entityName: "Truck", primaryKey: 9))
    }

    @Test func damagedBytesAreErrorsNotCrashes() throws {
        let layout = try #require(schema.layout(named: "AllTypes"))
        var writer = LMDBByteWriter()
        LMDBRowCoding.encode(StoreRow(entityName: "AllTypes", primaryKey: 1, values: ["str": "hello", "blob": .binary(Data(count: 50))]),
                             layout: layout, schema: schema, into: &writer)
        let whole = writer.bytes
        for length in 0..<whole.count {
            let cut = Array(whole.prefix(length))
            #expect(throws: LMDBRowCoding.DecodingError.self) {
                try cut.withUnsafeBytes { try LMDBRowCoding.decode($0, primaryKey: 1, schema: schema) }
            }
        }
        var future = whole
        future[0] = 9
        #expect(throws: LMDBRowCoding.DecodingError.self) {
            try future.withUnsafeBytes { try LMDBRowCoding.decode($0, primaryKey: 1, schema: schema) }
        }
        var unknownEntity = whole
        unknownEntity[1] = 99
        #expect(throws: LMDBRowCoding.DecodingError.self) {
            try unknownEntity.withUnsafeBytes { try LMDBRowCoding.decode($0, primaryKey: 1, schema: schema) }
        }
        for seed in 0..<5_000 {
            var generator = SystemRandomNumberGenerator()
            let noise = [UInt8(1)] + (0..<(seed % 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? noise.withUnsafeBytes { try LMDBRowCoding.decode($0, primaryKey: 1, schema: schema) }
        }
    }

    // MARK: - Keys

    @Test func rowKeysSortByTableThenPrimaryKey() {
        let keys = [(2, Int64(1)), (1, 300), (1, 2), (2, 0), (1, Int64.max), (300, 1)]
        let sorted = keys.map { LMDBRowKey.make(root: $0.0, primaryKey: $0.1) }.sorted { $0.lexicographicallyPrecedes($1) }
        let decoded = sorted.map { key in key.withUnsafeBytes { (LMDBRowKey.root(of: $0)!, LMDBRowKey.primaryKey(of: $0)) } }
        #expect(decoded.map(\.0) == [1, 1, 1, 2, 2, 300])
        #expect(decoded.map(\.1) == [2, 300, Int64.max, 0, 1, 1])
        #expect(LMDBRowKey.make(root: 5, primaryKey: 1) == [0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1])
    }

    /// The stack-built key a reader looks rows up by is, byte for byte, the key saves write.
    @Test func rowKeysBuiltOnTheStackMatchStoredKeys() {
        #expect(LMDBRowKey.withKey(root: 0x0102_0304, primaryKey: 0x0506_0708_090A_0B0C) { Array($0) }
            == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        var generator = SeededGenerator(seed: 0x12)
        for _ in 0..<1_000 {
            let root = Int.random(in: 0...Int(UInt32.max), using: &generator)
            let key = Int64.random(in: 0...Int64.max, using: &generator)
            #expect(LMDBRowKey.withKey(root: root, primaryKey: key) { Array($0) } == LMDBRowKey.make(root: root, primaryKey: key))
        }
    }

    @Test func indexKeysGroupStoreEqualValuesAndKeepOrder() {
        func prefix(_ v: AttributeValue) -> [UInt8] { LMDBIndexKey.prefix([v]) }
        // Values the evaluator calls equal share an element, whatever their case.
        #expect(prefix(.integer(1)) == prefix(.double(1)))
        #expect(prefix(.integer(1)) == prefix(.bool(true)))
        #expect(prefix(.double(0)) == prefix(.double(-0.0)))
        #expect(prefix(.decimal(Decimal(string: "12.5")!)) == prefix(.double(12.5)))
        #expect(prefix(.date(Date(timeIntervalSinceReferenceDate: 5))) == prefix(.integer(5)))
        #expect(prefix(.string("https://x.org")) == prefix(.uri(URL(string: "https://x.org")!)))
        let uuid = UUID()
        #expect(prefix(.uuid(uuid)) == prefix(.binary(uuid.bytes)))
        // ... and never a value of another storage class.
        #expect(prefix(.string("1")) != prefix(.integer(1)))
        #expect(prefix(.binary(Data("a".utf8))) != prefix(.string("a")))
        // Byte order follows AttributeValue.order within a class.
        let numbers: [AttributeValue] = [.double(-.infinity), .integer(Int64.min), .double(-2.5), .integer(-1), .integer(0), .double(0.5),
                                         .integer(1), .integer(Int64.max), .double(.infinity)]
        let strings: [AttributeValue] = ["", "\u{0}", "\u{0}\u{0}", "a", "a\u{0}", "ab", "b", "é"]
        for list in [numbers, strings] {
            let keys = list.map(prefix)
            for i in keys.indices.dropLast() {
                #expect(keys[i].lexicographicallyPrecedes(keys[i + 1]), "\(list[i]) < \(list[i + 1])")
            }
        }
        // Prefix-free: a string's element never starts another string's element.
        #expect(!prefix("a\u{0}b").starts(with: prefix("a")))
        // Long values are cut, so keys stay below LMDB's 511-byte limit even for several long properties.
        let long = AttributeValue.string(String(repeating: "\u{0}", count: 10_000))
        #expect(LMDBIndexKey.entry([long, long, long, long, long], primaryKey: 1).count <= 511)
        let entry = LMDBIndexKey.entry(["x"], primaryKey: 42)
        #expect(entry.withUnsafeBytes { LMDBIndexKey.primaryKey(of: $0) } == 42)
        // The exact bytes, whether the value is copied at once (no 00 among its first 120 bytes) or byte by byte.
        let a = UInt8(ascii: "a")
        #expect(prefix("ab") == [0x20, a, a + 1, 0, 0])
        #expect(prefix("") == [0x20, 0, 0])
        #expect(prefix("a\u{0}b") == [0x20, a, 0, 0xFF, a + 1, 0, 0])
        #expect(prefix(.string(String(repeating: "a", count: 200))) == [0x20] + Array(repeating: a, count: 120) + [0, 0])
        #expect(prefix(.string(String(repeating: "a", count: 130) + "\u{0}")) == [0x20] + Array(repeating: a, count: 120) + [0, 0])
        #expect(prefix(.string(String(repeating: "a", count: 119) + "\u{0}")) == [0x20] + Array(repeating: a, count: 119) + [0, 0])
        #expect(prefix(.binary(Data(repeating: 7, count: 200))) == [0x30] + Array(repeating: 7, count: 120) + [0, 0])
        #expect(prefix(.binary(Data([1, 0, 2]))) == [0x30, 1, 0, 0xFF, 2, 0, 0])
    }

    @Test func entityNumbersSurviveModelChanges() throws {
        let stored = LMDBSchema.numbers(model: model, stored: [:])
        #expect(stored["AllTypes"] == 1 && stored["Truck"] == 7)
        // A model that gains an entity sorting first renumbers Core Data's Z_ENT, not an existing store's rows.
        let grown = try ObjectModel(entities: model.entities.map { strip($0) } + [EntityDescription(name: "Aardvark")])
        #expect(grown.entity(named: "AllTypes")?.entityNumber == 2)
        let numbers = LMDBSchema.numbers(model: grown, stored: stored)
        #expect(numbers["AllTypes"] == 1 && numbers["Truck"] == 7 && numbers["Aardvark"] == 8)
        let encoded = LMDBSchema.encodeNumbers(numbers)
        #expect(encoded.withUnsafeBytes { LMDBSchema.decodeNumbers($0) } == numbers)
        #expect([UInt8]([2, 1]).withUnsafeBytes { LMDBSchema.decodeNumbers($0) } == nil)
    }

    /// The entity as declared (before `ObjectModel` resolved it), to build another model from.
    private func strip(_ entity: EntityDescription) -> EntityDescription {
        EntityDescription(
            name: entity.name, parent: entity.parentName, isAbstract: entity.isAbstract, attributes: entity.attributes,
            relationships: entity.relationships, uniquenessConstraints: entity.uniquenessConstraints, indexes: entity.indexes)
    }
}

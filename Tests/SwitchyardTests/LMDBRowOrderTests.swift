import Foundation
import Testing
@testable import Switchyard

/// The order of a row's attributes in the LMDB encoding (`LMDBEntityLayout.writeOrder`): a new row puts the
/// values of a fixed, small size first, and every reader — fetch, count (from the encoded bytes, both ways),
/// references, update — reads a row whose attributes come in another order the same: rows written by earlier
/// versions are in ascending position, and an update keeps a row's order.
@Suite struct LMDBRowOrderTests {
    let model: ObjectModel
    let dir = TemporaryDirectory()

    init() throws { model = try SQLiteTestModels.garage() }

    /// A value for every stored attribute of `AllTypes`.
    static let values: [String: AttributeValue] = [
        "i16": .integer(-3), "i32": .integer(70_000), "i64": .integer(1 << 40),
        "dec": .decimal(Decimal(string: "12.75")!), "dbl": .double(2.5), "flt": .double(1.5), "str": "text",
        "flag": .bool(true), "when": .date(Date(timeIntervalSinceReferenceDate: 86_400)),
        "blob": .binary(Data([1, 2, 3])), "uid": .uuid(UUID(uuidString: "C4637490-BD7F-4428-B093-63A1720E17D2")!),
        "link": .uri(URL(string: "https://example.com/x")!), "thing": .binary(Data("plist".utf8)),
    ]

    /// The attribute positions of an encoded row, in the order its bytes hold them.
    private static func positions(_ bytes: [UInt8], layout: LMDBEntityLayout) throws -> [Int] {
        // The header: format byte, entity number, Z_OPT (varints).
        var offset = 1
        for _ in 0..<2 {
            while bytes[offset] & 0x80 != 0 { offset += 1 }
            offset += 1
        }
        return try Array(bytes[offset...]).withUnsafeBytes { buffer in
            var r = LMDBByteReader(buffer)
            var found: [Int] = []
            while let position = try LMDBRowCoding.nextAttribute(&r, layout: layout, primaryKey: 1) {
                found.append(position)
                _ = try LMDBRowCoding.decodeValue(&r)
            }
            return found
        }
    }

    /// `row` encoded with its attributes in `order` (positions) under format byte `format`, as
    /// `LMDBRowCoding.encode` lays out the rest.
    private static func encode(_ row: StoreRow, layout: LMDBEntityLayout, schema: LMDBSchema, order: [Int], format: UInt8) -> [UInt8] {
        let image = LMDBRowCoding.image(of: row, layout: layout, schema: schema)
        var w = LMDBByteWriter()
        w.byte(format)
        w.unsigned(UInt64(layout.number))
        w.signed(image.version)
        for position in order where !image.attributes[position].isNull {
            w.unsigned(UInt64(position + 1))
            LMDBRowCoding.encode(image.attributes[position], into: &w)
        }
        w.byte(0)
        w.byte(0)
        return w.bytes
    }

    @Test func newRowsPutFixedSizeValuesFirst() throws {
        let store = try LMDBStore(url: dir.file("order.lmdb"), model: model, configuration: "Types")
        let layout = try #require(store.schema.layout(named: "AllTypes"))
        var writer = LMDBByteWriter()
        LMDBRowCoding.encode(StoreRow(entityName: "AllTypes", primaryKey: 1, values: Self.values), layout: layout, schema: store.schema, into: &writer)
        let written = try Self.positions(writer.bytes, layout: layout).map { layout.attributeNames[$0] }
        // Doubles, floats, dates and Booleans, then integers, then the rest; by position within each group.
        #expect(written == ["dbl", "flt", "flag", "when", "i16", "i32", "i64", "dec", "str", "blob", "uid", "link", "thing"])
        #expect(Set(layout.writeOrder) == Set(layout.attributeNames.indices), "every position once")
        #expect(writer.bytes.first == 2)
        // A row of a format after 2 is refused, saying so.
        var future = writer.bytes
        future[0] = 3
        #expect {
            try future.withUnsafeBytes { try LMDBRowCoding.decode($0, primaryKey: 1, schema: store.schema) }
        } throws: { "\($0)".contains("row format 3 is not 1 or 2") }
    }

    /// Rows stored in ascending position (as earlier versions wrote them) and in reverse are read, counted,
    /// matched and updated as a row written now is.
    @Test(arguments: ["ascending", "reverse"])
    func rowsInAnyAttributeOrderReadAndUpdateAlike(order: String) throws {
        let store = try LMDBStore(url: dir.file("\(order).lmdb"), model: model, configuration: "Types")
        let layout = try #require(store.schema.layout(named: "AllTypes"))
        let keys = try store.allocatePrimaryKeys(for: "AllTypes", count: 2)
        let other: [String: AttributeValue] = ["dbl": .double(-1), "str": "other", "i32": .integer(5)]
        let row = StoreRow(entityName: "AllTypes", primaryKey: keys.lowerBound, values: Self.values)
        try store.save(StoreChangeSet(inserts: [row, StoreRow(entityName: "AllTypes", primaryKey: keys.upperBound, values: other)]))

        let positions = Array(layout.attributeNames.indices)
        // Ascending rows as earlier versions wrote them (format 1); any other order is format 2.
        let bytes = Self.encode(
            row, layout: layout, schema: store.schema, order: order == "ascending" ? positions : positions.reversed(),
            format: order == "ascending" ? 1 : 2)
        let key = LMDBRowKey.make(root: layout.rootNumber, primaryKey: keys.lowerBound)
        try store.environment.write { txn in try txn.put(store.databases.rows, key, bytes) }
        let stored = try store.environment.read { txn in try txn.get(store.databases.rows, key) }
        let expectedOrder = order == "ascending" ? positions : positions.reversed()
        #expect(try Self.positions(try #require(stored), layout: layout) == expectedOrder.filter { Self.values[layout.attributeNames[$0]] != nil })

        // Fetch: every value.
        let fetched = try #require(try store.fetch(StoreFetchRequest(entityName: "AllTypes", predicate: try FetchPredicate(format: "str == %@", "text"))).first)
        for (name, value) in Self.values { #expect(fetched[name] == value, "\(name) read back") }
        // Counts from the encoded bytes: compiled comparisons (one attribute and several), and the general
        // evaluation for kinds the byte path does not read (UUID, decimal).
        let formats: [(String, [PredicateArgument])] = [
            ("dbl >= 2", []), ("i32 == 70000", []), ("str == 'text'", []), ("flag == YES", []), ("i16 < 0 AND dbl > 2 AND str BEGINSWITH 't'", []),
            ("when > %@", [.value(.date(Date(timeIntervalSinceReferenceDate: 0)))]), ("uid == %@", [.value(.uuid(UUID(uuidString: "C4637490-BD7F-4428-B093-63A1720E17D2")!))]),
            ("dec > 12", []), ("i64 == %@", [.value(.integer(1 << 40))]), ("thing != nil AND flt == 1.5", []),
        ]
        for (format, arguments) in formats {
            let predicate = try FetchPredicate(format: format, arguments: arguments)
            #expect(try store.count(StoreFetchRequest(entityName: "AllTypes", predicate: predicate)) == 1, "count where \(format)")
            var found: [Int64] = []
            try store.fetchReferences(StoreFetchRequest(entityName: "AllTypes", predicate: predicate)) { found.append($0.primaryKey) }
            #expect(found == [keys.lowerBound], "references where \(format)")
        }

        // An update (no index reads these: the stored row is patched in place) changes one value the row holds,
        // clears another, and keeps its order.
        try store.save(StoreChangeSet(updates: [
            RowUpdate(entityName: "AllTypes", primaryKey: keys.lowerBound, expectedVersion: 1, values: ["dbl": .double(9.5), "str": .null, "i16": .integer(4)])
        ]))
        let updated = try #require(try store.fetch(StoreFetchRequest(entityName: "AllTypes", predicate: try FetchPredicate(format: "dbl == 9.5"))).first)
        var expected = Self.values
        expected["dbl"] = .double(9.5)
        expected["str"] = nil
        expected["i16"] = .integer(4)
        for name in layout.attributeNames { #expect(updated[name] == (expected[name] ?? .null), "\(name) after the update") }
        #expect(updated.version == 2)
        let patched = try #require(try store.environment.read { txn in try txn.get(store.databases.rows, key) })
        #expect(try Self.positions(patched, layout: layout) == expectedOrder.filter { expected[layout.attributeNames[$0]] != nil })
        #expect(patched.first == 2, "a row written now is format 2, which a Switchyard from before refuses")
        #expect(try store.count(StoreFetchRequest(entityName: "AllTypes", predicate: try FetchPredicate(format: "str == nil"))) == 1)
    }

    /// An update that sets values a stored row does not hold writes them after the row's own, each once.
    @Test func anUpdateAddsValuesTheRowLacked() throws {
        let store = try LMDBStore(url: dir.file("add.lmdb"), model: model, configuration: "Types")
        let layout = try #require(store.schema.layout(named: "AllTypes"))
        let key = try store.allocatePrimaryKeys(for: "AllTypes", count: 1).lowerBound
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "AllTypes", primaryKey: key, values: ["str": "a", "i64": .integer(1)])]))
        try store.save(StoreChangeSet(updates: [
            RowUpdate(entityName: "AllTypes", primaryKey: key, expectedVersion: 1, values: ["dbl": .double(0.5), "i64": .integer(2), "link": .uri(URL(string: "urn:x")!)])
        ]))
        let bytes = try #require(try store.environment.read { txn in
            try txn.get(store.databases.rows, LMDBRowKey.make(root: layout.rootNumber, primaryKey: key))
        })
        #expect(try Self.positions(bytes, layout: layout).map { layout.attributeNames[$0] } == ["i64", "str", "dbl", "link"])
        let row = try #require(try store.fetch(StoreFetchRequest(entityName: "AllTypes")).first)
        #expect(row["str"] == "a" && row["i64"] == .integer(2) && row["dbl"] == .double(0.5) && row["link"] == .uri(URL(string: "urn:x")!))
        #expect(try store.count(StoreFetchRequest(entityName: "AllTypes", predicate: try FetchPredicate(format: "dbl < 1 AND i64 == 2"))) == 1)
    }
}

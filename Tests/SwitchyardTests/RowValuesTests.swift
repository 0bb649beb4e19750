import Foundation
import Testing
@testable import Switchyard

/// `RowValues` behaves as the dictionary it replaced, whether or not a layout positions its values.
@Suite struct RowValuesTests {
    static let layout = RowLayout(names: ["title", "pages", "rating"])

    @Test func positionedValuesReadLikeADictionary() {
        var values = RowValues(layout: Self.layout, slots: ["Dune", 412, .null])
        #expect(values["title"] == "Dune")
        #expect(values["rating"] == AttributeValue?.none)
        #expect(values["nosuch"] == AttributeValue?.none)
        #expect(values.count == 2)
        #expect(Set(values.keys) == ["title", "pages"])
        values["pages"] = nil
        values["rating"] = 4.5
        values["title"] = .null
        #expect(values.dictionary == ["rating": 4.5])
        #expect(!values.isEmpty)
        values["rating"] = nil
        #expect(values.isEmpty)
    }

    @Test func namesOutsideTheLayoutAreKeptBesideIt() {
        var values = RowValues(layout: Self.layout, slots: [.null, .null, .null])
        values["nosuch"] = 1
        #expect(values["nosuch"] == 1)
        #expect(values.keys == ["nosuch"])
        #expect(values.count == 1)
    }

    @Test func valuesBesideTheLayoutComeAndGoWithoutTouchingCopies() {
        var values = RowValues(layout: Self.layout, slots: ["Dune", .null, .null])
        let before = values
        values["nosuch"] = 1
        values["other"] = "x"
        var copy = values
        copy["nosuch"] = nil
        copy["title"] = "Emma"
        #expect(values.dictionary == ["title": "Dune", "nosuch": 1, "other": "x"])
        #expect(copy.dictionary == ["title": "Emma", "other": "x"])
        #expect(before.dictionary == ["title": "Dune"])
        copy["other"] = nil
        #expect(copy.layout === Self.layout)
        #expect(copy.dictionary == ["title": "Emma"])
        // A row without a layout built name by name, then copied and changed.
        var loose = RowValues()
        for i in 0..<200 { loose["k\(i)"] = .integer(Int64(i)) }
        let snapshot = loose
        loose["k7"] = nil
        #expect(loose.count == 199)
        #expect(snapshot.count == 200)
        #expect(snapshot["k7"] == 7)
        #expect(loose.layout == nil)
    }

    @Test func equalityIgnoresLayoutAndNulls() {
        let positioned = RowValues(layout: Self.layout, slots: ["Dune", .null, 4.5])
        let literal: RowValues = ["rating": 4.5, "title": "Dune"]
        let other = RowValues(["title": "Dune", "rating": 4.5, "pages": .null], layout: RowLayout(names: ["rating", "title", "pages"]))
        #expect(positioned == literal)
        #expect(positioned == other)
        #expect(positioned.hashValue == literal.hashValue)
        #expect(positioned != ["title": "Dune"])
        #expect(Set([positioned, literal, other]).count == 1)
    }

    @Test func iterationYieldsEveryNonNullPairOnce() {
        var values = RowValues(layout: Self.layout, slots: [.null, 7, "x"])
        values["extra"] = true
        let pairs = Dictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value) })
        #expect(pairs == ["pages": 7, "rating": "x", "extra": true])
    }

    @Test(arguments: Backend.allCases)
    func fetchedRowsCompareEqualToTheValuesSaved(backend: Backend) throws {
        let directory = TemporaryDirectory()
        let store = try backend.open(try TestModels.library(), configuration: "Main", in: directory)
        let keys = try store.allocatePrimaryKeys(for: "Book", count: 1)
        let saved = StoreRow(entityName: "Book", primaryKey: keys.lowerBound, values: ["title": "Dune", "pages": 412])
        try store.save(StoreChangeSet(inserts: [saved]))
        let fetched = try #require(try store.fetch(StoreFetchRequest(entityName: "Book")).first)
        #expect(fetched.values == saved.values)
        #expect(fetched.values.count == 2)
        #expect(fetched["code"] == .null)
    }

    @Test func retiredPositionsNeverHoldValues() {
        // A store's layout where "a" was dropped at position 0 and added again at position 1.
        let layout = RowLayout(names: ["a", "a"], positions: ["a": 1])
        let values = RowValues(layout: layout, slots: [.null, 2])
        #expect(values["a"] == 2)
        #expect(values.dictionary == ["a": 2])
        #expect(values.count == 1)
        #expect(values == ["a": 2])
    }

    @Test(arguments: [Backend.sqlite, .lmdb])
    func aRowReadAloneKeepsOnlyASmallBlock(backend: Backend) throws {
        let directory = TemporaryDirectory()
        let store = try backend.open(try TestModels.library(), configuration: "Main", in: directory)
        let keys = try store.allocatePrimaryKeys(for: "Book", count: 50)
        try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Book", primaryKey: $0, values: ["title": .string("t\($0)")]) }))
        let one = try #require(try store.rows(for: [RowReference(entityName: "Book", primaryKey: keys.lowerBound)]).first)
        let width = try #require(one.values.layout).names.count
        // Its block holds it alone: an object kept from a lookup pins no room for other rows.
        #expect(one.values.storageCapacity == width)
        // A fetch of many rows shares bigger blocks, but never past the limit.
        let all = try store.fetch(StoreFetchRequest(entityName: "Book"))
        #expect(all.count == 50)
        #expect(all.allSatisfy { $0.values.storageCapacity <= max(RowArena.maxBlockValues, width) })
    }

    @Test func largeValuesCloseABlockEarly() {
        let arena = RowArena()
        let pattern = SlotPattern(width: 1)
        let big = AttributeValue.binary(Data(count: RowArena.maxBlockBytes))
        let (first, _) = arena.allocate(pattern)
        arena.noteStored(big)
        let (second, _) = arena.allocate(pattern)
        #expect(first !== second)
        let (third, _) = arena.allocate(pattern)
        #expect(second === third)
        // Rows of another pattern never share a block with these.
        let (other, _) = arena.allocate(SlotPattern(width: 1))
        #expect(other !== third)
    }

    /// Every kind of value, in a position sized for numbers (8 bytes) and in one sized for anything (16).
    static let everyKind: [AttributeValue] = [
        .null, .integer(-7), .integer(.max), .double(2.5), .double(-.infinity), .bool(true), .bool(false),
        .date(Date(timeIntervalSinceReferenceDate: 12_345.5)), .string(""), .string("short"),
        .string(String(repeating: "long text, not a small string ", count: 4)), .binary(Data([0, 1, 2])),
        .binary(Data(count: 100)), .uuid(UUID()), .uri(URL(string: "https://example.com/a?b=c")!),
        .decimal(Decimal(string: "12345678901234567890.123")!),
    ]

    @Test func everyKindOfValueReadsBackFromANarrowAndAWidePosition() {
        let layout = RowLayout(names: ["count", "title"], types: [.integer64, .string])
        #expect(layout.slots.isWide == [false, true])
        #expect(layout.slots.stride == 8 + 16 + 8)
        for value in Self.everyKind {
            var values = RowValues(layout: layout, slots: [.null, .null])
            values["count"] = value
            values["title"] = value
            #expect(values.slot(0) == value)
            #expect(values.slot(1) == value)
            // Overwriting with every other kind (releasing what was there) still reads back.
            for other in Self.everyKind {
                var changed = values
                changed["count"] = other
                changed["title"] = other
                #expect(changed.slot(0) == other && changed.slot(1) == other)
                #expect(values.slot(0) == value && values.slot(1) == value, "a copy changed the original")
            }
        }
    }

    @Test func rowsOfABlockKeepTheirOwnValues() {
        let layout = RowLayout(names: ["n", "s", "d"], types: [.integer32, .string, .date])
        let arena = RowArena()
        var rows: [RowValues] = []
        for i in 0..<1_000 {
            let (storage, row) = arena.allocate(layout.slots)
            storage[row, 0] = .integer(Int64(i))
            storage[row, 1] = .string("row \(i) " + String(repeating: "x", count: i % 40))
            if i % 3 == 0 { storage[row, 2] = .date(Date(timeIntervalSinceReferenceDate: Double(i))) }
            rows.append(RowValues(layout: layout, storage: storage, row: row))
        }
        for (i, row) in rows.enumerated() {
            #expect(row["n"] == .integer(Int64(i)))
            #expect(row["s"] == .string("row \(i) " + String(repeating: "x", count: i % 40)))
            #expect(row["d"] == (i % 3 == 0 ? .date(Date(timeIntervalSinceReferenceDate: Double(i))) : nil))
        }
        // A change copies the row out of its shared block; its neighbours keep their values.
        var changed = rows[5]
        changed["s"] = .integer(5)
        #expect(changed["s"] == .integer(5) && changed["n"] == .integer(5))
        #expect(rows[5]["s"] == .string("row 5 xxxxx") && rows[6]["n"] == .integer(6))
    }

    @Test func aRowOfTheBenchmarkEntityTakesThreeWordsPerValueLess() {
        // string, int64, double, date, bool, optional string: 16 + 8 + 8 + 8 + 8 + 16 bytes and six tags, where
        // six AttributeValues took 144.
        let layout = RowLayout(names: ["a", "b", "c", "d", "e", "f"], types: [.string, .integer64, .double, .date, .boolean, .string])
        #expect(layout.slots.stride == 72)
        #expect(MemoryLayout<AttributeValue>.stride * 6 == 144)
    }
}

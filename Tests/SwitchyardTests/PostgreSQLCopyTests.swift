import Foundation
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// Saves of many rows of one entity go to PostgreSQL with `COPY … FROM STDIN` in text format: every value must
/// come back exactly as an `INSERT` would have stored it (escapes, NULL against the text "\N", bytes, special
/// doubles), and a broken uniqueness constraint is still `StoreError.uniquenessViolation` with nothing saved.
@Suite struct PostgreSQLCopyTests {
    let dir = TemporaryDirectory()

    static let model: ObjectModel = try! ObjectModel(entities: [
        EntityDescription(name: "Value", attributes: [
            AttributeDescription(name: "text", type: .string),
            AttributeDescription(name: "bytes", type: .binary),
            AttributeDescription(name: "real", type: .double),
            AttributeDescription(name: "number", type: .integer64),
            AttributeDescription(name: "flag", type: .boolean),
            AttributeDescription(name: "when", type: .date),
            AttributeDescription(name: "code", type: .string),
        ], uniquenessConstraints: [["code"]]),
    ])

    /// Text that COPY's text format must escape, or that looks like its NULL.
    static let texts = ["", "\\N", "\\", "a\tb", "line\nbreak", "cr\rlf", "back\\slash\\n", "\u{08}\u{0C}\u{0B}", "ünï©ødé 🚂", "'quoted' \"double\""]
    static let reals: [Double] = [0, -0.0, 1.5, -1e300, 5e-324, .infinity, -.infinity, .pi, 0.1]

    static func row(_ i: Int) -> StoreRow {
        var values: [String: AttributeValue] = [
            "number": .integer(Int64(i) * (i % 2 == 0 ? 1 : -1) * 1_000_000_007),
            "flag": .bool(i % 3 == 0),
            "code": .string("c\(i)"),
            "when": .date(Date(timeIntervalSinceReferenceDate: Double(i) * 86_400.25)),
        ]
        if i % 11 != 0 { values["text"] = .string(texts[i % texts.count] + "\(i)") }
        if i % 7 != 0 { values["bytes"] = .binary(Data((0..<(i % 40)).map { UInt8(($0 * 37 + i) & 0xFF) })) }
        if i % 5 != 0 { values["real"] = .double(reals[i % reals.count]) }
        return StoreRow(entityName: "Value", primaryKey: Int64(i), values: values)
    }

    @Test(TestServer.needed) func copiedValuesReadBackAsSaved() throws {
        let store = try PostgreSQLStore(url: try dir.postgresURL("copy"), model: Self.model, configuration: "Default")
        let memory = try InMemoryStore(model: Self.model, configuration: "Default")
        let rows = (1...1_000).map(Self.row)
        for target in [store as any PersistentStore, memory] {
            _ = try target.allocatePrimaryKeys(for: "Value", count: rows.count)
            try target.save(StoreChangeSet(inserts: rows))
        }
        let saved = Dictionary(uniqueKeysWithValues: try store.fetch(StoreFetchRequest(entityName: "Value")).map { ($0.primaryKey, $0) })
        let expected = Dictionary(uniqueKeysWithValues: try memory.fetch(StoreFetchRequest(entityName: "Value")).map { ($0.primaryKey, $0) })
        #expect(saved.count == 1_000)
        for key in expected.keys.sorted() {
            #expect(saved[key]?.values == expected[key]?.values, "row \(key)")
        }
        // The text "\N" is text, not NULL.
        let backslashN = FetchPredicate.comparison(Comparison(.keyPath(["text"]), .equal, .constant(.string("\\N1"))))
        #expect(try store.fetch(StoreFetchRequest(entityName: "Value", predicate: backslashN)).map(\.primaryKey) == [1])
        #expect(try store.count(StoreFetchRequest(entityName: "Value", predicate: FetchPredicate(format: "text == nil"))) == 90)
    }

    @Test(TestServer.needed) func aDuplicateInACopiedSaveIsAUniquenessViolationAndSavesNothing() throws {
        let store = try PostgreSQLStore(url: try dir.postgresURL("dup"), model: Self.model, configuration: "Default")
        var rows = (1...600).map(Self.row)
        rows[450].values["code"] = .string("c7")
        _ = try store.allocatePrimaryKeys(for: "Value", count: rows.count)
        #expect {
            try store.save(StoreChangeSet(inserts: rows))
        } throws: { error in
            guard case StoreError.uniquenessViolation(let path, "Default", "Value", ["code"], let values)? = error as? StoreError else { return false }
            return path.contains("schema=") && values.count == 1 && values[0].contains("c7")
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Value")) == 0)
    }
}

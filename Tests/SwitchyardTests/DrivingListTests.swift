import Foundation
import Testing
@testable import Switchyard

/// A long `IN` list on an attribute the file has an index for drives the SQLite query through that index
/// (`json_each(?) CROSS JOIN <table> INDEXED BY <index>`), and only then: not for an attribute without an
/// index (the table would be scanned once per value), nor for a short list. When another connection drops the
/// index while the store is open, the next fetch still returns the right rows (the store forgets the index).
@Suite struct DrivingListTests {
    static func model() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "code", type: .string, isIndexed: true),
                AttributeDescription(name: "tag", type: .string),
            ])
        return try ObjectModel(entities: [item], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item"])])
    }

    static func codes(_ request: StoreFetchRequest, _ store: SQLiteStore) throws -> [String] {
        try store.fetch(request).map { $0["code"].stringValue ?? "?" }
    }

    @Test func onlyAnIndexedAttributeWithALongListDrivesTheQuery() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("d.sqlite")
        let store = try SQLiteStore(url: url, model: try Self.model(), configuration: "Main")
        try store.save(StoreChangeSet(inserts: (0..<100).map { i in
            StoreRow(entityName: "Item", primaryKey: Int64(i + 1), values: ["code": .string("c\(i)"), "tag": .string("t\(i)")])
        }))
        let listed: [AttributeValue] = (0..<60).map { .string("c\($0 * 2)") } + (0..<60).map { .string("c\($0 * 2)") }
        func inList(_ key: String, _ values: [AttributeValue]) -> StoreFetchRequest {
            StoreFetchRequest(entityName: "Item", predicate: .comparison(Comparison(.keyPath([key]), .in, .list(values.map { .constant($0) }))))
        }
        let driven = try store.selectSQL(inList("code", listed))
        #expect(driven.contains("json_each(?) AS l0 CROSS JOIN \"ZITEM\" AS t0 INDEXED BY"), "\(driven)")
        #expect(!(try store.selectSQL(inList("tag", listed))).contains("INDEXED BY"))
        #expect(!(try store.selectSQL(inList("code", Array(listed.prefix(3))))).contains("INDEXED BY"))
        let expected = (0..<50).map { "c\($0 * 2)" }   // c100 and beyond are listed, not stored
        let got = try Self.codes(inList("code", listed), store)
        #expect(got == expected)
        let counted = try store.count(inList("code", listed))
        #expect(counted == 50)

        // A second store on the file reads the indexes now, before another process drops the index.
        let second = try SQLiteStore(url: url, model: try Self.model(), configuration: "Main")
        #expect(try second.selectSQL(inList("code", listed)).contains("INDEXED BY"))
        let index = try SQLite3.query(url.path, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZITEM' AND sql LIKE '%ZCODE%'")
        #expect(!index.isEmpty)
        try SQLite3.execute(url.path, "DROP INDEX \"\(index)\"")
        // The first store's count runs its cached statement, which SQLite prepares again at its first step and
        // refuses; the second store prepares a fresh statement (a list too long to cache), which SQLite refuses.
        #expect(try store.count(inList("code", listed)) == 50)
        #expect(try Self.codes(inList("code", listed), store) == expected)
        let longer = listed + (0..<500).map { .string("missing-\($0)") }
        #expect(try Self.codes(inList("code", longer), second) == expected)
        #expect(try second.count(inList("code", longer)) == 50)
        #expect(!(try store.selectSQL(inList("code", listed))).contains("INDEXED BY"))
        #expect(!(try second.selectSQL(inList("code", listed))).contains("INDEXED BY"))

        // An index whose first column collates otherwise is not offered (SQLite would scan it whole per value);
        // a plain one made by another tool is. (On a file no store of this process has open.)
        let other = dir.file("e.sqlite")
        do {
            let first = try SQLiteStore(url: other, model: try Self.model(), configuration: "Main")
            try first.save(StoreChangeSet(inserts: (0..<100).map { i in
                StoreRow(entityName: "Item", primaryKey: Int64(i + 1), values: ["code": .string("c\(i)"), "tag": .string("t\(i)")])
            }))
        }
        try SQLite3.execute(other.path, "CREATE INDEX ITEM_TAG_NOCASE ON ZITEM (ZTAG COLLATE NOCASE)")
        let tags: [AttributeValue] = (0..<30).map { .string("t\($0 * 3)") }
        do {
            let third = try SQLiteStore(url: other, model: try Self.model(), configuration: "Main")
            #expect(!(try third.selectSQL(inList("tag", tags))).contains("INDEXED BY"))
        }
        try SQLite3.execute(other.path, "CREATE INDEX ITEM_TAG ON ZITEM (ZTAG)")
        let fourth = try SQLiteStore(url: other, model: try Self.model(), configuration: "Main")
        #expect(try fourth.selectSQL(inList("tag", tags)).contains("INDEXED BY \"ITEM_TAG\""))
        #expect(try fourth.fetch(inList("tag", tags)).count == 30)
    }
}

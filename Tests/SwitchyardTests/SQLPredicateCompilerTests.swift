import Foundation
import Testing
@testable import Switchyard

/// Predicates compiled to SQL and run on a small garage, each checked against a hand-computed answer.
/// The ASTs are built directly (the format parser lives elsewhere).
///
/// The data (labels are what the tests compare):
/// - Owners: `ann` (name "Ann", born 2000-01-01, rating 4.5, active, ownerID U1, favorite -> c2),
///   `bob` (name "bob", born 2010-06-01, rating 3.0, inactive), `emile` (name "Émile", nothing else),
///   `anon` (no name at all).
/// - Vehicles: Car `AB-1` (3 doors, "Zoe", ann), Car `ab-2` (5 doors, "Clio", ann), Truck `TR-9` (payload 12.5,
///   name 7, bob), Car `XY-3` (no doors, no name, no owner), Vehicle `V-0` (bob).
@Suite struct SQLPredicateCompilerTests {
    let dir = TemporaryDirectory()
    let store: SQLiteStore
    /// Primary key -> label, per table.
    let ownerLabels: [Int64: String]
    let vehicleLabels: [Int64: String]
    let ann: Int64
    static let u1 = UUID(uuidString: "00000000-0000-4000-8000-0000000000A1")!
    static let born2000 = Date(timeIntervalSinceReferenceDate: -31_622_400)   // 2000-01-01T00:00:00Z
    static let born2010 = Date(timeIntervalSince1970: 1_275_350_400)          // 2010-06-01T00:00:00Z

    init() throws {
        store = try SQLiteStore(url: dir.file("p.sqlite"), model: try SQLiteTestModels.garage(), configuration: "Garage")
        let owners = try SQLiteTestModels.insert([
            StoreRow(entityName: "Owner", primaryKey: 0, values: [
                "name": "Ann", "born": .date(Self.born2000), "rating": 4.5, "active": true, "ownerID": .uuid(Self.u1)]),
            StoreRow(entityName: "Owner", primaryKey: 0, values: [
                "name": "bob", "born": .date(Self.born2010), "rating": 3.0, "active": false]),
            StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Émile"]),
            StoreRow(entityName: "Owner", primaryKey: 0),
        ], into: store)
        let (a, b) = (owners[0].reference, owners[1].reference)
        let vehicles = try SQLiteTestModels.insert([
            StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "AB-1", "doors": 3, "name": "Zoe"], toOne: ["owner": a]),
            StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "ab-2", "doors": 5, "name": "Clio"], toOne: ["owner": a]),
            StoreRow(entityName: "Truck", primaryKey: 0, values: ["plate": "TR-9", "payload": 12.5, "name": 7], toOne: ["owner": b]),
            StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "XY-3"]),
            StoreRow(entityName: "Vehicle", primaryKey: 0, values: ["plate": "V-0"], toOne: ["owner": b]),
        ], into: store)
        try store.save(StoreChangeSet(updates: [RowUpdate(
            entityName: "Owner", primaryKey: owners[0].primaryKey, expectedVersion: 1, toOne: ["favorite": vehicles[1].reference])]))
        ann = owners[0].primaryKey
        ownerLabels = Dictionary(uniqueKeysWithValues: zip(owners.map(\.primaryKey), ["ann", "bob", "emile", "anon"]))
        vehicleLabels = Dictionary(uniqueKeysWithValues: vehicles.map { ($0.primaryKey, $0["plate"].stringValue ?? "?") })
    }

    private func labels(_ entity: String, _ predicate: FetchPredicate?, sort: [SortKey] = [], limit: Int? = nil,
                        offset: Int = 0, subentities: Bool = true) throws -> [String] {
        let request = StoreFetchRequest(entityName: entity, predicate: predicate, sortKeys: sort, fetchLimit: limit,
                                        fetchOffset: offset, includesSubentities: subentities)
        let rows = try store.fetch(request)
        // count agrees with fetch without limit and offset
        var unlimited = request
        unlimited.fetchLimit = nil
        unlimited.fetchOffset = 0
        #expect(try store.count(unlimited) == (try store.fetch(unlimited)).count)
        let table = entity == "Owner" ? ownerLabels : vehicleLabels
        return rows.map { table[$0.primaryKey] ?? "?" }
    }

    // MARK: - One comparison per case

    /// (entity, predicate, expected labels in primary-key order)
    static let cases: [(String, FetchPredicate, [String])] = [
        // == and != (plain strings compare with SQL, binary collation); a comparison with a missing value is
        // unknown, so != does not select it either — only a literal nil tests for missing values
        ("Vehicle", cmp("plate", .equal, "AB-1"), ["AB-1"]),
        ("Vehicle", cmp("plate", .equal, "ab-1"), []),
        ("Owner", cmp("name", .notEqual, "Ann"), ["bob", "emile"]),
        ("Vehicle", cmp("plate", .equal, .null), []),
        ("Car", cmp("name", .equal, .null), ["XY-3"]),
        ("Car", cmp("name", .notEqual, .null), ["AB-1", "ab-2"]),
        ("Truck", cmp("name", .equal, 7), ["TR-9"]),          // Truck.name is column ZNAME1
        ("Car", cmp("name", .equal, "Zoe"), ["AB-1"]),
        // ordering operators on integers, doubles, dates, strings
        ("Car", cmp("doors", .less, 5), ["AB-1"]),
        ("Car", cmp("doors", .lessOrEqual, 5), ["AB-1", "ab-2"]),
        ("Car", cmp("doors", .greater, 3), ["ab-2"]),
        ("Car", cmp("doors", .greaterOrEqual, 3), ["AB-1", "ab-2"]),
        ("Owner", cmp("rating", .greaterOrEqual, 3), ["ann", "bob"]),
        ("Owner", cmp("born", .less, .date(born2010)), ["ann"]),
        ("Owner", cmp("born", .greaterOrEqual, .date(born2000)), ["ann", "bob"]),
        ("Vehicle", cmp("plate", .less, "V"), ["AB-1", "TR-9"]),      // upper case sorts before lower case
        // booleans, UUIDs
        ("Owner", cmp("active", .equal, true), ["ann"]),
        ("Owner", cmp("active", .equal, false), ["bob"]),
        ("Owner", cmp("active", .equal, .null), ["emile", "anon"]),
        ("Owner", cmp("ownerID", .equal, .uuid(u1)), ["ann"]),
        ("Owner", cmp("ownerID", .equal, .string(u1.uuidString)), ["ann"]),
        // BETWEEN and IN
        ("Car", .comparison(Comparison(.keyPath(["doors"]), .between, .list([.constant(3), .constant(4)]))), ["AB-1"]),
        ("Owner", .comparison(Comparison(.keyPath(["rating"]), .between, .list([.constant(3.0), .constant(4.0)]))), ["bob"]),
        ("Vehicle", .comparison(Comparison(.keyPath(["plate"]), .in, .list([.constant("AB-1"), .constant("XY-3"), .constant("nope")]))), ["AB-1", "XY-3"]),
        ("Vehicle", .comparison(Comparison(.keyPath(["plate"]), .in, .list([]))), []),
        ("Vehicle", .comparison(Comparison(.keyPath(["plate"]), .in, .list([.constant("ab-1")]), options: .caseInsensitive)), ["AB-1"]),
        ("Car", .comparison(Comparison(.keyPath(["name"]), .in, .list([.constant("Clio"), .constant(.null)]))), ["ab-2"]),
        ("Car", .not(.comparison(Comparison(.keyPath(["name"]), .in, .list([.constant("Clio"), .constant(.null)])))), []),
        ("Car", .not(.comparison(Comparison(.keyPath(["name"]), .in, .list([.constant("Clio")])))), ["AB-1"]),
        ("Car", .comparison(Comparison(.keyPath(["name"]), .in, .constant("Zoe"))), ["AB-1"]),
        // string operators, with and without [c]/[d]
        ("Vehicle", cmp("plate", .beginsWith, "AB"), ["AB-1"]),
        ("Vehicle", cmp("plate", .beginsWith, "ab", .caseInsensitive), ["AB-1", "ab-2"]),
        ("Vehicle", cmp("plate", .endsWith, "-9"), ["TR-9"]),
        ("Vehicle", cmp("plate", .contains, "B-"), ["AB-1"]),
        ("Vehicle", cmp("plate", .contains, "b-", .caseInsensitive), ["AB-1", "ab-2"]),
        ("Vehicle", cmp("plate", .like, "??-?"), ["AB-1", "ab-2", "TR-9", "XY-3"]),
        ("Vehicle", cmp("plate", .like, "a*", .caseInsensitive), ["AB-1", "ab-2"]),
        ("Vehicle", cmp("plate", .like, "A*"), ["AB-1"]),
        ("Owner", cmp("name", .equal, "ann", .caseInsensitive), ["ann"]),
        ("Owner", cmp("name", .equal, "Emile"), []),
        ("Owner", cmp("name", .equal, "Emile", .diacriticInsensitive), ["emile"]),
        ("Owner", cmp("name", .beginsWith, "emi", [.caseInsensitive, .diacriticInsensitive]), ["emile"]),
        ("Owner", cmp("name", .notEqual, "ANN", .caseInsensitive), ["bob", "emile"]),
        ("Owner", .not(cmp("name", .beginsWith, "A")), ["bob", "emile"]),
        ("Owner", .comparison(Comparison(.keyPath(["name"]), .between, .list([.constant("a"), .constant("c")]), options: .caseInsensitive)), ["ann", "bob"]),
        ("Owner", cmp("name", .greater, "B", .caseInsensitive), ["bob", "emile"]),
        // a value that looks like SQL is only ever a bound parameter
        ("Vehicle", cmp("plate", .equal, "x' OR 1=1; DROP TABLE ZVEHICLE; --"), []),
        // constants and connectives
        ("Car", .constant(true), ["AB-1", "ab-2", "XY-3"]),
        ("Car", .constant(false), []),
        ("Car", .and([]), ["AB-1", "ab-2", "XY-3"]),
        ("Car", .or([]), []),
        ("Car", .not(cmp("doors", .equal, 3)), ["ab-2"]),   // NOT of unknown is unknown
        ("Car", .not(cmp("doors", .equal, .null)), ["AB-1", "ab-2"]),
        ("Car", .or([cmp("doors", .equal, 3), .not(cmp("doors", .equal, 3))]), ["AB-1", "ab-2"]),
        ("Car", .or([cmp("doors", .equal, 3), cmp("name", .equal, "Clio")]), ["AB-1", "ab-2"]),
        ("Car", .and([cmp("doors", .greater, 1), cmp("plate", .beginsWith, "ab")]), ["ab-2"]),
        ("Car", .not(.and([cmp("doors", .greater, 1), cmp("name", .beginsWith, "Z")])), ["ab-2"]),
        ("Car", .not(.and([cmp("doors", .greater, 1), cmp("plate", .beginsWith, "Z")])), ["AB-1", "ab-2", "XY-3"]),   // unknown AND false is false
        // to-one key paths (LEFT JOIN), a relationship compared by key
        ("Vehicle", cmp("owner.name", .equal, "Ann"), ["AB-1", "ab-2"]),
        ("Vehicle", cmp("owner.name", .equal, .null), ["XY-3"]),
        ("Vehicle", cmp("owner", .equal, .null), ["XY-3"]),
        ("Vehicle", cmp("owner.active", .equal, false), ["TR-9", "V-0"]),
        ("Vehicle", cmp("owner.favorite.plate", .equal, "ab-2"), ["AB-1", "ab-2"]),
        ("Vehicle", cmp("owner.name", .beginsWith, "B", .caseInsensitive), ["TR-9", "V-0"]),
        // to-many: @count and ANY/ALL/NONE through the inverse foreign key
        ("Owner", cmp("cars.@count", .equal, 2), ["ann", "bob"]),
        ("Owner", cmp("cars.@count", .equal, 0), ["emile", "anon"]),
        ("Vehicle", cmp("owner.cars.@count", .greater, 1), ["AB-1", "ab-2", "TR-9", "V-0"]),
        ("Owner", cmp("cars.plate", .beginsWith, "TR", modifier: .any), ["bob"]),
        ("Owner", cmp("cars.plate", .beginsWith, "ab", .caseInsensitive, modifier: .all), ["ann", "emile", "anon"]),
        ("Owner", cmp("cars.plate", .equal, "AB-1", modifier: .none), ["bob", "emile", "anon"]),
        ("Owner", cmp("cars.plate", .equal, "V-0"), ["bob"]),        // a to-many path without modifier is ANY
        ("Owner", .comparison(Comparison(.constant("AB-1"), .in, .keyPath(["cars", "plate"]))), ["ann"]),
        ("Owner", .not(.comparison(Comparison(.constant("AB-1"), .in, .keyPath(["cars", "plate"])))), ["bob", "emile", "anon"]),
        ("Owner", .comparison(Comparison(.constant("ab-1"), .in, .keyPath(["cars", "plate"]), options: .caseInsensitive)), ["ann"]),
        ("Owner", .comparison(Comparison(.keyPath(["cars"]), .contains, .constant(.integer(3)))), ["bob"]),   // membership by key
        ("Owner", cmp("cars.plate", .contains, "V-0"), ["bob"]),
        ("Owner", cmp("cars.plate", .contains, "V", modifier: .any), ["bob"]),   // with ANY: substring per element
        ("Owner", cmp("cars.owner.name", .equal, "bob", modifier: .any), ["bob"]),
    ]

    @Test(arguments: cases)
    func comparison(entity: String, predicate: FetchPredicate, expected: [String]) throws {
        #expect(try labels(entity, predicate) == expected)
    }

    static func cmp(
        _ path: String, _ op: ComparisonOperator, _ value: AttributeValue, _ options: ComparisonOptions = [],
        modifier: ComparisonModifier = .direct
    ) -> FetchPredicate {
        .comparison(Comparison(.keyPath(path.split(separator: ".").map(String.init)), op, .constant(value), options: options, modifier: modifier))
    }

    // MARK: - Entities, keys, sorting

    @Test func subentitiesAndSelf() throws {
        #expect(try labels("Vehicle", nil) == ["AB-1", "ab-2", "TR-9", "XY-3", "V-0"])
        #expect(try labels("Vehicle", nil, subentities: false) == ["V-0"])
        #expect(try labels("Car", nil) == ["AB-1", "ab-2", "XY-3"])
        #expect(try labels("Owner", .comparison(Comparison(.keyPath([]), .equal, .constant(.integer(ann))))) == ["ann"])
        #expect(try labels("Vehicle", Self.cmp("owner", .equal, .integer(ann))) == ["AB-1", "ab-2"])
        #expect(try labels("Owner", Self.cmp("favorite", .notEqual, .null)) == ["ann"])
    }

    @Test func sortLimitOffset() throws {
        #expect(try labels("Vehicle", nil, sort: [SortKey("plate")]) == ["AB-1", "TR-9", "V-0", "XY-3", "ab-2"])
        #expect(try labels("Owner", nil, sort: [SortKey("name", ascending: false)]) == ["emile", "bob", "ann", "anon"])
        // NULL first ascending; ties broken by primary key.
        #expect(try labels("Vehicle", nil, sort: [SortKey("owner.name")]) == ["XY-3", "AB-1", "ab-2", "TR-9", "V-0"])
        #expect(try labels("Vehicle", nil, sort: [SortKey("owner.name", ascending: false), SortKey("plate")])
            == ["TR-9", "V-0", "AB-1", "ab-2", "XY-3"])
        #expect(try labels("Vehicle", nil, sort: [SortKey("plate")], limit: 2, offset: 1) == ["TR-9", "V-0"])
        #expect(try labels("Vehicle", nil, sort: [SortKey("plate")], offset: 3) == ["XY-3", "ab-2"])
        // A limit of 0 means no limit, as in Core Data.
        #expect(try labels("Vehicle", nil, limit: 0).count == 5)
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", fetchLimit: 1, fetchOffset: 1)) == 5)
    }

    // MARK: - Errors

    @Test func unknownKeyPathsAndUnboundVariables() throws {
        #expect(throws: QueryError.unknownKeyPath(entity: "Car", keyPath: "nosuch")) {
            try labels("Car", Self.cmp("nosuch", .equal, 1))
        }
        // Attributes of a subentity are not key paths of the parent.
        #expect(throws: QueryError.unknownKeyPath(entity: "Vehicle", keyPath: "doors")) {
            try labels("Vehicle", Self.cmp("doors", .equal, 3))
        }
        #expect(throws: QueryError.unknownKeyPath(entity: "Vehicle", keyPath: "plate.length")) {
            try labels("Vehicle", Self.cmp("plate.length", .equal, 3))
        }
        #expect(throws: QueryError.unknownKeyPath(entity: "Vehicle", keyPath: "owner.nosuch")) {
            try labels("Vehicle", Self.cmp("owner.nosuch", .equal, 3))
        }
        #expect(throws: QueryError.unknownKeyPath(entity: "Vehicle", keyPath: "nosuch")) {
            try labels("Vehicle", nil, sort: [SortKey("nosuch")])
        }
        #expect(throws: QueryError.unboundVariable(name: "FETCH_SOURCE.plate")) {
            try labels("Vehicle", .comparison(Comparison(.keyPath(["plate"]), .equal, .variable("FETCH_SOURCE", keyPath: ["plate"]))))
        }
    }

    @Test func stringOperatorsNeedStrings() throws {
        #expect(throws: QueryError.self) { try labels("Car", Self.cmp("doors", .beginsWith, "3")) }
        #expect(throws: QueryError.self) { try labels("Car", Self.cmp("plate", .contains, 3)) }
    }

    @Test func manyToManyGoesThroughTheJoinTable() throws {
        let request = StoreFetchRequest(entityName: "Owner", predicate: Self.cmp("tags.label", .equal, "x", modifier: .any))
        let sql = try store.selectSQL(request)
        #expect(sql.contains("FROM \"Z_3TAGS\""))
        #expect(try labels("Owner", Self.cmp("tags.label", .equal, "x", modifier: .any)).isEmpty)
        #expect(try store.count(StoreFetchRequest(entityName: "Owner", predicate: Self.cmp("tags.@count", .equal, 0))) > 0)
    }

    @Test func toManyWithoutInverseGoesThroughTheHiddenKey() throws {
        let request = StoreFetchRequest(entityName: "Owner", predicate: Self.cmp("notes.@count", .equal, 0))
        #expect(try store.selectSQL(request).contains("\"Z3NOTES\" = t0.\"Z_PK\""))
        // No owner has notes in this store: every owner has none, and none has one.
        #expect(try labels("Owner", Self.cmp("notes.@count", .equal, 0)) == (try labels("Owner", nil)))
        #expect(try labels("Owner", Self.cmp("notes.text", .equal, "x", modifier: .any)).isEmpty)
    }

    @Test func valuesAreBoundNeverInterpolated() throws {
        let secret = "needle-\(UUID().uuidString)"
        let request = StoreFetchRequest(
            entityName: "Vehicle",
            predicate: .and([Self.cmp("plate", .contains, .string(secret), .caseInsensitive), Self.cmp("owner.rating", .greater, 1234.5)]),
            fetchLimit: 7)
        let sql = try store.selectSQL(request)
        #expect(!sql.contains(secret))
        #expect(!sql.contains("1234.5"))
        #expect(!sql.contains("7"))
        #expect(sql.contains("SWITCHYARD_MATCH"))
        #expect(sql.contains("LEFT JOIN \"ZOWNER\""))
    }
}

import Foundation
import Switchyard
import Testing

/// Integers beyond 2^53 compared with doubles give the same rows on every backend, and the rows Core Data's
/// SQLite store gives: SQLite compares an integer with a double exactly (`sqlite3IntFloatCompare`), so
/// 9007199254740993 is not equal to 9007199254740992.0 although converting the integer to a Double rounds it
/// to exactly that. Saved rows, rows only pending in the context, counts and sorting all agree.
struct LargeNumberComparisonTests {
    static func model() throws -> ObjectModel {
        let entry = EntityDescription(
            name: "Entry",
            attributes: [
                AttributeDescription(name: "key", type: .string),
                AttributeDescription(name: "n", type: .integer64, isIndexed: true),
                AttributeDescription(name: "score", type: .double),
                AttributeDescription(name: "amount", type: .decimal),
            ])
        return try ObjectModel(entities: [entry], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Entry"])])
    }

    static let twoTo53: Int64 = 9_007_199_254_740_992

    /// (key, n, score, amount): each row's integer and double are neighbours that one Double cannot tell apart;
    /// an integral decimal is stored (and compared) by SQLite as an integer.
    static let rows: [(String, Int64, Double, String?)] = [
        ("a", twoTo53 + 1, 9_007_199_254_740_992.0, "9007199254740993"),    // n rounds to score, but n > score
        ("b", twoTo53, 9_007_199_254_740_992.0, "9223372036854775807"),     // n == score exactly
        ("c", twoTo53 - 1, 9_007_199_254_740_994.0, "10.11"),
        ("d", Int64.max, 9_223_372_036_854_775_808.0, nil),                  // 2^63 - 1 against 2^63: Double(n) == score
        ("e", -twoTo53 - 1, -9_007_199_254_740_992.0, "-9007199254740993"),
        ("f", 7, 7.5, "7.5"),
    ]

    /// A context over `backend` holding `rows`; the last two rows are only inserted, not saved, when `pending`.
    static func context(_ backend: Backend, in dir: TempDir, pending: Bool) throws -> ObjectContext {
        let coordinator = try backend.coordinator(try model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (i, (key, n, score, amount)) in rows.enumerated() {
            if pending && i == rows.count - 2 { try context.save() }
            let entry = try context.insert("Entry")
            try entry.set("key", key)
            try entry.set("n", n)
            try entry.set("score", score)
            if let amount { try entry.setValue(.decimal(Decimal(string: amount)!), forKey: "amount") }
        }
        if !pending { try context.save() }
        return pending ? context : ObjectContext(coordinator: coordinator)
    }

    /// The keys `format` selects, sorted by key; the count must agree.
    static func keys(_ context: ObjectContext, _ format: String, _ arguments: [PredicateArgument]) throws -> String {
        let request = FetchRequest(entityName: "Entry", predicate: try FetchPredicate(format: format, arguments: arguments), sortKeys: [SortKey("key")])
        let found = try context.fetch(request).map { try $0.get("key", as: String.self) ?? "?" }.joined()
        #expect(try context.count(request) == found.count, "count of \(format)")
        return found
    }

    static let cases: [(format: String, arguments: [PredicateArgument], keys: String)] = [
        ("score == %@", [(twoTo53 + 1).predicateArgument], ""),
        ("score != %@", [(twoTo53 + 1).predicateArgument], "abcdef"),
        ("score < %@", [(twoTo53 + 1).predicateArgument], "abef"),
        ("score >= %@", [(twoTo53 + 1).predicateArgument], "cd"),
        ("score <= 9007199254740993", [], "abef"),
        ("score > 9007199254740993", [], "cd"),
        ("score == 9223372036854775807", [], ""),
        ("score > 9223372036854775807", [], "d"),
        ("n == %@", [(9_007_199_254_740_992.0).predicateArgument], "b"),
        ("n != 9007199254740992.0", [], "acdef"),
        ("n > %@", [(9_007_199_254_740_992.0).predicateArgument], "ad"),
        ("n <= %@", [(9_007_199_254_740_992.0).predicateArgument], "bcef"),
        ("n < %@", [(-9_007_199_254_740_992.0).predicateArgument], "e"),
        ("n == %@", [(9_223_372_036_854_775_808.0).predicateArgument], ""),
        ("n < %@", [(9_223_372_036_854_775_808.0).predicateArgument], "abcdef"),
        ("n IN %@", [([9_007_199_254_740_992.0, 9_223_372_036_854_775_808.0, 7.5]).predicateArgument], "b"),
        ("score IN %@", [([twoTo53 + 1, Int64.max, 7]).predicateArgument], ""),
        ("score IN %@", [([twoTo53, twoTo53 + 2]).predicateArgument], "abc"),
        ("n BETWEEN %@", [([9_007_199_254_740_992.0, 9_007_199_254_740_992.0]).predicateArgument], "b"),
        ("n == score", [], "b"),
        ("n < score", [], "cdef"),
        ("n > score", [], "a"),
        ("amount == 9007199254740993", [], "a"),
        ("amount == 9223372036854775807", [], "b"),
        ("amount > 9223372036854775807", [], ""),
        ("amount < 9007199254740993", [], "cef"),
        ("amount == 10.11", [], "c"),
        ("amount == n", [], "ae"),
        ("n == %@", [PredicateArgument(Decimal(string: "9007199254740993")!)], "a"),
        ("score == %@", [PredicateArgument(Decimal(string: "9007199254740993")!)], ""),
    ]

    @Test(arguments: Backend.everyStore, [false, true])
    func integersBeyondTwoTo53ComparedWithDoublesAreExact(_ backend: Backend, pending: Bool) throws {
        let dir = try TempDir()
        let context = try Self.context(backend, in: dir, pending: pending)
        for c in Self.cases {
            #expect(try Self.keys(context, c.format, c.arguments) == c.keys, "\(c.format) \(c.arguments)")
        }
    }

    /// A NaN constant has no answer every backend gives: SQLite binds it as NULL (no row, even for `!=`),
    /// PostgreSQL ranks NaN above every number, IEEE comparison in Swift says `!=` for everything. A value can
    /// never be NaN (`set` refuses it), so comparing with NaN is a mistake: every backend refuses the fetch and
    /// the count with the same error, saved rows or pending, whatever the operator or where the NaN sits.
    static let nanCases: [(format: String, arguments: [PredicateArgument])] = [
        ("score > %@", [Double.nan.predicateArgument]),
        ("score != %@", [Double.nan.predicateArgument]),
        ("n == %@", [Double.nan.predicateArgument]),
        ("NOT (score == %@)", [Double.nan.predicateArgument]),
        ("key == 'a' OR score IN %@", [[1.0, Double.nan].predicateArgument]),
        ("score BETWEEN %@", [[Double.nan, 1.0].predicateArgument]),
        ("amount == %@", [PredicateArgument(Decimal.nan)]),
        ("score < %f", [Double.nan.predicateArgument]),
    ]

    @Test(arguments: Backend.everyStore, [false, true])
    func nanConstantsAreRefusedOnEveryBackend(_ backend: Backend, pending: Bool) throws {
        let dir = try TempDir()
        let context = try Self.context(backend, in: dir, pending: pending)
        for c in Self.nanCases {
            let request = FetchRequest(entityName: "Entry", predicate: try FetchPredicate(format: c.format, arguments: c.arguments))
            let fetchError = #expect(throws: QueryError.self, "\(c.format)") { try context.fetch(request) }
            #expect(fetchError?.localizedDescription.contains("NaN") == true, "\(c.format): \(String(describing: fetchError))")
            #expect(throws: QueryError.self, "count of \(c.format)") { try context.count(request) }
        }
        // A variable bound to NaN is refused the same way.
        let template = try FetchPredicate(format: "score >= $LOW")
        let bound = try template.substituting(["LOW": .double(.nan)])
        #expect(throws: QueryError.self) { try context.fetch(FetchRequest(entityName: "Entry", predicate: bound)) }
        // Batch updates and deletes refuse it too, and change nothing.
        if !pending {
            let nan = try FetchPredicate(format: "score != %@", arguments: [Double.nan.predicateArgument])
            #expect(throws: QueryError.self) { try context.coordinator.batchUpdate("Entry", where: nan, set: ["key": .string("z")]) }
            #expect(throws: QueryError.self) { try context.coordinator.batchDelete("Entry", where: nan) }
            #expect(try Self.keys(ObjectContext(coordinator: context.coordinator), "TRUEPREDICATE", []) == "abcdef")
        }
        // The same predicates without NaN still run: the refusal is about the constant, not the shape.
        #expect(try Self.keys(context, "score BETWEEN %@", [[7.0, 8.0].predicateArgument]) == "f")
    }
}

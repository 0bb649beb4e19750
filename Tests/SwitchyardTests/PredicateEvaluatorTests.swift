import Foundation
import Testing
@testable import Switchyard

// Foundation also has these names; these tests mean Switchyard's.

// MARK: - Test subject

/// A row as a dictionary from dotted key path to value(s); SELF is the key "".
private struct Row: PredicateSubject {
    var values: [String: PredicateValue]

    init(_ values: [String: PredicateValue]) { self.values = values }

    func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        let key = keyPath.joined(separator: ".")
        guard let value = values[key] else { throw QueryError.unknownKeyPath(entity: "Row", keyPath: key) }
        return value
    }
}

private let someID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

private let row = Row([
    "": .single(1),
    "name": .single("Ann"),
    "age": .single(30),
    "score": .single(2.5),
    "price": .single(.decimal(Decimal(string: "30")!)),
    "nickname": .single(.null),
    "flag": .single(true),
    "zero": .single(0),
    "city": .single("Café"),
    "star": .single("a*b"),
    "born": .single(.date(Date(timeIntervalSinceReferenceDate: 1000))),
    "id": .single(.uuid(someID)),
    "blob": .single(.binary(Data([1, 2, 3]))),
    "chat": .single(7),
    "chat.title": .single("Re: hi"),
    "nothing": .single(.null),
    "tags": .many(["swift", "Core", "data"]),
    "nums": .many([1, 2, 3]),
    "empty": .many([]),
    "withNull": .many([1, .null]),
    "messages": .many([1, 2, 3, 4]),
    "messages.length": .many([10, 20, 30, 40]),
])

// MARK: - Evaluation

@Suite struct PredicateEvaluatorTests {
    static let cases: [(String, Bool)] = [
        // Equality and ordering.
        ("name == 'Ann'", true), ("name = 'Ann'", true), ("name == 'ann'", false), ("name != 'Bob'", true),
        ("name != 'Ann'", false), ("age == 30", true), ("age != 30", false), ("age < 30.5", true),
        ("age > 29", true), ("age >= 30", true), ("age <= 29", false), ("age =< 30", true), ("age => 31", false),
        ("SELF == 1", true), ("chat == 7", true),
        // Type mixes: numbers by value across integer, double, decimal, bool, date.
        ("age == 30.0", true), ("price == 30", true), ("price == age", true), ("score > 2", true),
        ("score < 3", true), ("flag == 1", true), ("flag == TRUE", true), ("flag == YES", true),
        ("zero == FALSE", true), ("zero == NO", true), ("flag == 2", false), ("flag > 0.5", true),
        ("born == 1000", true), ("born == CAST(1000.0, 'NSDate')", true), ("born > CAST(999, 'NSDate')", true),
        ("born < CAST(999, 'NSDate')", false),
        // Different storage classes are never equal and order NULL < number < text < blob.
        ("name == 30", false), ("age == '30'", false), ("age < 'a'", true), ("name > 999", true),
        ("name != 30", true),
        // Null handling: IS NULL for literal nil, three-valued logic otherwise.
        ("nickname == nil", true), ("nickname == NULL", true), ("nil == nickname", true), ("nickname != nil", false),
        ("name != nil", true), ("name == nil", false), ("nothing == nil", true),
        ("nickname == 'x'", false), ("nickname != 'x'", false), ("NOT (nickname == 'x')", false),
        ("nickname < 5", false), ("NOT (nickname < 5)", false), ("NOT NOT nickname < 5", false),
        ("NOT nickname == nil", false), ("NOT nickname != nil", true),
        ("nickname < 5 OR age == 30", true), ("nickname < 5 AND age == 30", false),
        ("NOT (nickname < 5 AND age == 31)", true), ("NOT (nickname < 5 OR age == 31)", false),
        ("NOT (nickname < 5 OR age == 30)", false), ("nickname == nickname", false),
        ("nickname BEGINSWITH 'A'", false), ("NOT nickname BEGINSWITH 'A'", false),
        // IN with SQL semantics.
        ("age IN {1, 30}", true), ("age IN {1, 2}", false), ("age IN {}", false), ("NOT age IN {}", true),
        ("age IN {30.0}", true), ("flag IN {1}", true), ("name IN {'Bob', 'Ann'}", true), ("name IN {'ann'}", false),
        ("name IN[c] {'ann'}", true), ("age IN {30, nil}", true), ("age IN {1, nil}", false),
        ("NOT age IN {1, nil}", false), ("nickname IN {1}", false), ("NOT nickname IN {1}", false),
        ("nickname IN {}", false), ("age IN 30", true), ("'swift' IN tags", true), ("2 IN nums", true),
        ("5 IN nums", false), ("'SWIFT' IN[c] tags", true),
        // BETWEEN, inclusive.
        ("score BETWEEN {2, 3}", true), ("age BETWEEN {30, 30}", true), ("age BETWEEN {31, 40}", false),
        ("age BETWEEN {29.5, 30.5}", true), ("born BETWEEN {0, 2000}", true), ("nickname BETWEEN {0, 1}", false),
        ("NOT nickname BETWEEN {0, 1}", false), ("age BETWEEN {nil, 20}", false), ("NOT age BETWEEN {nil, 20}", true),
        ("name BETWEEN {'A', 'B'}", true),
        // String operators.
        ("name BEGINSWITH 'A'", true), ("name BEGINSWITH 'a'", false), ("name BEGINSWITH[c] 'a'", true),
        ("name ENDSWITH 'nn'", true), ("name ENDSWITH 'N'", false), ("name ENDSWITH[c] 'N'", true),
        ("name CONTAINS 'n'", true), ("name CONTAINS 'x'", false), ("name CONTAINS[c] 'AN'", true),
        ("chat.title BEGINSWITH 'Re:'", true), ("name < 'Bob'", true), ("name > 'B'", false),
        ("name <[c] 'bob'", true), ("name >=[c] 'ANN'", true), ("name >= 'ann'", false),
        // [c]/[d] with accents.
        ("city == 'Café'", true), ("city == 'Cafe'", false), ("city ==[cd] 'cafe'", true),
        ("city ==[c] 'CAFÉ'", true), ("city ==[c] 'cafe'", false), ("city ==[d] 'Cafe'", true),
        ("city ==[d] 'cafe'", false), ("city !=[cd] 'CAFE'", false), ("city BEGINSWITH[d] 'Cafe'", true),
        ("city CONTAINS[cd] 'FE'", true), ("city LIKE[cd] 'CAF?'", true), ("city LIKE 'Caf?'", true),
        // LIKE wildcards.
        ("name LIKE 'A*'", true), ("name LIKE 'A?n'", true), ("name LIKE 'a*'", false), ("name LIKE[c] 'a*'", true),
        ("name LIKE '*'", true), ("name LIKE 'A'", false), ("name LIKE '???'", true), ("name LIKE '??'", false),
        ("name LIKE '*n*'", true), ("name LIKE '*x*'", false), ("chat.title LIKE 'Re:*'", true),
        ("star LIKE 'a\\\\*b'", true), ("name LIKE 'A\\\\*'", false), ("star LIKE 'a?b'", true),
        // To-many: ANY/SOME, ALL, NONE, implicit ANY, membership.
        ("ANY tags == 'swift'", true), ("SOME tags == 'swift'", true), ("tags == 'swift'", true),
        ("tags == 'rust'", false), ("ANY tags BEGINSWITH[c] 'co'", true), ("ALL nums > 0", true),
        ("ALL nums > 1", false), ("NONE nums > 3", true), ("NONE nums > 2", false), ("ANY nums > 2", true),
        ("ALL empty > 100", true), ("NONE empty == 1", true), ("ANY empty == 1", false), ("empty == 1", false),
        ("NOT ANY nums > 2", false), ("NOT ALL nums > 1", true),
        ("tags CONTAINS 'swift'", true), ("tags CONTAINS 'swi'", false), ("ANY tags CONTAINS 'swi'", true),
        ("tags CONTAINS[c] 'CORE'", true), ("nums CONTAINS 2", true), ("nums CONTAINS 2.0", true),
        ("nums CONTAINS 5", false), ("empty CONTAINS 1", false), ("{1, 2, 3} CONTAINS 3", true),
        ("ANY nums IN {3, 4}", true), ("ALL nums IN {1, 2, 3}", true), ("ALL nums IN {1, 2}", false),
        ("NONE nums IN {7}", true), ("nums IN {3}", true),
        ("ALL withNull > 0", false), ("ANY withNull > 0", true), ("NONE withNull > 5", true),
        ("ANY withNull == nil", true), ("ALL withNull != nil", false), ("withNull CONTAINS 1", true),
        ("withNull CONTAINS 5", false), ("NOT withNull CONTAINS 5", false),
        ("ANY messages.length > 35", true), ("ALL messages.length >= 10", true), ("ANY messages.length > 40", false),
        // @count.
        ("messages.@count == 4", true), ("messages.@count > 3", true), ("messages.@count > 4", false),
        ("empty.@count == 0", true), ("tags.@count BETWEEN {1, 3}", true), ("nothing.@count == 0", true),
        ("nums.@count IN {3}", true),
        // Constants and logic.
        ("TRUEPREDICATE", true), ("FALSEPREDICATE", false), ("NOT FALSEPREDICATE", true),
        ("name == 'Ann' AND age == 30", true), ("name == 'Ann' AND age == 31", false),
        ("name == 'Bob' OR age == 30", true), ("name == 'Bob' OR age == 31", false),
        ("NOT name == 'Bob' AND NOT age == 31", true), ("NOT (name == 'Ann' OR age == 31)", false),
    ]

    @Test(arguments: cases)
    func evaluates(format: String, expected: Bool) throws {
        let predicate = try FetchPredicate(format: format)
        #expect(try PredicateEvaluator.evaluate(predicate, on: row) == expected)
    }

    @Test func comparesUUIDsAndDataByBytes() throws {
        #expect(try PredicateEvaluator.evaluate(FetchPredicate(format: "id == %@", .uuid(someID)), on: row))
        #expect(try !PredicateEvaluator.evaluate(FetchPredicate(format: "id == %@", .uuid(UUID())), on: row))
        #expect(try PredicateEvaluator.evaluate(FetchPredicate(format: "id == %@", .data(someID.bytes)), on: row))
        #expect(try PredicateEvaluator.evaluate(FetchPredicate(format: "blob == %@", .data(Data([1, 2, 3]))), on: row))
        #expect(try PredicateEvaluator.evaluate(FetchPredicate(format: "blob < %@", .data(Data([1, 2, 4]))), on: row))
        #expect(try PredicateEvaluator.evaluate(FetchPredicate(format: "blob > %@", "zzz"), on: row))
        #expect(try PredicateEvaluator.evaluate(FetchPredicate(format: "id IN %@", [.uuid(someID)]), on: row))
    }

    @Test func evaluatesSubstitutedVariables() throws {
        let p = try FetchPredicate(format: "chat == $FETCH_SOURCE.chat AND name ==[cd] $NAME")
        let bound = try p.substituting { name, keyPath in
            name == "FETCH_SOURCE" ? try row.predicateValues(at: keyPath).single : "ANN"
        }
        #expect(try PredicateEvaluator.evaluate(bound, on: row))
        #expect(throws: QueryError.unboundVariable(name: "FETCH_SOURCE.chat")) {
            try PredicateEvaluator.evaluate(p, on: row)
        }
    }

    @Test(arguments: [
        "age BEGINSWITH '3'", "name LIKE 3", "age == {1, 2}", "age BETWEEN 3",
        "tags CONTAINS {1, 2}", "name CONTAINS tags", "name.@count == 1",
    ])
    func unsupportedComparisonsThrow(format: String) throws {
        let predicate = try FetchPredicate(format: format)
        #expect(throws: QueryError.self) { try PredicateEvaluator.evaluate(predicate, on: row) }
    }

    @Test func betweenNeedsExactlyTwoBounds() {
        let threeBounds = FetchPredicate.comparison(Comparison(.keyPath(["age"]), .between, .list([.constant(1), .constant(2), .constant(3)])))
        #expect(throws: QueryError.self) { try PredicateEvaluator.evaluate(threeBounds, on: row) }
    }

    @Test func unknownKeyPathsPropagateTheSubjectsError() throws {
        #expect(throws: QueryError.unknownKeyPath(entity: "Row", keyPath: "missing")) {
            try PredicateEvaluator.evaluate(FetchPredicate(format: "missing == 1"), on: row)
        }
    }

    @Test func handBuiltEmptyConnectivesAreIdentities() throws {
        #expect(try PredicateEvaluator.evaluate(.and([]), on: row))
        #expect(try !PredicateEvaluator.evaluate(.or([]), on: row))
    }

    @Test func threeValuedLogicIsExposedInternally() throws {
        #expect(try PredicateEvaluator.truth(of: FetchPredicate(format: "nickname < 5"), on: row) == .unknown)
        #expect(try PredicateEvaluator.truth(of: FetchPredicate(format: "NOT nickname < 5"), on: row) == .unknown)
        #expect(try PredicateEvaluator.truth(of: FetchPredicate(format: "nickname < 5 OR TRUEPREDICATE"), on: row) == .true)
        #expect(try PredicateEvaluator.truth(of: FetchPredicate(format: "nickname < 5 AND FALSEPREDICATE"), on: row) == .false)
        #expect(try PredicateEvaluator.truth(of: FetchPredicate(format: "ALL withNull > 0"), on: row) == .false)
    }
}

// MARK: - String matching

@Suite struct StringMatchingTests {
    @Test(arguments: [
        ("", "*", true), ("", "?", false), ("", "", true), ("abc", "", false), ("ba", "*a", true),
        ("aXbYc", "a*b*c", true), ("aXbYc", "a*c*b", false), ("abcabc", "*abc", true), ("abcab", "*abc", false),
        ("a*b", "a\\*b", true), ("aXb", "a\\*b", false), ("a?b", "a\\?b", true), ("axb", "a\\?b", false),
        ("a\\b", "a\\\\b", true), ("ab*", "*\\*", true), ("ab", "*\\*", false), ("mississippi", "*sip*", true),
        ("mississippi", "m*i*s*i", true), ("mississippi", "m??s*", true), ("é", "?", true),
    ])
    func likeWildcards(string: String, pattern: String, expected: Bool) {
        #expect(StringMatching.matches(.like, string, pattern, options: []) == expected)
    }

    @Test func foldsCaseAndDiacritics() {
        #expect(StringMatching.matches(.equal, "Café", "cafe", options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(StringMatching.matches(.equal, "ÅNGSTRÖM", "angstrom", options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(!StringMatching.matches(.equal, "Café", "cafe", options: .caseInsensitive))
        #expect(StringMatching.matches(.beginsWith, "Éclair", "ec", options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(StringMatching.matches(.less, "apple", "Banana", options: .caseInsensitive))
        #expect(!StringMatching.matches(.less, "apple", "Banana", options: []))
    }
}

// MARK: - Sorting

@Suite struct PredicateSortTests {
    private static let rows: [Row] = [
        Row(["name": .single("Bob"), "age": .single(30), "tags": .many([1])]),
        Row(["name": .single("ann"), "age": .single(.null), "tags": .many([])]),
        Row(["name": .single("Ann"), "age": .single(25.5), "tags": .many([1, 2, 3])]),
        Row(["name": .single("Cy"), "age": .single(30), "tags": .many([1, 2])]),
    ]

    private func sorted(_ sort: [SortKey]) throws -> [String] {
        var failure: Error?
        let result = Self.rows.sorted { a, b in
            do {
                return try PredicateEvaluator.compare(a, b, by: sort) == .orderedAscending
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return result.map { row in
            if case .single(.string(let s)) = row.values["name"] { return s }
            return "?"
        }
    }

    @Test func sortsByBytesWithNullsFirstAscending() throws {
        #expect(try sorted([SortKey("name")]) == ["Ann", "Bob", "Cy", "ann"])
        #expect(try sorted([SortKey("age"), SortKey("name")]) == ["ann", "Ann", "Bob", "Cy"])
        #expect(try sorted([SortKey("age", ascending: false), SortKey("name", ascending: false)])
            == ["Cy", "Bob", "Ann", "ann"])
        #expect(try sorted([SortKey("tags.@count", ascending: false)]) == ["Ann", "Cy", "Bob", "ann"])
        #expect(try PredicateEvaluator.compare(Self.rows[0], Self.rows[3], by: [SortKey("age")]) == .orderedSame)
        #expect(try PredicateEvaluator.compare(Self.rows[0], Self.rows[3], by: []) == .orderedSame)
    }

    @Test func sortingByAToManyKeyThrows() {
        #expect(throws: QueryError.self) {
            try PredicateEvaluator.compare(Self.rows[0], Self.rows[1], by: [SortKey("tags")])
        }
    }
}

// MARK: - Helpers

extension PredicateValue {
    /// The value of a `.single`, or null.
    fileprivate var single: AttributeValue {
        if case .single(let value) = self { return value }
        return .null
    }
}

import Foundation
import Testing
@testable import Switchyard

// Foundation also has `FetchPredicate`, `QueryError` and `PredicateOperand`; these tests mean Switchyard's.

// MARK: - Helpers

/// A dotted key path expression: `kp("chat.title")`; `kp("")` is SELF.
private func kp(_ path: String) -> PredicateOperand {
    .keyPath(path.split(separator: ".").map(String.init))
}

private func c(_ v: AttributeValue) -> PredicateOperand { .constant(v) }

private func cmp(
    _ left: PredicateOperand, _ op: ComparisonOperator, _ right: PredicateOperand,
    _ options: ComparisonOptions = [], _ modifier: ComparisonModifier = .direct
) -> FetchPredicate {
    .comparison(Comparison(left, op, right, options: options, modifier: modifier))
}

private let a1 = cmp(kp("a"), .equal, c(1))
private let b2 = cmp(kp("b"), .equal, c(2))
private let c3 = cmp(kp("c"), .equal, c(3))

// MARK: - Parsing

@Suite struct PredicateParserTests {
    static let table: [(String, FetchPredicate)] = [
        // Every comparison operator and its spellings.
        ("name == 'Ann'", cmp(kp("name"), .equal, c("Ann"))),
        ("name = \"Ann\"", cmp(kp("name"), .equal, c("Ann"))),
        ("age != 3", cmp(kp("age"), .notEqual, c(3))),
        ("age <> 3", cmp(kp("age"), .notEqual, c(3))),
        ("age < 3", cmp(kp("age"), .less, c(3))),
        ("age <= 3", cmp(kp("age"), .lessOrEqual, c(3))),
        ("age =< 3", cmp(kp("age"), .lessOrEqual, c(3))),
        ("age > 3", cmp(kp("age"), .greater, c(3))),
        ("age >= 3", cmp(kp("age"), .greaterOrEqual, c(3))),
        ("age => 3", cmp(kp("age"), .greaterOrEqual, c(3))),
        ("age BETWEEN {1, 10}", cmp(kp("age"), .between, .list([c(1), c(10)]))),
        ("age IN {1, 2, 3}", cmp(kp("age"), .in, .list([c(1), c(2), c(3)]))),
        ("name BEGINSWITH 'A'", cmp(kp("name"), .beginsWith, c("A"))),
        ("name ENDSWITH 'n'", cmp(kp("name"), .endsWith, c("n"))),
        ("name CONTAINS 'n'", cmp(kp("name"), .contains, c("n"))),
        ("name LIKE 'A*n?'", cmp(kp("name"), .like, c("A*n?"))),
        // Keywords are case-insensitive; options in any order and case.
        ("name beginswith[c] 'a'", cmp(kp("name"), .beginsWith, c("a"), .caseInsensitive)),
        ("name ==[d] 'a'", cmp(kp("name"), .equal, c("a"), .diacriticInsensitive)),
        ("name ==[cd] 'a'", cmp(kp("name"), .equal, c("a"), [.caseInsensitive, .diacriticInsensitive])),
        ("name Like[DC] 'a'", cmp(kp("name"), .like, c("a"), [.caseInsensitive, .diacriticInsensitive])),
        ("name In[c] {'a'}", cmp(kp("name"), .in, .list([c("a")]), .caseInsensitive)),
        ("x==1", cmp(kp("x"), .equal, c(1))),
        // Key paths, SELF, @count, escapes.
        ("chat.title == 'x'", cmp(kp("chat.title"), .equal, c("x"))),
        ("SELF == 3", cmp(kp(""), .equal, c(3))),
        ("self.name == 3", cmp(kp("name"), .equal, c(3))),
        ("messages.@count > 3", cmp(kp("messages.@count"), .greater, c(3))),
        ("@count == 0", cmp(kp("@count"), .equal, c(0))),
        ("#IN == 1", cmp(kp("IN"), .equal, c(1))),
        ("chat.in == 1", cmp(kp("chat.in"), .equal, c(1))),
        ("café.naïve == 1", cmp(kp("café.naïve"), .equal, c(1))),
        ("size > 100 AND first.last == 1", .and([cmp(kp("size"), .greater, c(100)), cmp(kp("first.last"), .equal, c(1))])),
        // Modifiers.
        ("ANY tags.name == 'x'", cmp(kp("tags.name"), .equal, c("x"), [], .any)),
        ("some tags.name == 'x'", cmp(kp("tags.name"), .equal, c("x"), [], .any)),
        ("ALL tags.name == 'x'", cmp(kp("tags.name"), .equal, c("x"), [], .all)),
        ("NONE tags.name == 'x'", cmp(kp("tags.name"), .equal, c("x"), [], .none)),
        // Literals.
        ("x == nil", cmp(kp("x"), .equal, c(.null))),
        ("x == NULL", cmp(kp("x"), .equal, c(.null))),
        ("x == TRUE", cmp(kp("x"), .equal, c(true))),
        ("x == yes", cmp(kp("x"), .equal, c(true))),
        ("x == FALSE", cmp(kp("x"), .equal, c(false))),
        ("x == NO", cmp(kp("x"), .equal, c(false))),
        ("TRUEPREDICATE", .constant(true)),
        ("falsepredicate", .constant(false)),
        ("x == 42", cmp(kp("x"), .equal, c(42))),
        ("x == -42", cmp(kp("x"), .equal, c(-42))),
        ("x == 1.5", cmp(kp("x"), .equal, c(1.5))),
        ("x == -1.5e3", cmp(kp("x"), .equal, c(-1500.0))),
        ("x == 1e3", cmp(kp("x"), .equal, c(1000.0))),
        ("x == 0x1F", cmp(kp("x"), .equal, c(31))),
        ("x == -0x10", cmp(kp("x"), .equal, c(-16))),
        ("x == 0b101", cmp(kp("x"), .equal, c(5))),
        ("x == 0o17", cmp(kp("x"), .equal, c(15))),
        ("x == 9223372036854775807", cmp(kp("x"), .equal, c(.integer(.max)))),
        ("x == -9223372036854775808", cmp(kp("x"), .equal, c(.integer(.min)))),
        ("x == 9223372036854775808", cmp(kp("x"), .equal, c(9223372036854775808.0))),
        ("x == 'it\\'s'", cmp(kp("x"), .equal, c("it's"))),
        ("x == \"a\\\"b\\\\c\"", cmp(kp("x"), .equal, c("a\"b\\c"))),
        ("x == 'tab\\there\\n'", cmp(kp("x"), .equal, c("tab\there\n"))),
        ("x == '\\u00e9'", cmp(kp("x"), .equal, c("é"))),
        ("x == 'say \"hi\"'", cmp(kp("x"), .equal, c("say \"hi\""))),
        ("d < CAST(100.5, 'NSDate')", cmp(kp("d"), .less, c(.date(Date(timeIntervalSinceReferenceDate: 100.5))))),
        ("d < CAST(0, \"NSDate\")", cmp(kp("d"), .less, c(.date(Date(timeIntervalSinceReferenceDate: 0))))),
        // Logic and precedence: NOT > AND > OR.
        ("a == 1 AND b == 2", .and([a1, b2])),
        ("a == 1 && b == 2", .and([a1, b2])),
        ("a==1&&b==2", .and([a1, b2])),
        ("a == 1 OR b == 2 || c == 3", .or([a1, b2, c3])),
        ("a == 1 and b == 2 and c == 3", .and([a1, b2, c3])),
        ("NOT a == 1", .not(a1)),
        ("!a == 1", .not(a1)),
        ("NOT NOT a == 1", .not(.not(a1))),
        ("a == 1 OR b == 2 AND c == 3", .or([a1, .and([b2, c3])])),
        ("a == 1 AND b == 2 OR c == 3", .or([.and([a1, b2]), c3])),
        ("NOT a == 1 AND b == 2", .and([.not(a1), b2])),
        ("(a == 1 OR b == 2) AND c == 3", .and([.or([a1, b2]), c3])),
        ("NOT (a == 1 OR b == 2)", .not(.or([a1, b2]))),
        ("(a == 1 AND b == 2) AND c == 3", .and([.and([a1, b2]), c3])),
        ("((a == 1))", a1),
        // Variables and aggregates.
        ("uuid == $FETCH_SOURCE.uuid", cmp(kp("uuid"), .equal, .variable("FETCH_SOURCE", keyPath: ["uuid"]))),
        ("x == $X", cmp(kp("x"), .equal, .variable("X", keyPath: []))),
        ("x IN {}", cmp(kp("x"), .in, .list([]))),
        ("x IN {'a', $V, -2, nil}", cmp(kp("x"), .in, .list([c("a"), .variable("V", keyPath: []), c(-2), c(.null)]))),
        ("ANY tags IN {1, 2}", cmp(kp("tags"), .in, .list([c(1), c(2)]), [], .any)),
        ("'swift' IN tags", cmp(c("swift"), .in, kp("tags"))),
    ]

    @Test(arguments: table)
    func parses(format: String, expected: FetchPredicate) throws {
        #expect(try FetchPredicate(format: format) == expected)
    }

    @Test(arguments: table)
    func roundTripsThroughFormat(format: String, expected: FetchPredicate) throws {
        let printed = expected.format
        #expect(try FetchPredicate(format: printed) == expected, "printed as \(printed)")
    }

    @Test(arguments: [
        ("a = 1", "a == 1"),
        ("a <> 1", "a != 1"),
        ("a =< 1 and b => 2", "a <= 1 AND b >= 2"),
        ("a == 1 and (b == 2 or c == 3)", "a == 1 AND (b == 2 OR c == 3)"),
        ("not (a == 1 and b == 2)", "NOT (a == 1 AND b == 2)"),
        ("x like[dc] 'a*'", "x LIKE[cd] \"a*\""),
        ("some tags in {1,2}", "ANY tags IN {1, 2}"),
        ("#in == $v.x", "#in == $v.x"),
        ("SELF == yes", "SELF == TRUE"),
        ("x == 1.0", "x == 1.0"),
        ("x == 'a\\tb'", "x == \"a\\tb\""),
        ("d == CAST(5, 'NSDate')", "d == CAST(5.0, \"NSDate\")"),
    ])
    func printsCanonicalFormat(format: String, printed: String) throws {
        let predicate = try FetchPredicate(format: format)
        #expect(predicate.format == printed)
        #expect(predicate.description == printed)
    }

    /// Values with no literal spelling print as CAST(…) and read back identically.
    @Test func roundTripsEveryValueKind() throws {
        let values: [AttributeValue] = [
            .null, .integer(.min), .integer(.max), .double(0.1), .double(-2.5e-300), .double(.infinity),
            .double(-.infinity), .decimal(Decimal(string: "12.345")!), .bool(true), .bool(false),
            .date(Date(timeIntervalSinceReferenceDate: 123_456.789)), .binary(Data([0, 1, 2, 255])),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri(URL(string: "https://example.com/a?b=c")!),
            .string(""), .string("quote \" backslash \\ tab \t nl \n cr \r nul \0 bell \u{7}"),
            .string("\u{301}leading combining mark"), .string("emoji 👩‍👩‍👧 e\u{301}"),
        ]
        for value in values {
            let predicate = cmp(kp("x"), .equal, c(value))
            #expect(try FetchPredicate(format: predicate.format) == predicate, "printed as \(predicate.format)")
        }
    }

    @Test func printsHandBuiltTreesEquivalently() throws {
        #expect(FetchPredicate.and([]).format == "TRUEPREDICATE")
        #expect(FetchPredicate.or([]).format == "FALSEPREDICATE")
        #expect(FetchPredicate.and([.or([a1, b2])]).format == "(a == 1 OR b == 2)")
        #expect(FetchPredicate.not(.not(.and([a1, b2]))).format == "NOT NOT (a == 1 AND b == 2)")
        let weird = cmp(kp("AND.select"), .equal, c(1))
        #expect(weird.format == "#AND.select == 1")
        #expect(try FetchPredicate(format: weird.format) == weird)
    }

    // MARK: - Arguments

    @Test func substitutesArgumentsOfEveryKind() throws {
        let date = Date(timeIntervalSinceReferenceDate: 42)
        let id = UUID()
        #expect(
            try FetchPredicate(format: "age > %d AND name == %@", 30, "Ann")
                == .and([cmp(kp("age"), .greater, c(30)), cmp(kp("name"), .equal, c("Ann"))]))
        #expect(try FetchPredicate(format: "%K == %@", "chat.title", "x") == cmp(kp("chat.title"), .equal, c("x")))
        #expect(try FetchPredicate(format: "%K == %i", PredicateArgument.keyPath("a.b"), 1) == cmp(kp("a.b"), .equal, c(1)))
        #expect(try FetchPredicate(format: "%K.@count > %ld", "messages", 2) == cmp(kp("messages.@count"), .greater, c(2)))
        #expect(try FetchPredicate(format: "%K.title == 1", "chat") == cmp(kp("chat.title"), .equal, c(1)))
        #expect(try FetchPredicate(format: "x IN %@", [1, 2, 3]) == cmp(kp("x"), .in, .list([c(1), c(2), c(3)])))
        #expect(try FetchPredicate(format: "x IN %@", PredicateArgument.list([])) == cmp(kp("x"), .in, .list([])))
        #expect(try FetchPredicate(format: "x == %@", AttributeValue.null) == cmp(kp("x"), .equal, c(.null)))
        #expect(try FetchPredicate(format: "x == %@", .null) == cmp(kp("x"), .equal, c(.null)))
        #expect(try FetchPredicate(format: "x == %f", 2) == cmp(kp("x"), .equal, c(2.0)))
        #expect(try FetchPredicate(format: "x == %lf", 2.5) == cmp(kp("x"), .equal, c(2.5)))
        #expect(try FetchPredicate(format: "x == %lld OR x == %u", 7, 8) == .or([cmp(kp("x"), .equal, c(7)), cmp(kp("x"), .equal, c(8))]))
        #expect(try FetchPredicate(format: "x == %d", true) == cmp(kp("x"), .equal, c(1)))
        #expect(try FetchPredicate(format: "x < %@", .date(date)) == cmp(kp("x"), .less, c(.date(date))))
        #expect(try FetchPredicate(format: "x == %@", .uuid(id)) == cmp(kp("x"), .equal, c(.uuid(id))))
        #expect(try FetchPredicate(format: "x == %@", .data(Data([1]))) == cmp(kp("x"), .equal, c(.binary(Data([1])))))
        #expect(try FetchPredicate(format: "x == %@", .integer(UInt64.max)) == cmp(kp("x"), .equal, c(.double(1.8446744073709552e19))))
        #expect(try FetchPredicate(format: "x BETWEEN %@", [1, 5]) == cmp(kp("x"), .between, .list([c(1), c(5)])))
        let name = "Bob"
        #expect(try FetchPredicate(format: "name == %@", .string(name)) == cmp(kp("name"), .equal, c("Bob")))
        #expect(try FetchPredicate(format: "name == %@", PredicateArgument(name)) == cmp(kp("name"), .equal, c("Bob")))
        #expect(try FetchPredicate(format: "n == %d", arguments: [PredicateArgument(5)]) == cmp(kp("n"), .equal, c(5)))
    }

    // MARK: - Errors

    enum Kind: Sendable { case syntax, badArgument }

    static let errors: [(String, [PredicateArgument], Kind, Int)] = [
        ("name == ", [], .syntax, 8),
        ("a ==== b", [], .syntax, 4),
        ("name == 'abc", [], .syntax, 8),
        ("name == \"abc\\\"", [], .syntax, 8),
        ("(a == 1", [], .syntax, 7),
        ("((a == 1)", [], .syntax, 9),
        ("a == 1)", [], .syntax, 6),
        (")", [], .syntax, 0),
        ("name FOO 'x'", [], .syntax, 5),
        ("name MATCHES 'x'", [], .syntax, 5),
        ("name", [], .syntax, 4),
        ("", [], .syntax, 0),
        ("   ", [], .syntax, 3),
        ("a ==", [], .syntax, 4),
        ("a == 1 AND", [], .syntax, 10),
        ("a == 1 b == 2", [], .syntax, 7),
        ("a == {1, 2", [], .syntax, 10),
        ("a == {1,, 2}", [], .syntax, 8),
        ("a BETWEEN {1}", [], .syntax, 10),
        ("a ==[x] 1", [], .syntax, 5),
        ("a ==[c 1", [], .syntax, 7),
        ("a.@sum > 1", [], .syntax, 2),
        ("a.@count.b == 1", [], .syntax, 8),
        ("a. == 1", [], .syntax, 3),
        ("a == 12ab", [], .syntax, 5),
        ("a == 0x", [], .syntax, 5),
        ("a == 0b102", [], .syntax, 5),
        ("a == 0x1FFFFFFFFFFFFFFFF", [], .syntax, 5),
        ("a == $", [], .syntax, 5),
        ("a == #", [], .syntax, 5),
        ("a == 1 %", [], .syntax, 7),
        ("a == %s", [], .syntax, 5),
        ("a == 'x\\u12'", [], .syntax, 7),
        ("a == 'x\\u+123'", [], .syntax, 7),
        ("a == - b", [], .syntax, 7),
        ("a == ¿", [], .syntax, 5),
        ("a == AND", [], .syntax, 5),
        ("SUBQUERY(x, $x, $x == 1).@count > 0", [], .syntax, 0),
        ("ANY", [], .syntax, 3),
        ("NOT", [], .syntax, 3),
        ("a IN", [], .syntax, 4),
        ("a == CAST(1, 'NSThing')", [], .syntax, 13),
        ("a == CAST(b, 'NSDate')", [], .syntax, 10),
        ("TRUEPREDICATE == 1", [], .syntax, 14),
        // Positions count Characters: the é below is two scalars, one Character.
        ("x == 'e\u{301}' AND", [], .syntax, 12),
        ("name == %@", [], .badArgument, 8),
        ("a == %@ AND b == %@", ["x"], .badArgument, 17),
        ("a == %d", ["x"], .badArgument, 5),
        ("a == %d", [2.5], .badArgument, 5),
        ("a == %f", [true], .badArgument, 5),
        ("a == %@", [.keyPath("b")], .badArgument, 5),
        ("%K == 1", [3], .badArgument, 0),
        ("%K == 1", [""], .badArgument, 0),
        ("%K == 1", ["a..b"], .badArgument, 0),
        ("%K == 1", ["a.@sum"], .badArgument, 0),
        ("a == 1", [1], .badArgument, 6),
        ("a BETWEEN %@", [[1, 2, 3]], .badArgument, 10),
        ("FUNCTION(a, 'b') == 1", [], .syntax, 0),
    ]

    @Test(arguments: errors)
    func reportsErrorPositions(format: String, arguments: [PredicateArgument], kind: Kind, position: Int) {
        do {
            let parsed = try FetchPredicate(format: format, arguments: arguments)
            Issue.record("parsed as \(parsed)")
        } catch let error as QueryError {
            switch (kind, error) {
            case (.syntax, .syntax(let f, let p, let reason)), (.badArgument, .badArgument(let f, let p, let reason)):
                #expect(f == format)
                #expect(p == position, "\(reason)")
                #expect(!reason.isEmpty)
            default:
                Issue.record("wrong error kind: \(error)")
            }
        } catch {
            Issue.record("not a QueryError: \(error)")
        }
    }

    @Test func errorDescriptionPointsAtPosition() {
        #expect(throws: QueryError.self) { try FetchPredicate(format: "a ==== b") }
        do {
            _ = try FetchPredicate(format: "a ==== b")
        } catch {
            #expect("\(error)".contains("position 4"))
            #expect("\(error)".hasSuffix("\n      ^"))
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let depth = 50_000
        let parens = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        let nots = String(repeating: "NOT ", count: depth) + "a == 1"
        let braces = "a IN " + String(repeating: "{", count: depth)
        let casts = "a == " + String(repeating: "CAST(", count: depth)
        for format in [parens, nots, braces, casts] {
            #expect(throws: QueryError.self) { try FetchPredicate(format: format) }
        }
        let fine = String(repeating: "(", count: 100) + "a == 1" + String(repeating: ")", count: 100)
        #expect(try FetchPredicate(format: fine) == a1)
    }
}

// MARK: - Fuzz

@Suite struct PredicateParserFuzzTests {
    /// SplitMix64, so a failure reproduces from its seed.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let fragments = [
        "a", "b.c", "SELF", "@count", ".", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "BETWEEN",
        "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "[c]", "[cd]", "[", "]", "AND", "OR",
        "NOT", "&&", "||", "!", "(", ")", "{", "}", ",", "ANY", "ALL", "NONE", "SOME", "nil", "TRUE", "NO",
        "TRUEPREDICATE", "FALSEPREDICATE", "1", "-2", "3.5", "1e9", "0x1f", "'s'", "\"t\\\"\"", "'", "\"", "\\",
        "%@", "%K", "%d", "%f", "%", "$V", "$V.x", "#IN", "CAST", "'NSDate'", "é", "e\u{301}", "👩‍👩‍👧", " ", "  ",
        "\u{0}", "\n", "-", "+", "@", "$", "#",
    ]

    /// Every argument kind, so specifiers that do parse get something to chew on.
    static let arguments: [PredicateArgument] = ["k", 1, 2.5, [1, 2], .keyPath("x.y"), nil, true]

    @Test(arguments: 0..<8)
    func randomFormatsParseOrThrow(seed: UInt64) throws {
        var rng = SeededGenerator(state: seed)
        for _ in 0..<1_500 {
            var format = ""
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    format.unicodeScalars.append(Unicode.Scalar(UInt8.random(in: 0...127, using: &rng)))
                } else {
                    format += Self.fragments.randomElement(using: &rng)! + (Bool.random(using: &rng) ? " " : "")
                }
            }
            let count = Int.random(in: 0...Self.arguments.count, using: &rng)
            try check(format, Array(Self.arguments.shuffled(using: &rng).prefix(count)))
        }
    }

    @Test(arguments: 0..<4)
    func mutatedValidFormatsParseOrThrow(seed: UInt64) throws {
        var rng = SeededGenerator(state: seed &+ 100)
        let seeds = PredicateParserTests.table.map(\.0)
        for _ in 0..<1_500 {
            var characters = Array(seeds.randomElement(using: &rng)!)
            for _ in 0..<Int.random(in: 1...3, using: &rng) where !characters.isEmpty {
                let i = Int.random(in: 0..<characters.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: characters.remove(at: i)
                case 1: characters.insert(Array("()'\"{}.[]%$@#!=<>, \\")[Int.random(in: 0..<20, using: &rng)], at: i)
                default: characters.swapAt(i, Int.random(in: 0..<characters.count, using: &rng))
                }
            }
            try check(String(characters), [])
        }
    }

    /// Parses or throws a `QueryError` with an in-range position; what parses prints back to itself.
    private func check(_ format: String, _ arguments: [PredicateArgument]) throws {
        do {
            let predicate = try FetchPredicate(format: format, arguments: arguments)
            let reparsed = try FetchPredicate(format: predicate.format)
            #expect(reparsed == predicate, "round trip of \(format) -> \(predicate.format)")
        } catch let error as QueryError {
            switch error {
            case .syntax(_, let position, _), .badArgument(_, let position, _):
                #expect((0...format.count).contains(position), "\(error)")
            default:
                Issue.record("unexpected \(error) for \(format)")
            }
        }
    }
}

// MARK: - Substitution

@Suite struct PredicateSubstitutionTests {
    static let fetched = try! FetchPredicate(
        format: "uuid == $FETCH_SOURCE.uuid AND (kind IN {1, $KIND} OR NOT owner.name ==[c] $NAME) AND tags.@count > 0")

    @Test func listsVariablesAndKeyPaths() throws {
        #expect(Self.fetched.variables == ["FETCH_SOURCE", "KIND", "NAME"])
        #expect(Self.fetched.keyPaths == [["uuid"], ["kind"], ["owner", "name"], ["tags", "@count"]])
        #expect(try FetchPredicate(format: "SELF == 1").keyPaths == [[]])
        #expect(FetchPredicate.constant(true).variables.isEmpty)
    }

    @Test func resolvesVariablesWithKeyPathsThroughAClosure() throws {
        let id = UUID()
        var asked: [String] = []
        let resolved = Self.fetched.substituting { name, keyPath in
            asked.append(([name] + keyPath).joined(separator: "."))
            switch name {
            case "FETCH_SOURCE": return keyPath == ["uuid"] ? .uuid(id) : .null
            case "KIND": return 2
            default: return "ann"
            }
        }
        #expect(asked.sorted() == ["FETCH_SOURCE.uuid", "KIND", "NAME"])
        #expect(resolved.variables.isEmpty)
        let expected = try FetchPredicate(
            format: "uuid == %@ AND (kind IN {1, 2} OR NOT owner.name ==[c] 'ann') AND tags.@count > 0", .uuid(id))
        #expect(resolved == expected)
    }

    @Test func substitutesFromADictionary() throws {
        let p = try FetchPredicate(format: "colorID == $COLOR AND owner == $FETCH_SOURCE.id")
        let resolved = try p.substituting(["COLOR": 7, "FETCH_SOURCE.id": 3])
        #expect(resolved == (try FetchPredicate(format: "colorID == 7 AND owner == 3")))
        #expect(try p.substituting(["COLOR": nil, "FETCH_SOURCE.id": 3]) == (try FetchPredicate(format: "colorID == nil AND owner == 3")))
    }

    @Test func unboundVariablesThrow() throws {
        let p = try FetchPredicate(format: "colorID == $COLOR AND owner == $FETCH_SOURCE.id")
        #expect(throws: QueryError.unboundVariable(name: "FETCH_SOURCE.id")) {
            try p.substituting(["COLOR": 7])
        }
        #expect(throws: QueryError.unboundVariable(name: "COLOR")) {
            try p.substituting([:])
        }
    }

    @Test func substitutionWithANonThrowingClosureNeedsNoTry() throws {
        let p = try FetchPredicate(format: "a == $A")
        let resolved = p.substituting { _, _ in 1 }
        #expect(resolved == (try FetchPredicate(format: "a == 1")))
    }
}

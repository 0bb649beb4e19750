import Foundation
import Testing
import Switchyard

/// Every value an attribute accepts comes back from every backend as it was saved, or is refused at `set`
/// with an error that says why (SQLite turned NaN into nil, -0.0 into 0, cut strings at U+0000 and rounded
/// 38-digit decimals, while memory and LMDB kept them).
@Suite struct ValueFidelityTests {
    let dir = TemporaryDirectory()

    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Sample", attributes: [
                AttributeDescription(name: "name", type: .string, isIndexed: true),
                AttributeDescription(name: "real", type: .double),
                AttributeDescription(name: "amount", type: .decimal),
                AttributeDescription(name: "when", type: .date),
                AttributeDescription(name: "token", type: .uuid),
            ]),
        ])
    }

    /// A context on a store of `backend`; `reopen` gives a context on the same store opened again from its
    /// files (a memory store: the same coordinator).
    struct Harness {
        let coordinator: StoreCoordinator
        let reopen: () throws -> ObjectContext
    }

    func harness(_ backend: Backend) throws -> Harness {
        let model = try Self.model()
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Default", in: dir, name: "values")
        return Harness(coordinator: coordinator) {
            if backend == .memory { return ObjectContext(coordinator: coordinator) }
            let again = StoreCoordinator(model: model)
            try backend.add(to: again, configuration: "Default", in: dir, name: "values")
            return ObjectContext(coordinator: again)
        }
    }

    static let refusals: [(key: String, value: AttributeValue, reason: String)] = [
        ("real", .double(.nan), "NaN"),
        ("when", .date(Date(timeIntervalSinceReferenceDate: .nan)), "NaN"),
        ("amount", .decimal(Decimal(string: "12345678901234567890123456789012345678")!), "15 significant digits"),
        ("amount", .decimal(Decimal(string: "0.1234567890123456789")!), "15 significant digits"),
        ("name", .string("a\u{0}b\u{0}"), "U+0000"),
        // Stored out of line (more than 15 UTF-8 bytes), the NUL last; and after non-ASCII text.
        ("name", .string(String(repeating: "long text ", count: 8) + "\u{0}"), "U+0000"),
        ("name", .string("Grüße \u{0}"), "U+0000"),
    ]

    @Test(arguments: Backend.allCases)
    func unstorableValuesAreRefusedAtSet(backend: Backend) throws {
        let h = try harness(backend)
        let context = ObjectContext(coordinator: h.coordinator)
        let sample = try context.insert("Sample")
        for refusal in Self.refusals {
            #expect {
                try sample.setValue(refusal.value, forKey: refusal.key)
            } throws: { error in
                guard case ContextError.typeMismatch(_, let key, let expected, _) = error else { return false }
                return key == refusal.key && expected.contains(refusal.reason)
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func acceptedValuesRoundTripExactly(backend: Backend) throws {
        let h = try harness(backend)
        let context = ObjectContext(coordinator: h.coordinator)
        let cases: [(String, AttributeValue)] = [
            ("negative zero", .double(-0.0)), ("infinity", .double(.infinity)), ("-infinity", .double(-.infinity)),
            ("tiny", .double(5e-324)), ("max", .double(.greatestFiniteMagnitude)),
            ("15 digits", .decimal(Decimal(string: "1234567890.12345")!)),
            ("int64", .decimal(Decimal(string: "9223372036854775807")!)),
            ("small", .decimal(Decimal(string: "-0.000000000012345")!)),
        ]
        for (name, value) in cases {
            let sample = try context.insert("Sample")
            try sample.set("name", name)
            try sample.setValue(value, forKey: { if case .double = value { return "real" } else { return "amount" } }())
        }
        try context.save()
        let reread = try h.reopen()
        for (name, value) in cases {
            let found = try reread.fetch(FetchRequest(entityName: "Sample", predicate: try FetchPredicate(format: "name == %@", name)))
            let sample = try #require(found.first, "\(name)")
            switch value {
            case .double(let expected):
                let got = try #require(try sample.get("real", as: Double.self), "\(name)")
                // -0.0 is stored as 0.0 everywhere (SQLite has no negative zero): compare bit patterns.
                let want = expected == 0 ? 0.0 : expected
                #expect(got.bitPattern == want.bitPattern, "\(name): \(got)")
            case .decimal(let expected):
                #expect(try sample.get("amount", as: Decimal.self) == expected, "\(name)")
            default:
                Issue.record("unexpected case")
            }
        }
    }

    /// Predicates with a U+0000 constant, and a UUID attribute compared with a string literal, give the same
    /// rows on every backend (SQLite bound the string cut at the NUL, and matched the UUID string).
    /// `storageRefusal` answers for every attribute type and value kind by the rule it documents: NaN for the
    /// floating types and dates, U+0000 in text, a Decimal that a REAL column would not give back; nothing
    /// else is refused, and a value of another kind is not refused (it is a type mismatch, not a refusal).
    @Test func storageRefusalFollowsItsRuleForEveryTypeAndKind() throws {
        let long = String(repeating: "long text ", count: 8)
        let values: [(AttributeValue, refusedAs: Set<AttributeType>)] = [
            (.double(.nan), [.double, .float, .decimal]), (.double(1.5), []), (.double(-0.0), []),
            (.decimal(.nan), [.double, .float, .decimal]), (.decimal(Decimal(string: "0.1234567890123456789")!), [.decimal]),
            (.decimal(Decimal(12)), []),
            (.date(Date(timeIntervalSinceReferenceDate: .nan)), [.date]), (.date(Date(timeIntervalSinceReferenceDate: 1)), []),
            (.string("a\u{0}"), [.string]), (.string(long + "\u{0}"), [.string]), (.string("\u{0}" + long), [.string]),
            (.string("Grüße \u{0}"), [.string]), (.string(long), []), (.string(""), []), (.string("e\u{301}"), []),
            (.integer(0), []), (.bool(true), []), (.binary(Data([0, 0])), []), (.null, []),
            (.uuid(UUID()), []), (.uri(URL(string: "x-coredata://a/b/p1")!), []),
        ]
        for (value, refusedAs) in values {
            for type in AttributeType.allCases {
                let refusal = value.storageRefusal(for: type)
                #expect((refusal != nil) == refusedAs.contains(type), "\(value) as \(type.rawValue): \(refusal ?? "accepted")")
                if refusal != nil { #expect(value.normalized(for: type) == nil, "\(value) as \(type.rawValue) normalized") }
            }
        }
    }

    @Test func nulConstantsAndUUIDStringsHaveOneSemantics() throws {
        let token = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        func text(_ s: String) -> PredicateArgument { .value(.string(s)) }
        let predicates: [(String, [PredicateArgument])] = [
            ("name == %@", [text("\u{0}\u{0}")]), ("name == %@", [text("a\u{0}")]), ("name < %@", [text("a\u{0}")]),
            ("name > %@", [text("\u{0}")]), ("name BEGINSWITH %@", [text("a\u{0}")]), ("name ==[c] %@", [text("A\u{0}")]),
            ("name IN %@", [.list([.string("a\u{0}"), .string("b")])]), ("token == %@", [text(token.uuidString)]),
            ("token == %@", [.value(.uuid(token))]), ("token != %@", [text(token.uuidString)]),
            // Found by Tools/fuzz.sh predicate: Foundation's UUID parser stops at the NUL.
            ("token == %@", [text(token.uuidString + "\u{0}")]),
            // Idem: the constant's CAST gave the numeric column TEXT affinity on SQLite.
            ("real > %@", [text("\u{0}\u{0}=\u{0}")]), ("name <[cd] %@ OR real > %@", [text("\u{0}="), text("\u{0}=")]),
        ]
        var results: [Backend: [[String]]] = [:]
        for backend in Backend.allCases {
            let h = try harness(backend)
            let context = ObjectContext(coordinator: h.coordinator)
            for name in ["", "a", "b", "ab"] {
                let sample = try context.insert("Sample")
                try sample.set("name", name)
                if name == "a" { try sample.set("token", token) }
            }
            try context.save()
            let reread = try h.reopen()
            results[backend] = try predicates.map { format, arguments in
                let request = FetchRequest(
                    entityName: "Sample", predicate: try FetchPredicate(format: format, arguments: arguments),
                    sortKeys: [SortKey("name")])
                return try reread.fetch(request).map { try $0.get("name", as: String.self) ?? "nil" }
            }
        }
        for backend in Backend.allCases where backend != .memory {
            #expect(results[backend] == results[.memory], "\(backend)")
        }
        #expect(results[.memory]?[0] == [])
        #expect(results[.memory]?[2] == ["", "a"])
        #expect(results[.memory]?[7] == ["a"])
        #expect(results[.memory]?[8] == ["a"])
        #expect(results[.memory]?[9] == [])
        #expect(results[.memory]?[10] == [])
        #expect(results[.memory]?[11] == [])
    }

    /// A text attribute compared with a number, and a number attribute with a string, give the same rows on
    /// every backend: storage classes are compared (SQLite applied the column's affinity to the constant, so
    /// `name < 20` matched "" on SQLite only; found by Tools/fuzz.sh predicate).
    @Test func mixedClassComparisonsHaveOneSemantics() throws {
        let predicates = [
            "name < 20", "name == 20", "name > 20", "name IN {20, 'b'}", "name BETWEEN {0, 100}",
            "real < '5'", "real == '1.5'", "real > '1'", "amount IN {'2', 2}",
        ]
        var results: [Backend: [[String]]] = [:]
        for backend in Backend.allCases {
            let h = try harness(backend)
            let context = ObjectContext(coordinator: h.coordinator)
            for (name, value) in [("", 0.5), ("20", 1.5), ("b", 2.0), ("3", 30.0)] {
                let sample = try context.insert("Sample")
                try sample.set("name", name)
                try sample.set("real", value)
                try sample.set("amount", Decimal(value))
            }
            try context.save()
            let reread = try h.reopen()
            results[backend] = try predicates.map { format in
                try reread.fetch(FetchRequest(entityName: "Sample", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")]))
                    .map { try $0.get("name", as: String.self) ?? "nil" }
            }
        }
        for backend in Backend.allCases where backend != .memory {
            #expect(results[backend] == results[.memory], "\(backend): \(predicates)")
        }
        #expect(results[.memory]?[0] == [])
        #expect(results[.memory]?[2] == ["", "20", "3", "b"])
    }
}

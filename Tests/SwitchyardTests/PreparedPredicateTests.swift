import Foundation
import Testing
@testable import Switchyard

/// `PredicateEvaluator.Prepared` (the hashed `IN` the memory and LMDB stores use over many rows) gives exactly
/// the three-valued results of scanning the list, for every kind of value and list.
struct PreparedPredicateTests {
    private struct Subject: PredicateSubject {
        var values: [String: PredicateValue]
        func predicateValues(at keyPath: [String]) throws -> PredicateValue {
            let key = keyPath.joined(separator: ".")
            guard let value = values[key] else { throw QueryError.unknownKeyPath(entity: "Subject", keyPath: key) }
            return value
        }
    }

    static let values: [AttributeValue] = [
        .null, .integer(0), .integer(1), .integer(3), .integer(9_007_199_254_740_993), .double(1.0), .double(-0.0),
        .double(2.5), .double(9_007_199_254_740_992), .bool(true), .bool(false), .decimal(Decimal(3)),
        .date(Date(timeIntervalSinceReferenceDate: 3)), .string("a"), .string("Café"), .string("Cafe\u{301}"),
        .uri(URL(string: "https://a.example")!), .string("https://a.example"), .binary(Data([1, 2])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
    ]

    static let lists: [[AttributeValue]] = [
        [],
        Array(values[1..<12]),
        Array(values[12...]),
        values,
        Array(values.dropFirst()),
        (0..<20).map { .integer(Int64($0)) },
        (0..<20).map { .string("s\($0)") } + [.null],
    ]

    @Test func preparedInAgreesWithScanning() throws {
        let formats = [
            "x IN %@", "NOT (x IN %@)", "x IN %@ AND y == 1", "x IN %@ OR y == 1", "ANY xs IN %@", "ALL xs IN %@",
            "NONE xs IN %@",
        ]
        var checked = 0
        for list in Self.lists {
            for format in formats {
                let predicate = try FetchPredicate(format: format, arguments: [.list(list)])
                let prepared = PredicateEvaluator.Prepared(predicate)
                #expect((prepared.node != nil) == (list.count >= PreparedNode.minimumListCount), "\(format) \(list.count)")
                for x in Self.values {
                    for xs in [[], [x], [x, .integer(3)], Array(Self.values.prefix(4))] as [[AttributeValue]] {
                        for y in [AttributeValue.integer(1), .null] {
                            let subject = Subject(values: ["x": .single(x), "xs": .many(xs), "y": .single(y)])
                            let scanned = try PredicateEvaluator.truth(of: predicate, on: subject)
                            let hashed = try PredicateEvaluator.truth(of: predicate, on: subject, prepared: prepared.node)
                            #expect(hashed == scanned, "\(format) with \(list) on x = \(x), xs = \(xs), y = \(y)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked > 5_000)
    }
}

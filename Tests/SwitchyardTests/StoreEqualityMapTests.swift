import Foundation
import Testing
@testable import Switchyard

/// `StoreEqualityMap` and `StoreEqualityIndex` against a plain list searched with `storeEqual`, over values that share keys (1, 1.0, true,
/// a date at 1 s, decimals near them) so the inline entry, the overflow list and removal from both are exercised.
@Suite struct StoreEqualityMapTests {
    static let pool: [AttributeValue] = [
        .null, .integer(1), .double(1.0), .bool(true), .date(Date(timeIntervalSinceReferenceDate: 1)),
        .decimal(Decimal(string: "1")!), .decimal(Decimal(string: "0.1")!), .double(0.1), .integer(2), .double(2.5),
        .string("a"), .string("A"), .string("é"), .string("e\u{301}"), .uri(URL(string: "a")!), .binary(Data([1, 2])),
        .uuid(UUID(uuid: (1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), .binary(Data()),
        .double(0), .double(-0.0), .integer(0), .integer(9_007_199_254_740_993), .double(9_007_199_254_740_992),
        .binary(Data([1, 2] + Array(repeating: 0, count: 14))), .string(""),
    ]

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func agreesWithALinearSearch(seed: UInt64) {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        var map = StoreEqualityMap<Int>()
        var slots = StoreEqualityIndex()
        var reference: [(AttributeValue, Int)] = []
        func index(_ v: AttributeValue) -> Int? { reference.firstIndex { AttributeValue.storeEqual($0.0, v) } }
        for step in 0..<2_000 {
            let value = Self.pool[next(Self.pool.count)]
            switch next(4) {
            case 0:
                map[value] = step
                let before = slots.slot(of: value)
                let inserted = slots.insert(value)
                #expect(inserted.inserted == (before == nil) && (before == nil || inserted.slot == before))
                if let i = index(value) { reference[i].1 = step } else { reference.append((value, step)) }
            case 1:
                map[value] = nil
                #expect(slots.remove(value) != nil || index(value) == nil)
                if let i = index(value) { reference.remove(at: i) }
            case 2:
                map.update(value, initial: 0) { $0 += 1 }
                _ = slots.insert(value)
                if let i = index(value) { reference[i].1 += 1 } else { reference.append((value, 1)) }
            default:
                break
            }
            for probe in Self.pool {
                #expect(map[probe] == index(probe).map { reference[$0].1 }, "seed \(seed) step \(step) \(probe)")
                #expect(map.contains(probe) == (index(probe) != nil))
                #expect((slots.slot(of: probe) != nil) == (index(probe) != nil), "seed \(seed) step \(step) \(probe)")
            }
            // Values that are present hold distinct slots, all handed out so far.
            let present = reference.compactMap { slots.slot(of: $0.0) }
            #expect(Set(present).count == reference.count && present.allSatisfy { $0 < slots.slotCount })
        }
    }

    /// Thousands of distinct values inserted, removed and inserted again: the table grows and reuses removed
    /// entries, and every value keeps the slot it was given until removed.
    @Test func manyValuesGrowAndShrinkTheTable() {
        var index = StoreEqualityIndex(capacity: 3)
        var expected: [Int: Int] = [:]   // value number -> slot
        func value(_ n: Int) -> AttributeValue { n % 2 == 0 ? .string("key-\(n)") : .integer(Int64(n)) }
        for round in 0..<3 {
            for n in 0..<3_000 {
                let (slot, inserted) = index.insert(value(n))
                #expect(inserted == (expected[n] == nil), "round \(round) value \(n)")
                if let known = expected[n] { #expect(slot == known) } else { expected[n] = slot }
            }
            for n in stride(from: round, to: 3_000, by: 3) {
                #expect(index.remove(value(n)) == expected[n])
                expected[n] = nil
            }
            for n in 0..<3_000 { #expect(index.slot(of: value(n)) == expected[n], "round \(round) value \(n)") }
        }
        #expect(Set(expected.values).count == expected.count)
    }
}

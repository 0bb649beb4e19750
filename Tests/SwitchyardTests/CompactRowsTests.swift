import Foundation
import Testing
@testable import Switchyard

/// The rows a context hands a store without a `StoreRow` each (`CompactRows`) read exactly as the rows they stand
/// for, whatever mix of entities, unset values, to-ones and whole rows they hold, and stay so when changed.
@Suite struct CompactRowsTests {
    static let chat = RowLayout(names: ["title", "muted"])
    static let message = RowLayout(names: ["text", "sentAt", "flag"])

    /// A seeded mix: entity, values set or not, to-one on some rows only (first after a run without), a few whole rows.
    static func pair(seed: UInt64) -> (compact: CompactRows, rows: [StoreRow]) {
        var random = seed
        func next(_ n: Int) -> Int {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            return Int((random >> 33) % UInt64(n))
        }
        var compact = CompactRows(primaryKeys: (0..<500).map { Int64(1000 + $0) })
        var rows: [StoreRow] = []
        // One arena, as a context has: the rows' values lie at many rows of shared blocks.
        let arena = ChangeArena()
        for i in 0..<500 {
            let isChat = next(3) == 0
            let (name, layout) = isChat ? ("Chat", chat) : ("Message", message)
            var changed = ChangedValues()
            for position in layout.names.indices where next(3) != 0 {
                let value: AttributeValue = position == 0 ? .string("v\(i)-\(next(1000))") : .integer(Int64(next(1000)))
                changed.set(value, at: position, layout: layout, arena: arena)
            }
            let toOne: [String: RowReference] = i > 50 && next(5) == 0 ? ["chat": RowReference(entityName: "Chat", primaryKey: Int64(next(99)))] : [:]
            let row = StoreRow(entityName: name, primaryKey: Int64(1000 + i), values: changed.handOutRowValues(layout), toOne: toOne)
            if next(40) == 0 {
                var whole = row
                whole.values["extra"] = .string("kept whole")
                compact.append(whole)
                rows.append(whole)
            } else {
                compact.append(entityName: name, layout: layout, values: changed.handOut(), toOne: toOne)
                rows.append(row)
            }
        }
        return (compact, rows)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func compactRowsReadAsTheRowsTheyStandFor(seed: UInt64) {
        let (compact, rows) = Self.pair(seed: seed)
        let built = StoreRows(compact)
        #expect(built.count == rows.count)
        for (i, row) in rows.enumerated() {
            #expect(built[i] == row, "row \(i)")
            #expect(built[i].values.dictionary == row.values.dictionary, "row \(i)")
        }
        #expect(built == StoreRows(rows))
        #expect(built.hashValue == StoreRows(rows).hashValue)
        #expect(rows.contains { !$0.toOne.isEmpty } && rows.contains { $0.values["extra"] != nil })

        // Changed, it becomes plain rows in the same order.
        var changed = built
        let extra = StoreRow(entityName: "Chat", primaryKey: 1, values: ["title": .string("new")])
        changed.insert(extra, at: 7)
        #expect(Array(changed) == Array(rows[..<7]) + [extra] + Array(rows[7...]))
        var set = built
        set[3].version = 7
        var expected = rows
        expected[3].version = 7
        #expect(Array(set) == expected)
        #expect(built == StoreRows(rows), "the original is unchanged")
    }
}

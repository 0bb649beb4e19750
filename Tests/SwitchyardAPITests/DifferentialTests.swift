import Foundation
import Switchyard
import SwitchyardDifferential
import Testing

/// Random sequences of inserts, updates, relationship changes, deletes, saves, rollbacks, refreshes, fetches
/// and counts, some read with `forEach` in small batches (predicates with comparisons, AND/OR/NOT, IN, BEGINSWITH/CONTAINS with [cd], nil, to-one key
/// paths, ANY/ALL/NONE over to-many and many-to-many, @count, object arguments), with and without pending
/// changes, run on SQLite, LMDB, memory and PostgreSQL and compared with each other and with a plain-Swift reference.
/// A divergence fails with the seed and the shortest sequence that shows it. `bench --differential N` runs
/// many more.
@Suite struct DifferentialTests {
    static let seeds: [UInt64] = Array(1...60)

    @Test(arguments: seeds)
    func sequenceAgreesWithTheReference(seed: UInt64) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-diff-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let runner = try DifferentialRunner(directory: dir, postgresURL: try Backend.everyStore.contains(.postgresql) ? Backend.postgresURL(in: dir, name: "diff") : nil)
        do {
            let summary = try runner.run(seed: seed, length: 300)
            #expect(summary.fetches > 0)
            #expect(summary.walks > 0, "the sequence walked nothing with forEach")
        } catch let divergence as DifferentialRunner.Divergence {
            Issue.record("\(divergence)")
        }
    }
}

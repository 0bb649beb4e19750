import Foundation
import ArgumentParser
import SwitchyardDifferential

/// `bench --differential N`: runs N seeded sequences on SQLite, LMDB and memory against the reference and
/// prints how many ran, their steps and fetches, and every divergence (seed and shortest sequence).
enum DifferentialBench {
    static func run(sequences: Int, length: Int, firstSeed: UInt64, workdir: String?) throws {
        let dir = URL(fileURLWithPath: workdir ?? NSTemporaryDirectory()).appendingPathComponent("switchyard-diff-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let runner = try DifferentialRunner(directory: dir)
        var steps = 0, fetches = 0, walks = 0, saves = 0, divergences = 0
        let start = Date()
        for seed in firstSeed..<(firstSeed + UInt64(sequences)) {
            do {
                let summary = try runner.run(seed: seed, length: length)
                steps += summary.steps
                fetches += summary.fetches
                walks += summary.walks
                saves += summary.saves
            } catch let divergence as DifferentialRunner.Divergence {
                divergences += 1
                print(divergence)
            }
        }
        let seconds = Date().timeIntervalSince(start)
        print("differential: \(sequences) sequences (seeds \(firstSeed)...\(firstSeed + UInt64(sequences) - 1), \(length) steps each): "
            + "\(steps) steps, \(fetches) fetches and counts compared (\(walks) of them forEach walks), \(saves) saves, \(divergences) divergences, \(String(format: "%.1f", seconds)) s")
        if divergences > 0 { throw ExitCode(1) }
    }
}

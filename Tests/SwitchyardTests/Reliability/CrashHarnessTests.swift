import Foundation
import Testing

/// The kill -9 harness (`bench --crash N`) with a small N, as CI runs it: every kill during a save, a store
/// creation, a migration, a migration chain with a custom step, a split, and a store copy, conversion, move and
/// replace, on SQLite and LMDB, leaves a store that opens read-only and read-write with the
/// last committed state or the one in flight.
@Suite struct CrashHarnessTests {
    static let bench = Repository.url(".build/debug/bench")

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: bench.path), "bench is not built in .build/debug"))
    func fewKillsPerCaseLeaveConsistentStores() throws {
        let process = Process()
        process.executableURL = Self.bench
        process.arguments = ["--crash", "4", "--backends", "sqlite,lmdb"]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(log.contains("crash: 72 kills, 0 failures"), "\(log)")
    }
}

import Foundation
import Testing

@testable import Switchyard

/// Opening an LMDB store while another process commits to it must never report the healthy store as damaged
/// (FINDINGS 11: the file size was taken before the meta pages, so a commit in between made the newer meta
/// page name pages past the stale size: "data.mdb is truncated").
@Suite struct LMDBOpenRaceTests {
    static let bench = Repository.url(".build/debug/bench")

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: bench.path), "bench is not built in .build/debug"))
    func opensWhileAnotherProcessCommitsNeverSeeDamage() throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("race.lmdb")
        // The crash harness's child: commits one row (with a 2 KB payload) per transaction, forever.
        let writer = Process()
        writer.executableURL = Self.bench
        writer.arguments = ["--crash-child", "save:lmdb:\(url.path)"]
        let output = Pipe()
        writer.standardOutput = output
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        defer {
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
        }
        var transcript = ""
        while !transcript.contains("committed 5") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            transcript += String(decoding: chunk, as: UTF8.self)
        }
        try #require(transcript.contains("committed 5"), "the writer never committed: \(transcript)")
        // Keep the pipe drained so the writer never blocks on it.
        output.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        defer { output.fileHandleForReading.readabilityHandler = nil }

        let model = try ObjectModel(entities: [
            EntityDescription(name: "Entry", attributes: [
                AttributeDescription(name: "seq", type: .integer64, isIndexed: true), AttributeDescription(name: "payload", type: .binary),
            ]),
        ])
        var opens = 0, failures: [String] = []
        var lastCount = 0
        let deadline = Date().addingTimeInterval(2.5)
        while Date() < deadline {
            do {
                try LMDBStore.checkFile(at: url, configuration: "Default")
                let store = try LMDBStore(url: url, model: model, configuration: "Default", options: .readOnly)
                let count = try store.count(StoreFetchRequest(entityName: "Entry"))
                if count < lastCount { failures.append("count went back from \(lastCount) to \(count)") }
                lastCount = count
            } catch {
                failures.append("\(error)")
            }
            opens += 1
        }
        #expect(writer.isRunning, "the writer kept committing throughout")
        #expect(opens > 50, "only \(opens) opens in 2.5 s")
        #expect(failures.isEmpty, "\(failures.count) of \(opens) opens failed: \(failures.prefix(3))")
    }
}

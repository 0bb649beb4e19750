import ArgumentParser
import Switchyard

/// `bench`: measures Switchyard against raw SQLite, GRDB and raw LMDB in one run.
@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Benchmark Switchyard.")
    func run() throws {}
}

import ArgumentParser
import Foundation
import Switchyard

/// `storeinspect`: prints a store's type, metadata and row counts.
@main
struct StoreInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storeinspect",
        abstract: "Inspect a Core Data or Switchyard store: type, metadata, row counts, model.",
        version: SwitchyardInfo.version,
        subcommands: [CompatCommand.self])

    func run() throws {
        // The behaviour is issue #6; until then, say so in the CLIs' error format and exit non-zero.
        FileHandle.standardError.write(Data("storeinspect: inspect failed: not available in version \(SwitchyardInfo.version) (issue #6)\n".utf8))
        throw ExitCode(2)
    }
}

import ArgumentParser
import Switchyard

/// `storeinspect`: prints a store's type, metadata and row counts.
@main
struct StoreInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storeinspect",
        abstract: "Inspect a Core Data or Switchyard store: type, metadata, row counts, model.",
        version: SwitchyardInfo.version)

    func run() throws {
        throw ValidationError("storeinspect is not implemented yet")
    }
}

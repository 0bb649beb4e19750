import ArgumentParser
import Switchyard

/// `storesplit`: breaks a monolithic store into one store per configuration.
@main
struct StoreSplitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storesplit",
        abstract: "Split a monolithic Core Data or Switchyard store into one store per configuration.",
        version: SwitchyardInfo.version)

    func run() throws {
        throw ValidationError("storesplit is not implemented yet")
    }
}

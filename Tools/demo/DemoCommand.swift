import ArgumentParser
import Foundation
import Switchyard

/// `demo`: the Messenger story on local files. `demo generate` writes a legacy monolithic store, `storesplit`
/// (run by `Tools/demo.sh`) splits it into Cloud, Local and Cache stores, and `demo open` uses the result
/// through one coordinator, with fetched properties that cross stores.
@main
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Run the Switchyard Messenger demo on local files.", version: SwitchyardInfo.version,
        subcommands: [DemoGenerate.self, DemoOpen.self])
}

/// Prints a line at once, so the demo's progress shows while it runs.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

import ArgumentParser
import Foundation
import Switchyard
import ToolSupport

/// `storesplit`: breaks a monolithic store into one store per configuration.
@main
struct StoreSplitCommand: ParsableCommand {
    /// Argument errors read `storesplit: arguments failed: <reason>` (exit 64), as every other failure does.
    static func main() { mainReportingArgumentErrors(tool: "storesplit") }

    static let configuration = CommandConfiguration(
        commandName: "storesplit",
        abstract: "Split a monolithic Core Data or Switchyard store into one store per configuration.",
        discussion: """
            Reads SOURCE read-only (WAL sidecars honoured) and writes one store per --store, each under a \
            temporary name that is renamed into place only when complete and verified.

            Exit codes: 0 success (or a valid --dry-run plan, its outputs checked as the run checks them); 1 \
            --verify found a mismatch (outputs not \
            renamed); 2 failure (open, plan, copy); 64 bad arguments.
            """,
        version: SwitchyardInfo.version)

    @Argument(help: "The monolithic store: an SQLite file, an LMDB directory, or a postgres:// URL (PostgreSQL trait).")
    var source: String?

    @Option(name: .long, help: "The target model (.xcdatamodeld or .xcdatamodel) with its configurations.")
    var model: String?

    @Option(
        name: .customLong("store"),
        help: "CONFIG=PATH[:sqlite|lmdb] or CONFIG=postgres://user@host:port/database?schema=NAME (PostgreSQL trait), once per configuration to write.")
    var stores: [String] = []

    @Option(name: .customLong("source-model"), help: "The model the source was written with (default: its model cache).")
    var sourceModel: String?

    @Flag(name: .customLong("dry-run"), help: "Print the plan and write nothing.")
    var dryRun = false

    @Flag(help: "Re-read the outputs and compare per-entity content checksums with the source.")
    var verify = false

    @Flag(help: "Replace outputs that already exist.")
    var force = false

    @Flag(help: "Print the plan or report as JSON on stdout.")
    var json = false

    @Option(name: .customLong("batch-size"), help: "Rows per read and write transaction.")
    var batchSize = 5_000

    /// Hidden: read every row of this store and exit (the child process that probes an LMDB source).
    @Option(name: .customLong("probe"), help: .hidden)
    var probe: String?

    func run() throws {
        do {
            try split()
        } catch let error as SplitError {
            Self.fail(error.step, error.reason)
            if case .verification = error { throw ExitCode(1) }
            if case .usage = error { throw ExitCode(64) }
            throw ExitCode(2)
        }
    }

    static func fail(_ step: String, _ reason: String) {
        FileHandle.standardError.write(Data("storesplit: \(step) failed: \(reason)\n".utf8))
    }

    private func split() throws {
        if let probe {
            _ = try StoreProbe.readEverything(at: URL(fileURLWithPath: probe))
            return
        }
        guard let source else { throw SplitError.usage("no SOURCE store given") }
        guard let model else { throw SplitError.usage("no --model given (the target model with its configurations)") }
        guard batchSize > 0 else { throw SplitError.usage("--batch-size must be positive") }
        let target = try loadModel(model, option: "--model")
        let sourceModel = try self.sourceModel.map { try loadModel($0, option: "--source-model") }
        let sourceURL: URL
        do {
            try StoreLocation.checkStoreArguments(stores, tool: "storesplit")
            sourceURL = try StoreLocation.url(source, tool: "storesplit")
        } catch let error as StoreLocationError {
            throw SplitError.usage(error.message)
        }
        let destinations = try stores.map { try SplitDestination(argument: $0) }
        // An LMDB source is read in a child process first: damage only a full read shows fails this step
        // instead of killing storesplit.
        if StoreProbe.needsProbe(sourceURL) {
            try StoreProbe.probe(sourceURL, executable: StoreProbe.currentExecutable, arguments: ["--probe", source])
        }
        let splitter = try StoreSplitter(
            source: sourceURL, targetModel: target, destinations: destinations, sourceModel: sourceModel)
        let plan = try splitter.plan()
        if dryRun {
            // A plan is valid only if its outputs can be made: the run would refuse the same way.
            try splitter.checkOutputs(plan, force: force)
            if json { try PlanOutput.printJSON(plan) } else { PlanOutput.printText(plan) }
            return
        }
        let bar = ProgressBar.onTerminal()
        let report = try splitter.run(
            plan, options: SplitOptions(batchSize: batchSize, verifyContent: verify, force: force),
            progress: bar.map { bar in { bar.update($0) } })
        bar?.finish()
        if json { try PlanOutput.printJSON(report) } else { PlanOutput.printText(report) }
        if !json { for warning in plan.warnings { FileHandle.standardError.write(Data("storesplit: warning: \(warning)\n".utf8)) } }
    }

    private func loadModel(_ path: String, option: String) throws -> ObjectModel {
        do {
            return try ModelLoader.load(at: URL(fileURLWithPath: path))
        } catch {
            // The loader's errors start with the file they read (absolute, perhaps a file inside the model
            // bundle): "/x/A.xcdatamodel/contents (--model): missing name attribute", the path said once.
            let reason = "\(error)"
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            for base in [absolute, path] where reason.hasPrefix(base) {
                // What follows the path up to ": " still names the file ("/contents", "/contents:3:26").
                let rest = reason.dropFirst(base.count)
                guard rest.hasPrefix(":") || rest.hasPrefix("/"), let colon = rest.range(of: ": ") else { continue }
                let named = base + rest[..<colon.lowerBound]
                throw SplitError.model(path: named, reason: "\(named) (\(option)): \(rest[colon.upperBound...])")
            }
            throw SplitError.model(path: path, reason: "\(path) (\(option)): \(reason)")
        }
    }
}

import ArgumentParser
import Foundation
import Switchyard
import ToolSupport

/// `storeinspect`: a store's type, metadata and row counts; the model in its cache; a model's picture.
///
/// Subcommands register here; `inspect` is the default, so `storeinspect STORE` works as before.
@main
struct StoreInspectCommand: ParsableCommand {
    /// Argument errors read `storeinspect: arguments failed: <reason>` (exit 64), as every other failure does.
    static func main() { mainReportingArgumentErrors(tool: "storeinspect") }

    static let configuration = CommandConfiguration(
        commandName: "storeinspect",
        abstract: "Inspect a Core Data or Switchyard store: type, metadata, row counts, model.",
        discussion: "Exit codes: 0 success; 2 failure (the store or model cannot be read); 64 bad arguments.",
        version: SwitchyardInfo.version,
        subcommands: [
            InspectCommand.self, HistoryCommand.self, ModelCommand.self, GraphCommand.self, CompatCommand.self, CodegenCommand.self,
            ProbeCommand.self,
        ],
        defaultSubcommand: InspectCommand.self)

    /// The store argument's URL: a file path, or a `postgres://` URL when built with the PostgreSQL trait.
    static func storeURL(_ argument: String, step: String) throws -> URL {
        do {
            return try StoreLocation.url(argument, tool: "storeinspect")
        } catch {
            throw fail(step, "\(error)", code: 64)
        }
    }

    /// Prints `storeinspect: <step> failed: <reason>` and exits with `code`.
    static func fail(_ step: String, _ reason: String, code: Int32 = 2) -> ExitCode {
        FileHandle.standardError.write(Data("storeinspect: \(step) failed: \(reason)\n".utf8))
        return ExitCode(code)
    }

    static func loadModel(_ path: String, step: String) throws -> ObjectModel {
        do {
            return try ModelLoader.load(at: URL(fileURLWithPath: path))
        } catch {
            // The loader's errors name the file already; say it once.
            let reason = "\(error)"
            throw fail(step, reason.contains(path) ? reason : "\(path): \(reason)")
        }
    }

    static func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

    /// Reads an LMDB store in a child process (`storeinspect probe STORE`) before this process reads it, so a
    /// store damaged where only reading it shows fails the step instead of killing the tool.
    static func probe(_ path: String, step: String) throws {
        guard !StoreLocation.isServerURL(path) else { return }
        let url = URL(fileURLWithPath: path)
        guard StoreProbe.needsProbe(url) else { return }
        do {
            try StoreProbe.probe(url, executable: StoreProbe.currentExecutable, arguments: ["probe", path])
        } catch let error as SplitError {
            throw fail(step, error.reason)
        }
    }
}

// MARK: - probe (hidden)

/// `storeinspect probe STORE`: reads every row of the store; the child process of `StoreInspectCommand.probe`.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Read every row of a store (used by the other subcommands, in a child process).",
        shouldDisplay: false)

    @Argument(help: "An SQLite store file or an LMDB store directory.")
    var store: String

    func run() throws {
        do {
            _ = try StoreProbe.readEverything(at: URL(fileURLWithPath: store))
        } catch let error as SplitError {
            throw StoreInspectCommand.fail("probe", error.reason)
        } catch {
            throw StoreInspectCommand.fail("probe", "\(error)")
        }
    }
}

// MARK: - inspect

/// `storeinspect [inspect] STORE [--model MODEL] [--json]`.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect", abstract: "Print a store's type, metadata and per-entity row counts (the default).")

    @Argument(help: "An SQLite store file, an LMDB store directory, or a postgres:// URL (PostgreSQL trait).")
    var store: String?

    @Option(help: "Read the store with this model instead of its model cache.")
    var model: String?

    @Flag(help: "Print JSON on stdout.")
    var json = false

    func run() throws {
        guard let store else { throw StoreInspectCommand.fail("arguments", "no STORE given (storeinspect STORE, or storeinspect --help)", code: 64) }
        let model = try self.model.map { try StoreInspectCommand.loadModel($0, step: "inspect") }
        try StoreInspectCommand.probe(store, step: "inspect")
        let url = try StoreInspectCommand.storeURL(store, step: "inspect")
        let inspection: StoreInspection
        do {
            inspection = try StoreInspection.inspect(url, model: model)
        } catch let error as SplitError {
            throw StoreInspectCommand.fail("inspect", error.reason)
        } catch {
            throw StoreInspectCommand.fail("inspect", "\(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            StoreInspectCommand.write(String(decoding: try encoder.encode(inspection), as: UTF8.self) + "\n")
            return
        }
        var out = "store: \(inspection.path)\ntype: \(inspection.type.rawValue) (NSStoreType \(inspection.storeType))\n"
        out += "uuid: \(inspection.uuid)\nmodel: \(inspection.model), configuration \(inspection.configuration)\n"
        if !inspection.versionIdentifiers.isEmpty {
            out += "version identifiers: \(inspection.versionIdentifiers.joined(separator: ", "))\n"
        }
        out += "metadata:\n"
        for key in inspection.additionalMetadata.keys.sorted() { out += "  \(key) = \(inspection.additionalMetadata[key]!)\n" }
        let total = inspection.entities.reduce(0) { $0 + $1.rows }
        out += "entities (\(total) rows):\n"
        let width = inspection.entities.map(\.entity.count).max() ?? 0
        for e in inspection.entities {
            out += "  " + e.entity.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(e.rows)"
            var notes: [String] = []
            if e.isAbstract { notes.append("abstract") }
            if e.rowsIncludingSubentities != e.rows || e.isAbstract { notes.append("\(e.rowsIncludingSubentities) with subentities") }
            out += (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")") + "\n"
        }
        if inspection.externalDataFiles > 0 {
            out += "external data: \(inspection.externalDataFiles) files in the support folder (_EXTERNAL_DATA)\n"
        }
        if let history = inspection.history {
            let dates = [history.oldestDate, history.newestDate].compactMap { $0 }.map { ISO8601DateFormatter().string(from: $0) }
            out += "persistent history: \(history.transactions) transactions kept"
                + (history.oldest.map { " (\($0)...\(history.last))" } ?? " (last number \(history.last))")
                + ", \(history.changes) changes" + (dates.isEmpty ? "" : ", recorded \(dates.first!) to \(dates.last!)") + "\n"
        }
        if !inspection.skipped.isEmpty {
            out += "outside the model:\n"
            for s in inspection.skipped { out += "  \(s.kind) \(s.name)" + (s.rows.map { " (\($0) rows)" } ?? "") + "\n" }
        }
        StoreInspectCommand.write(out)
    }
}

// MARK: - model

/// `storeinspect model STORE`: the model in the store's cache as `.xcdatamodel` XML.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model", abstract: "Print the model recovered from a store's model cache as .xcdatamodel XML.")

    @Argument(help: "An SQLite store file, an LMDB store directory, or a postgres:// URL (PostgreSQL trait).")
    var store: String

    func run() throws {
        try StoreInspectCommand.probe(store, step: "read model cache")
        let url = try StoreInspectCommand.storeURL(store, step: "read model cache")
        let model: ObjectModel?
        do {
            model = try StoreInspection.storedModel(url)
        } catch let error as SplitError {
            throw StoreInspectCommand.fail("read model cache", error.reason)
        } catch {
            throw StoreInspectCommand.fail("read model cache", "\(error)")
        }
        guard let model else { throw StoreInspectCommand.fail("read model cache", "\(store): the store has no model cache") }
        StoreInspectCommand.write(ModelWriter.xml(for: model))
    }
}

// MARK: - graph

/// `storeinspect graph MODEL`: Graphviz dot of entities, configurations, relationships, fetched properties.
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print a Graphviz picture of a model: entities clustered by configuration, relationships, "
            + "fetched properties (dashed; red when they cross stores). Render with: dot -Tsvg")

    @Argument(help: "A .xcdatamodeld or .xcdatamodel.")
    var model: String

    func run() throws {
        let model = try StoreInspectCommand.loadModel(model, step: "graph")
        StoreInspectCommand.write(ModelGraph.dot(model))
    }
}

import ArgumentParser
import Foundation
import Switchyard
import ToolSupport

/// `storefile`: move, copy (back up), convert, replace or destroy a store with all its files, as the
/// coordinator's `moveStore`, `copyStore`, `convertStore`, `replaceStore` and `destroyStore` do.
@main
struct StoreFileCommand: ParsableCommand {
    /// Argument errors read `storefile: arguments failed: <reason>` (exit 64), as every other failure does.
    static func main() { mainReportingArgumentErrors(tool: "storefile") }

    static let configuration = CommandConfiguration(
        commandName: "storefile",
        abstract: "Move, copy, convert, replace or destroy a Switchyard or Core Data store with all its files.",
        discussion: """
            Every operation is atomic: a kill leaves the old store or the complete new one, never a partial store \
            under the final name. A store that already exists at a destination is never overwritten.
            Exit codes: 0 success; 2 failure; 64 bad arguments.
            """,
        version: SwitchyardInfo.version,
        subcommands: [MoveCommand.self, CopyCommand.self, ConvertCommand.self, ReplaceCommand.self, DestroyCommand.self])

    func run() throws {
        FileHandle.standardError.write(Data("storefile: arguments failed: no subcommand given (move, copy, convert, replace or destroy; see --help)\n".utf8))
        throw ExitCode(64)
    }

    /// Prints `storefile: <step> failed: <reason>` and returns the exit code to throw.
    static func fail(_ step: String, _ error: any Error) -> ExitCode {
        let reason = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        FileHandle.standardError.write(Data("storefile: \(step) failed: \(reason)\n".utf8))
        return ExitCode(2)
    }
}

/// The options every subcommand shares: the store, its model and configuration, JSON output.
struct StoreOptionsGroup: ParsableArguments {
    @Argument(help: "The store: an SQLite file or an LMDB directory.")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld or .xcdatamodel); default: the store's model cache.")
    var model: String?

    @Option(name: .long, help: "The store's configuration; default: the one its entities belong to.")
    var configuration: String?

    @Flag(help: "Print the result as JSON on stdout.")
    var json = false

    func validate() throws {
        guard StoreSplitter.storeType(at: URL(fileURLWithPath: store)) != nil else {
            throw ValidationError("no store at \(store)")
        }
    }

    /// A coordinator holding the store, opened read-only when `readOnly`.
    func open(readOnly: Bool) throws -> (StoreCoordinator, any PersistentStore) {
        let url = URL(fileURLWithPath: store)
        do {
            let loaded: ObjectModel
            if let model {
                loaded = try ModelLoader.load(at: URL(fileURLWithPath: model))
            } else if let cached = try StoreInspection.storedModel(url) {
                loaded = cached
            } else {
                throw ValidationError("\(store) has no model cache; pass --model")
            }
            // The read-only look that finds type and configuration is closed before the store opens for real
            // (an LMDB environment open read-only in this process would refuse a writer).
            let (type, found) = try { () throws -> (StoreType, String) in
                let (probe, _) = try StoreSplitter.openReadOnly(url, model: loaded)
                return (probe.type, probe.configurationName)
            }()
            let name = configuration ?? found
            let coordinator = StoreCoordinator(model: loaded)
            let opened = try coordinator.addStore(type, configuration: name, at: url, options: StoreOptions(readOnly: readOnly))
            return (coordinator, opened)
        } catch {
            throw StoreFileCommand.fail("open \(store)", error)
        }
    }

    /// Opens the store, runs `body` (the operation, returning its text and JSON fields) and prints the result;
    /// an error prints `storefile: <step> failed: <reason>` and exits 2.
    func perform(
        _ step: String, readOnly: Bool, _ body: (StoreCoordinator, any PersistentStore) throws -> (text: String, fields: [String: String])
    ) throws {
        let (coordinator, store) = try open(readOnly: readOnly)
        do {
            let (text, fields) = try body(coordinator, store)
            report(text, fields.merging(["operation": step]) { a, _ in a })
        } catch {
            throw StoreFileCommand.fail(step, error)
        }
    }

    /// Prints `text`, or `fields` as one JSON object.
    func report(_ text: String, _ fields: [String: String]) {
        if json {
            let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .prettyPrinted])) ?? Data()
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }
}

/// Checks that `destination` names no existing file or directory.
func validateFree(_ destination: String) throws {
    if FileManager.default.fileExists(atPath: destination) {
        throw ValidationError("\(destination) already exists; storefile never overwrites a store")
    }
}

// MARK: - move

struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move", abstract: "Move a store with its -wal/-shm, support folder (external data) or LMDB files.")

    @OptionGroup var options: StoreOptionsGroup
    @Argument(help: "The new path of the store.")
    var destination: String

    func validate() throws { try validateFree(destination) }

    func run() throws {
        try options.perform("move", readOnly: false) { coordinator, store in
            let started = Date()
            let moved = try coordinator.moveStore(store, to: URL(fileURLWithPath: destination))
            return ("moved \(options.store) to \(destination) in \(String(format: "%.2f", Date().timeIntervalSince(started))) s",
                    ["from": options.store, "to": destination, "uuid": moved.identifier.uuidString])
        }
    }
}

// MARK: - copy

struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy", abstract: "Copy (back up) a store consistently, even while other processes write to it.")

    @OptionGroup var options: StoreOptionsGroup
    @Argument(help: "Where the copy goes (same backend).")
    var destination: String
    @Flag(help: "Compact the copy (SQLite VACUUM, LMDB MDB_CP_COMPACT).")
    var compact = false

    func validate() throws { try validateFree(destination) }

    func run() throws {
        try options.perform("copy", readOnly: true) { coordinator, store in
            let started = Date()
            try coordinator.copyStore(store, to: URL(fileURLWithPath: destination), compact: compact)
            return ("copied \(options.store) to \(destination)\(compact ? " (compacted)" : "") in \(String(format: "%.2f", Date().timeIntervalSince(started))) s",
                    ["from": options.store, "to": destination, "compact": "\(compact)"])
        }
    }
}

// MARK: - convert

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert", abstract: "Write a store's contents as a store of the other backend (SQLite <-> LMDB).")

    @OptionGroup var options: StoreOptionsGroup
    @Argument(help: "The new store; its backend follows the extension (.sqlite, .lmdb) unless --to is given.")
    var destination: String
    @Option(name: .long, help: "The new store's backend: sqlite or lmdb.")
    var to: String?
    @Flag(name: .customLong("no-verify"), help: "Skip the content checksums of source and output.")
    var noVerify = false

    var targetType: StoreType? {
        switch to ?? URL(fileURLWithPath: destination).pathExtension.lowercased() {
        case "sqlite": return .sqlite
        case "lmdb": return .lmdb
        default: return nil
        }
    }

    func validate() throws {
        try validateFree(destination)
        guard targetType != nil else { throw ValidationError("say which backend to write: --to sqlite|lmdb (or end the path in .sqlite or .lmdb)") }
    }

    func run() throws {
        let bar = ProgressBar.onTerminal()
        defer { bar?.finish() }
        try options.perform("convert", readOnly: true) { coordinator, store in
            let report = try coordinator.convertStore(
                store, to: URL(fileURLWithPath: destination), type: targetType!, verify: !noVerify, progress: { bar?.update($0) })
            bar?.finish()
            return ("converted \(options.store) (\(store.type.rawValue)) to \(destination) (\(targetType!.rawValue)): \(report.rowsCopied) rows in "
                        + String(format: "%.2f", report.seconds) + " s" + (report.contentVerified ? "; verified: row counts, content and link checksums match" : ""),
                    ["from": options.store, "to": destination, "type": targetType!.rawValue,
                     "rows": "\(report.rowsCopied)", "verified": "\(report.contentVerified)", "uuid": store.identifier.uuidString])
        }
    }
}

// MARK: - replace

struct ReplaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replace", abstract: "Replace a store's contents with another store's (converted if its backend differs).")

    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The store whose contents take the place of STORE's (never written).")
    var with: String

    func validate() throws {
        guard StoreSplitter.storeType(at: URL(fileURLWithPath: with)) != nil else { throw ValidationError("no store at \(with)") }
    }

    func run() throws {
        try options.perform("replace", readOnly: false) { coordinator, store in
            let replaced = try coordinator.replaceStore(store, withContentsOf: URL(fileURLWithPath: with))
            return ("replaced the contents of \(options.store) with \(with)",
                    ["store": options.store, "with": with, "uuid": replaced.identifier.uuidString])
        }
    }
}

// MARK: - destroy

struct DestroyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "destroy", abstract: "Delete a store with every file it has (sidecars, support folder, LMDB directory).")

    @OptionGroup var options: StoreOptionsGroup
    @Flag(help: "Confirm the deletion (required).")
    var yes = false

    func validate() throws {
        guard yes else { throw ValidationError("destroy deletes the store and its files: add --yes to confirm") }
    }

    func run() throws {
        try options.perform("destroy", readOnly: false) { coordinator, store in
            try coordinator.destroyStore(store)
            return ("destroyed \(options.store)", ["store": options.store])
        }
    }
}

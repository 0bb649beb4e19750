import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SwitchyardModel
import SwitchyardStores

// MARK: - StoreProbe

/// Reads a store in a child process before a tool reads it, so damage that liblmdb cannot survive (an `abort`
/// on a page of the wrong kind, `SIGBUS` past the end of the map — what the page walk cannot see, such as bytes
/// inside keys and values) ends the child and becomes an error, never a crash of the tool.
///
/// `storeinspect` and `storesplit` run themselves as the child (a hidden `probe` mode that calls
/// `readEverything(at:)`) and call `probe(_:executable:arguments:)` before they read an LMDB store:
/// ```swift
/// try StoreProbe.probe(url, executable: URL(fileURLWithPath: CommandLine.arguments[0]), arguments: ["probe", url.path])
/// ```
package enum StoreProbe {
    /// The running program's executable, to start it again as the probe child.
    public static var currentExecutable: URL {
        #if os(Linux)
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
    }

    /// Whether tools should probe the store at `url` in a child first: LMDB stores (SQLite reports damage as
    /// `SQLITE_CORRUPT` and never takes the process down).
    public static func needsProbe(_ url: URL) -> Bool {
        StoreSplitter.storeType(at: url) == .lmdb
    }

    /// Opens the store read-only (with the model in its cache) and reads every row of every entity it holds,
    /// a batch at a time, and every member of its to-many relationships: what the child does. Returns the
    /// number of rows read.
    public static func readEverything(at url: URL) throws -> Int {
        let (store, _) = try StoreSplitter.openReadOnly(url, model: nil, fallback: try ObjectModel(entities: []))
        var rows = 0
        for entity in store.entities where !entity.isAbstract {
            var after: Int64?
            while true {
                let batch: [StoreRow]
                if let bulk = store as? BulkCopyStore {
                    batch = try bulk.rowBatch(entityName: entity.name, after: after, limit: 2_000)
                } else {
                    batch = try store.fetch(StoreFetchRequest(entityName: entity.name, includesSubentities: false))
                }
                rows += batch.count
                for relationship in entity.allRelationships where relationship.isToMany && !relationship.isTransient && !batch.isEmpty {
                    _ = try store.relatedReferences(of: batch.map(\.reference), relationship: relationship.name)
                }
                guard store is BulkCopyStore, let last = batch.last else { break }
                after = last.primaryKey
            }
        }
        return rows
    }

    /// Runs `executable` with `arguments` (the calling tool in its probe mode, which calls `readEverything`)
    /// and waits. A child killed by a signal means the store is damaged where only reading it shows:
    /// `SplitError.source` names the store and the signal. A child that exits non-zero reports its own error
    /// (its last line of standard error).
    public static func probe(_ url: URL, executable: URL, arguments: [String]) throws {
        let child = Process()
        child.executableURL = executable.resolvingSymlinksInPath()
        child.arguments = arguments
        let errors = Pipe()
        child.standardOutput = FileHandle.nullDevice
        child.standardError = errors
        var environment = ProcessInfo.processInfo.environment
        // A crash is the expected way for a damaged store to end the child: no backtrace on the terminal.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        child.environment = environment
        do {
            try child.run()
        } catch {
            throw SplitError.source(path: url.path, reason: "cannot start the probe process \(executable.path): \(error)")
        }
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        switch child.terminationReason {
        case .uncaughtSignal:
            let signal = child.terminationStatus
            let name = String(cString: strsignal(signal))
            throw SplitError.source(
                path: url.path,
                reason: "the store is damaged: reading it killed the probe process with signal \(signal) (\(name)); "
                    + "the store was not read in this process")
        case .exit where child.terminationStatus != 0:
            var message = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "no message"
            // The child says `tool: <step> failed: <path>: <reason>`: only the reason is new here.
            if message.hasPrefix("storeinspect: ") || message.hasPrefix("storesplit: "), let failed = message.range(of: " failed: ") {
                message = String(message[failed.upperBound...])
            }
            while message.hasPrefix(url.path + ": ") { message.removeFirst(url.path.count + 2) }
            if message.hasPrefix(url.path + " (configuration "), let close = message.range(of: "): ") {
                message = String(message[close.upperBound...])
            }
            throw SplitError.source(path: url.path, reason: "reading every row failed: \(message)")
        default:
            return
        }
    }
}

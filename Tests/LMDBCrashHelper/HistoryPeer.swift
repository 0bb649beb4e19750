import Foundation
import Switchyard
import SwitchyardPostgreSQL

// lmdb-crash-helper history-peer sqlite|lmdb|postgresql STORE (a file, or a postgres:// URL)
//
// The second process of HistoryTwoProcessTests: opens STORE (the `HistoryPeerModel`, persistent history on),
// watches its history for transactions by other authors, and saves on request. Protocol, one line each:
//   out "ready <n>"                    the store is open; n is the last transaction number
//   in  "save <label>"                 inserts a Note with `label`, author "peer"
//   out "saved <n> <time>"             transaction n committed; time = seconds since 1970 after save returned
//   out "seen <n> <author> <time> <labels>"  a transaction by another author arrived (labels comma-separated)
//   in  "quit"                         exits 0
// Errors go to standard error, with exit status 1.

/// The model both processes use.
enum HistoryPeerModel {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "Note", attributes: [AttributeDescription(name: "label", type: .string, isOptional: false)]),
        ])
    }
}

/// Runs the `history-peer` mode when the arguments ask for it; returns otherwise.
func runHistoryPeerModeIfAsked() {
    let arguments = CommandLine.arguments
    guard arguments.count == 4, arguments[1] == "history-peer" else { return }
    let lock = NSLock()
    func emit(_ line: String) {
        lock.withLock { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }
    do {
        let coordinator = StoreCoordinator(model: try HistoryPeerModel.model())
        let options = StoreOptions(persistentHistory: true)
        if arguments[2] == "postgresql" {
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: URL(string: arguments[3])!, options: options)
        } else {
            let type: StoreType = arguments[2] == "sqlite" ? .sqlite : .lmdb
            try coordinator.addStore(type, configuration: "Default", at: URL(fileURLWithPath: arguments[3]), options: options)
        }
        let start = try coordinator.currentHistoryToken(for: "Default")
        // The watcher: a reading context of its own merges what others wrote and reports the labels it now sees.
        Task.detached {
            do {
                let context = ObjectContext(coordinator: coordinator)
                for try await transaction in coordinator.historyTransactions(after: start, in: "Default") where transaction.author != "peer" {
                    let received = Date().timeIntervalSince1970
                    try context.mergeChanges(fromHistory: [transaction])
                    let labels = try transaction.changes.map { try context.existingObject(with: $0.objectID).get("label", as: String.self) ?? "?" }
                    emit("seen \(transaction.token.transactionNumber) \(transaction.author ?? "-") \(received) \(labels.joined(separator: ","))")
                }
            } catch {
                FileHandle.standardError.write(Data("history-peer: watch failed: \(error)\n".utf8))
                exit(1)
            }
        }
        let context = ObjectContext(coordinator: coordinator)
        context.transactionAuthor = "peer"
        emit("ready \(start.transactionNumber)")
        while let line = readLine() {
            if line == "quit" { exit(0) }
            guard line.hasPrefix("save ") else { continue }
            let note = try context.insert("Note")
            try note.set("label", String(line.dropFirst(5)))
            try context.save()
            let saved = Date().timeIntervalSince1970
            emit("saved \(try coordinator.currentHistoryToken(for: "Default").transactionNumber) \(saved)")
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("history-peer: \(error)\n".utf8))
        exit(1)
    }
}

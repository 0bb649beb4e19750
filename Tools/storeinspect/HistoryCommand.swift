import ArgumentParser
import Foundation
import Switchyard

/// `storeinspect history STORE [--after N] [--limit N] [--changes] [--model MODEL] [--json]`: the persistent
/// history a store keeps (Core Data's `ATRANSACTION` / `ACHANGE` on SQLite, the `history` database on LMDB),
/// read-only.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the persistent-history transactions a store keeps: number, time, author, context, process, changes.")

    @Argument(help: "An SQLite store file or an LMDB store directory.")
    var store: String

    // `.unconditional`: a negative number is this option's value (refused by `validate()`), not another flag.
    @Option(parsing: .unconditional, help: "Only transactions after this number.")
    var after: Int64?

    @Option(parsing: .unconditional, help: "At most this many transactions.")
    var limit: Int?

    @Flag(help: "List every change (kind, entity, primary key, updated keys), not only their counts.")
    var changes = false

    @Option(help: "Read the store with this model instead of its model cache.")
    var model: String?

    @Flag(help: "Print JSON on stdout.")
    var json = false

    func validate() throws {
        if let after, after < 0 { throw ValidationError("--after must be 0 or more (got \(after))") }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more (got \(limit))") }
    }

    func run() throws {
        let model = try self.model.map { try StoreInspectCommand.loadModel($0, step: "history") }
        try StoreInspectCommand.probe(store, step: "history")
        let url = URL(fileURLWithPath: store)
        let transactions: [HistoryTransaction]
        do {
            let inspection = try StoreInspection.inspect(url, model: model)
            guard let storeModel = try model ?? StoreInspection.storedModel(url) else {
                throw StoreInspectCommand.fail("history", "\(store): the store has no model cache; pass --model")
            }
            let coordinator = StoreCoordinator(model: storeModel)
            let opened = try coordinator.addStore(inspection.type, configuration: inspection.configuration, at: url, options: .readOnly)
            let token = after.map { HistoryToken(storeIdentifier: opened.identifier, transactionNumber: $0) }
            transactions = try coordinator.history(after: token, in: inspection.configuration, limit: limit)
        } catch let error as ExitCode {
            throw error
        } catch let error as SplitError {
            throw StoreInspectCommand.fail("history", error.reason)
        } catch StoreError.historyTokenAhead(_, _, let after, let last) {
            // The library's wording is for a kept token (the store was restored or replaced since); here the
            // number came from the command line.
            throw StoreInspectCommand.fail("history", "\(store): --after \(after) is past the store's last transaction (\(last))")
        } catch {
            throw StoreInspectCommand.fail("history", error.localizedDescription)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            StoreInspectCommand.write(String(decoding: try encoder.encode(transactions.map(Entry.init)), as: UTF8.self) + "\n")
            return
        }
        var out = ""
        let dates = ISO8601DateFormatter()
        for transaction in transactions {
            let kinds = Dictionary(grouping: transaction.changes, by: \.kind).mapValues(\.count)
            let counts = [HistoryChangeKind.insert, .update, .delete].compactMap { kind in kinds[kind].map { "\($0) \(kind)s" } }
            let fields = [
                transaction.author.map { "author \($0)" }, transaction.contextName.map { "context \($0)" },
                transaction.processID.map { "process \($0)" }, transaction.bundleID.map { "bundle \($0)" },
            ].compactMap { $0 }
            out += "#\(transaction.token.transactionNumber) \(dates.string(from: transaction.timestamp))"
                + (fields.isEmpty ? "" : " " + fields.joined(separator: ", "))
                + ": \(transaction.changes.count) changes" + (counts.isEmpty ? "" : " (" + counts.joined(separator: ", ") + ")") + "\n"
            if changes {
                for change in transaction.changes {
                    out += "  \(change.kind) \(change.objectID.entityName)/p\(change.objectID.primaryKey ?? -1)"
                        + (change.updatedKeys.isEmpty ? "" : " " + change.updatedKeys.sorted().joined(separator: ", ")) + "\n"
                }
            }
        }
        if transactions.isEmpty { out = "no transactions\n" }
        StoreInspectCommand.write(out)
    }

    /// One transaction as `--json` prints it.
    struct Entry: Encodable {
        var number: Int64
        var timestamp: Date
        var author: String?
        var contextName: String?
        var processID: String?
        var bundleID: String?
        var changes: [Change]

        struct Change: Encodable {
            var kind: String
            var entity: String
            var primaryKey: Int64
            var updatedKeys: [String]
        }

        init(_ transaction: HistoryTransaction) {
            number = transaction.token.transactionNumber
            timestamp = transaction.timestamp
            author = transaction.author
            contextName = transaction.contextName
            processID = transaction.processID
            bundleID = transaction.bundleID
            changes = transaction.changes.map {
                Change(kind: $0.kind.description, entity: $0.objectID.entityName, primaryKey: $0.objectID.primaryKey ?? -1, updatedKeys: $0.updatedKeys.sorted())
            }
        }
    }
}

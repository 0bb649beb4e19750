import Foundation
import Switchyard
import SwitchyardPostgreSQL

/// Several processes on one PostgreSQL store: the worker each process runs, and the parent that starts them and
/// checks that no object was lost or duplicated. Used by the tests (`PostgreSQLMultiProcessTests`, through
/// `lmdb-crash-helper pg-worker`) and by `bench --postgres-load N` (the bench binary runs itself).
public enum PostgresLoad {
    /// `LoadItem`: which worker wrote it, its sequence number in that worker (indexed), a label.
    public static func model() throws -> ObjectModel {
        try ObjectModel(entities: [
            EntityDescription(name: "LoadItem", attributes: [
                AttributeDescription(name: "worker", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "seq", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "label", type: .string),
            ]),
        ])
    }

    /// What the parent found once every worker finished.
    public struct Report: Sendable, CustomStringConvertible {
        public var processes: Int
        public var objectsPerProcess: Int
        public var seconds: Double
        public var rows: Int
        public var distinctPairs: Int
        public var distinctKeys: Int
        public var reads: Int
        public var failures: [String]

        public var lost: Int { processes * objectsPerProcess - distinctPairs }
        public var duplicated: Int { rows - distinctPairs + (rows - distinctKeys) }
        public var objectsPerSecond: Double { Double(rows) / seconds }

        public var description: String {
            "\(processes) processes x \(objectsPerProcess) objects (saves of 10, each followed by two counts): "
                + "\(rows) rows in \(String(format: "%.2f", seconds)) s, \(Int(objectsPerSecond)) objects/s, "
                + "\(reads) reads; lost \(lost), duplicated \(duplicated)"
                + (failures.isEmpty ? "" : "; failures: \(failures.joined(separator: "; "))")
        }
    }

    /// One worker: inserts `count` objects in saves of 10 through an `ObjectContext`, and after each save counts
    /// its own objects (which must equal what it saved: read-your-writes) and another worker's. Prints
    /// `done <reads>` or `error <message>`.
    public static func worker(url: URL, id: Int, count: Int, workers: Int) {
        do {
            let coordinator = StoreCoordinator(model: try model())
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
            let context = ObjectContext(coordinator: coordinator)
            var reads = 0
            var saved = 0
            while saved < count {
                for seq in saved..<min(saved + 10, count) {
                    let item = try context.insert("LoadItem")
                    try item.set("worker", Int64(id))
                    try item.set("seq", Int64(seq))
                    try item.set("label", "w\(id)-\(seq)")
                }
                try context.save()
                saved = min(saved + 10, count)
                let own = try context.count(FetchRequest(entityName: "LoadItem", predicate: try FetchPredicate(format: "worker == %@", Int64(id))))
                guard own == saved else { throw PostgresLoadError(message: "worker \(id) saved \(saved) objects but counts \(own)") }
                _ = try context.count(FetchRequest(entityName: "LoadItem", predicate: try FetchPredicate(format: "worker == %@", Int64((id + 1) % workers))))
                reads += 2
            }
            say("done \(reads)")
        } catch {
            say("error \(error)")
        }
    }

    /// Starts `processes` workers (`executable` with `arguments` followed by the URL, worker id, count and number
    /// of workers), waits for them, and checks the store: every (worker, seq) once, every primary key once.
    public static func run(
        url: URL, processes: Int, count: Int, executable: URL, arguments: [String]
    ) throws -> Report {
        let start = Date()
        var children: [(Process, Pipe)] = []
        for id in 0..<processes {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments + [url.absoluteString, String(id), String(count), String(processes)]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            children.append((process, output))
        }
        var reads = 0
        var failures: [String] = []
        for (id, (process, output)) in children.enumerated() {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let last = text.split(separator: "\n").last.map(String.init) ?? ""
            if last.hasPrefix("done "), let n = Int(last.dropFirst(5)), process.terminationStatus == 0 {
                reads += n
            } else {
                failures.append("worker \(id) (exit \(process.terminationStatus)): \(text.suffix(500))")
            }
        }
        let seconds = Date().timeIntervalSince(start)
        let coordinator = StoreCoordinator(model: try model())
        let store = try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
        let rows = try store.fetch(StoreFetchRequest(entityName: "LoadItem"))
        let pairs = Set(rows.map { "\($0["worker"])/\($0["seq"])" })
        let keys = Set(rows.map(\.primaryKey))
        return Report(
            processes: processes, objectsPerProcess: count, seconds: seconds, rows: rows.count, distinctPairs: pairs.count,
            distinctKeys: keys.count, reads: reads, failures: failures)
    }

    /// The conflict worker: reads the `LoadItem` with `seq` 0, prints `ready`, waits for a line on standard
    /// input, sets its label to `label` and saves; prints `saved` or `conflict` (Core Data's optimistic locking
    /// failure), or `error <message>`.
    public static func conflictWorker(url: URL, label: String) {
        do {
            let coordinator = StoreCoordinator(model: try model())
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
            let context = ObjectContext(coordinator: coordinator)
            guard let item = try context.fetch(FetchRequest(entityName: "LoadItem", predicate: try FetchPredicate(format: "seq == 0"))).first else {
                say("error no item")
                return
            }
            _ = try item.get("label", as: String.self)
            say("ready")
            _ = readLine()
            try item.set("label", label)
            do {
                try context.save()
                say("saved")
            } catch let error as StoreError {
                guard case .conflict = error else { throw error }
                say("conflict")
            }
        } catch {
            say("error \(error)")
        }
    }
}

/// A line on standard output, written at once (a pipe would otherwise hold it in a buffer).
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct PostgresLoadError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

import Foundation
import Switchyard

// MARK: - Store file operations under SIGKILL

extension CrashHarness {
    /// The store operations the harness kills: `StoreCoordinator.copyStore` (compacting), `convertStore`,
    /// `moveStore` and `replaceStore`, each on the split source (`dir/source.<backend>`, external data files
    /// included on SQLite).
    static let fileCases: Set<String> = ["copy", "convert", "move", "replace"]

    /// Every 1000th Alpha carries a 110 KB blob: a file in the support folder on SQLite.
    static func alphaValues(_ key: Int64, prefix: String) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = ["name": .string("\(prefix) \(key)"), "n": .integer(key)]
        if key % 1000 == 0 { values["blob"] = .binary(blob(key)) }
        return values
    }

    static func blob(_ key: Int64) -> Data { Data(repeating: UInt8(key % 251), count: 110_000) }

    static func type(_ backend: String) -> StoreType { backend == "sqlite" ? .sqlite : .lmdb }
    static func other(_ backend: String) -> String { backend == "sqlite" ? "lmdb" : "sqlite" }

    static func prepareFileOperation(_ mode: String, _ dir: URL, backend: String) throws {
        try makeSplitSource(dir, backend: backend)
        switch mode {
        case "move":
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("moved"), withIntermediateDirectories: true)
        case "replace":
            // The replacement: half as many Alphas, named "other".
            let store = try open(dir.appendingPathComponent("other.\(backend)"), backend: backend, model: try splitSourceModel())
            let keys = try store.allocatePrimaryKeys(for: "Alpha", count: splitRows / 2)
            try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Alpha", primaryKey: $0, values: alphaValues($0, prefix: "other")) }))
        default:
            break
        }
    }

    /// The child: opens the source through a coordinator and runs the operation.
    static func fileOperationChild(_ mode: String, _ dir: URL, backend: String) throws {
        let coordinator = StoreCoordinator(model: try splitSourceModel())
        let store = try coordinator.addStore(type(backend), configuration: "Default", at: dir.appendingPathComponent("source.\(backend)"))
        switch mode {
        case "copy": try coordinator.copyStore(store, to: dir.appendingPathComponent("copy.\(backend)"), compact: true)
        case "convert":
            try coordinator.convertStore(store, to: dir.appendingPathComponent("converted.\(other(backend))"), type: type(other(backend)))
        case "move": try coordinator.moveStore(store, to: dir.appendingPathComponent("moved/source.\(backend)"))
        default: try coordinator.replaceStore(store, withContentsOf: dir.appendingPathComponent("other.\(backend)"))
        }
    }

    /// After a kill: no partial store under a final name, the source (or, for a move, the store at exactly one
    /// of its places) whole, and the operation, run again where it had not finished, completes.
    static func checkFileOperation(_ mode: String, _ dir: URL, backend: String) throws {
        let source = dir.appendingPathComponent("source.\(backend)")
        switch mode {
        case "copy", "convert":
            let kind = mode == "copy" ? backend : other(backend)
            let output = dir.appendingPathComponent("\(mode == "copy" ? "copy" : "converted").\(kind)")
            let identifier = try checkWhole(source, backend: backend, prefix: "alpha", rows: splitRows)
            if FileManager.default.fileExists(atPath: output.path) {
                let copied = try checkWhole(output, backend: kind, prefix: "alpha", rows: splitRows)
                guard copied == identifier else { throw Failure(description: "\(mode): the output has UUID \(copied), the source \(identifier)") }
            } else {
                try fileOperationChild(mode, dir, backend: backend)
                _ = try checkWhole(output, backend: kind, prefix: "alpha", rows: splitRows)
            }
        case "move":
            let moved = dir.appendingPathComponent("moved/source.\(backend)")
            let atOld = FileManager.default.fileExists(atPath: source.path), atNew = FileManager.default.fileExists(atPath: moved.path)
            guard atOld != atNew else { throw Failure(description: "move: the store is at \(atOld ? "both places" : "neither place")") }
            if atOld {
                _ = try checkWhole(source, backend: backend, prefix: "alpha", rows: splitRows)
                try fileOperationChild(mode, dir, backend: backend)
            }
            _ = try checkWhole(moved, backend: backend, prefix: "alpha", rows: splitRows)
        default:
            let alphas = try open(source, backend: backend, model: try splitSourceModel(), readOnly: true)
                .count(StoreFetchRequest(entityName: "Alpha"))
            if alphas == splitRows {
                _ = try checkWhole(source, backend: backend, prefix: "alpha", rows: splitRows)
                try fileOperationChild(mode, dir, backend: backend)
            }
            _ = try checkWhole(source, backend: backend, prefix: "other", rows: splitRows / 2)
        }
    }

    /// Opens the store read-only and read-write and checks its Alphas (names, blobs) and count; returns its UUID.
    @discardableResult
    static func checkWhole(_ url: URL, backend: String, prefix: String, rows: Int) throws -> UUID {
        for readOnly in [true, false] {
            let store = try open(url, backend: backend, model: try splitSourceModel(), readOnly: readOnly)
            let alphas = try store.fetch(StoreFetchRequest(entityName: "Alpha"))
            guard alphas.count == rows else { throw Failure(description: "\(url.lastPathComponent): \(alphas.count) Alphas, want \(rows)") }
            for row in alphas {
                guard row["name"] == .string("\(prefix) \(row.primaryKey)") else {
                    throw Failure(description: "\(url.lastPathComponent): Alpha \(row.primaryKey) is \(row["name"]), want \(prefix)")
                }
                let want: AttributeValue = row.primaryKey % 1000 == 0 ? .binary(blob(row.primaryKey)) : .null
                guard row["blob"] == want else { throw Failure(description: "\(url.lastPathComponent): Alpha \(row.primaryKey) has the wrong blob") }
            }
            if readOnly { continue }
            return store.identifier
        }
        return UUID()
    }
}

import Foundation
import Switchyard
import Testing

/// `StoreCoordinator.loadStores` from the user's side (public API only): every store of a call is attempted
/// and reported, whatever the order (Core Data calls `loadPersistentStores`' completion handler once per
/// description), and cancelling the calling task leaves each store untouched or fully migrated.
@Suite struct LoadStoresTests {
    let dir = TemporaryDirectory()

    /// Four configurations, one entity each. Version 2 changes `Pending.note` from optional to required with
    /// a default (migrated in place, a batch at a time) and `Old.label` from String to Integer 64 (cannot be
    /// migrated); `Good` and `Broken` are the same in both.
    static func model(version: Int) throws -> ObjectModel {
        let note = version == 1
            ? AttributeDescription(name: "note", type: .string)
            : AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: "-")
        return try ObjectModel(
            entities: [
                EntityDescription(name: "Good", attributes: [AttributeDescription(name: "name", type: .string)]),
                EntityDescription(name: "Pending", attributes: [AttributeDescription(name: "n", type: .integer64), note]),
                EntityDescription(name: "Junk", attributes: [AttributeDescription(name: "x", type: .string)]),
                EntityDescription(name: "Old", attributes: [AttributeDescription(name: "label", type: version == 1 ? .string : .integer64)]),
            ],
            configurations: [
                ConfigurationDescription(name: "Good", entityNames: ["Good"]),
                ConfigurationDescription(name: "Pending", entityNames: ["Pending"]),
                ConfigurationDescription(name: "Broken", entityNames: ["Junk"]),
                ConfigurationDescription(name: "Old", entityNames: ["Old"]),
            ])
    }

    static func fileName(_ configuration: String, _ backend: Backend) -> String {
        "\(configuration).\(backend == .lmdb ? "lmdb" : "sqlite")"
    }

    /// Writes version-1 stores of `configurations` into `folder` (through a coordinator and a context), with
    /// `pending` rows of Pending, every other one without a note.
    static func populate(_ backend: Backend, in folder: URL, configurations: [String], pending: Int = 10) throws {
        let coordinator = StoreCoordinator(model: try model(version: 1))
        for configuration in configurations {
            try coordinator.addStore(
                backend.storeType, configuration: configuration, at: folder.appendingPathComponent(fileName(configuration, backend)))
        }
        let context = ObjectContext(coordinator: coordinator)
        if configurations.contains("Good") { try context.insert("Good").set("name", "g") }
        if configurations.contains("Old") { try context.insert("Old").set("label", "l") }
        if configurations.contains("Pending") {
            for i in 0..<pending {
                let row = try context.insert("Pending")
                try row.set("n", Int64(i))
                if i % 2 == 0 { try row.set("note", "kept \(i)") }
            }
        }
        try context.save()
    }

    /// A file (SQLite) or directory with a `data.mdb` (LMDB) that is no store at all.
    static func corrupt(_ backend: Backend, at url: URL) throws {
        let garbage = Data(repeating: 0x5A, count: 8192)
        if backend == .lmdb {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try garbage.write(to: url.appendingPathComponent("data.mdb"))
        } else {
            try garbage.write(to: url)
        }
    }

    /// The bytes of a store's files, to prove a store was not touched.
    static func snapshot(_ url: URL) -> [String: Data] {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return ["data.mdb": FileManager.default.contents(atPath: url.appendingPathComponent("data.mdb").path) ?? Data()]
        }
        var files: [String: Data] = [:]
        for suffix in ["", "-wal"] { files[suffix] = FileManager.default.contents(atPath: url.path + suffix) }
        return files
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i in
            var rest = items
            let first = rest.remove(at: i)
            return permutations(rest).map { [first] + $0 }
        }
    }

    /// A good store, a migratable one, a corrupt one and an incompatible non-disposable one, in every order:
    /// the same outcome for each store and the same stores added. (Before, the first failure ended the call,
    /// so which stores were added depended on the order.)
    @Test(arguments: [Backend.sqlite, .lmdb, .memory])
    func everyStoreIsAttemptedInEveryOrder(backend: Backend) async throws {
        // Memory cannot be corrupt or out of date: with it, only the good store is a memory store.
        let fileBackend: Backend = backend == .memory ? .sqlite : backend
        let template = dir.file("template")
        try FileManager.default.createDirectory(at: template, withIntermediateDirectories: true)
        try Self.populate(fileBackend, in: template, configurations: ["Good", "Pending", "Old"])
        try Self.corrupt(fileBackend, at: template.appendingPathComponent(Self.fileName("Broken", fileBackend)))
        let v2 = try Self.model(version: 2)
        var seen: [[String: StoreLoadResult.Kind]] = []
        for (n, order) in Self.permutations(["Good", "Pending", "Broken", "Old"]).enumerated() {
            let folder = dir.file("run\(n)")
            try FileManager.default.copyItem(at: template, to: folder)
            let descriptions = order.map { configuration in
                configuration == "Good" && backend == .memory
                    ? StoreDescription(.memory, configuration: "Good")
                    : StoreDescription(
                        fileBackend.storeType, configuration: configuration,
                        url: folder.appendingPathComponent(Self.fileName(configuration, fileBackend)))
            }
            let oldBefore = Self.snapshot(folder.appendingPathComponent(Self.fileName("Old", fileBackend)))
            let coordinator = StoreCoordinator(model: v2)
            let results = await coordinator.loadStores(descriptions)

            #expect(results.map(\.storeDescription) == descriptions, "one result per description, in order")
            var kinds: [String: StoreLoadResult.Kind] = [:]
            for result in results { kinds[result.storeDescription.configuration] = result.outcome.kind }
            #expect(kinds == ["Good": .loaded, "Pending": .migrated, "Broken": .failed, "Old": .failed], "order \(order)")
            seen.append(kinds)
            #expect(Set(coordinator.stores.map(\.configurationName)) == ["Good", "Pending"], "order \(order)")
            #expect(results.addedStores.map(\.configurationName) == order.filter { ["Good", "Pending"].contains($0) })

            for result in results {
                switch result.storeDescription.configuration {
                case "Pending":
                    #expect(result.report?.verdict == .migratable)
                    #expect(result.error == nil && result.store != nil)
                case "Broken":
                    guard case let .failed(error, report) = result.outcome else { continue }
                    #expect(report == nil)
                    #expect(error is StoreError)
                    #expect("\(error)".contains("Broken"), "the error names the file: \(error)")
                    #expect(result.store == nil)
                case "Old":
                    guard case let .failed(error, report) = result.outcome else { continue }
                    let blocking = try #require(report, "an incompatible model's failure carries its report")
                    #expect(blocking.verdict == .incompatible)
                    #expect(blocking.blockingReasons.contains { $0.contains("label") }, "\(blocking.blockingReasons)")
                    guard case .incompatibleModel = error as? StoreError else {
                        Issue.record("expected StoreError.incompatibleModel, got \(error)")
                        continue
                    }
                default:
                    break
                }
            }
            #expect(Self.snapshot(folder.appendingPathComponent(Self.fileName("Old", fileBackend))) == oldBefore,
                    "the incompatible store is untouched")
            // The added stores work: the migrated rows carry the default.
            let context = ObjectContext(coordinator: coordinator)
            let pending = try context.fetch(FetchRequest(entityName: "Pending", predicate: try FetchPredicate(format: "note == '-'")))
            #expect(pending.count == 5)
            #expect(try context.count(FetchRequest(entityName: "Good")) == (backend == .memory ? 0 : 1))
            #expect(throws: (any Error).self) { try results.get() }
        }
        #expect(Set(seen).count == 1)
    }

    /// A disposable store whose model cannot be migrated is recreated, with the report, next to a failing one.
    @Test(arguments: [Backend.sqlite, .lmdb])
    func disposableStoreIsReportedRecreated(backend: Backend) async throws {
        try Self.populate(backend, in: dir.url, configurations: ["Old"])
        try Self.corrupt(backend, at: dir.file(Self.fileName("Broken", backend)))
        let coordinator = StoreCoordinator(model: try Self.model(version: 2))
        let results = await coordinator.loadStores([
            StoreDescription(backend.storeType, configuration: "Broken", url: dir.file(Self.fileName("Broken", backend))),
            StoreDescription(
                backend.storeType, configuration: "Old", url: dir.file(Self.fileName("Old", backend)),
                options: StoreOptions(disposable: true)),
        ])
        #expect(results.map(\.outcome.kind) == [.failed, .recreated])
        #expect(results[1].report?.verdict == .incompatible)
        #expect(coordinator.stores.map(\.configurationName) == ["Old"])
    }

    /// Cancelled before the call: no store is attempted, none is added, no file changes.
    @Test func cancelledBeforeTheCallNothingIsAdded() async throws {
        try Self.populate(.sqlite, in: dir.url, configurations: ["Good", "Pending"])
        let descriptions = ["Good", "Pending"].map {
            StoreDescription(.sqlite, configuration: $0, url: dir.file(Self.fileName($0, .sqlite)))
        }
        let before = descriptions.map { Self.snapshot($0.url!) }
        let coordinator = StoreCoordinator(model: try Self.model(version: 2))
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return await coordinator.loadStores(descriptions)
        }
        task.cancel()
        let results = await task.value
        #expect(results.map(\.outcome.kind) == [.cancelled, .cancelled])
        #expect(results.allSatisfy { $0.error is CancellationError })
        #expect(coordinator.stores.isEmpty)
        #expect(descriptions.map { Self.snapshot($0.url!) } == before)
    }

    /// Cancelled once the first store is loaded: the stores after it are not attempted, not added.
    @Test(arguments: [Backend.sqlite, .lmdb])
    func cancelledBetweenStores(backend: Backend) async throws {
        try Self.populate(backend, in: dir.url, configurations: ["Good", "Pending"])
        let descriptions = ["Good", "Pending"].map {
            StoreDescription(backend.storeType, configuration: $0, url: dir.file(Self.fileName($0, backend)))
        }
        let pendingBefore = Self.snapshot(descriptions[1].url!)
        let coordinator = StoreCoordinator(model: try Self.model(version: 2))
        let handle = TaskHandle()
        let task = Task {
            await coordinator.loadStores(descriptions) { event in
                if case .loaded(_, "Good") = event { handle.cancel() }
            }
        }
        handle.set(task)
        let results = await task.value
        #expect(results.map(\.outcome.kind) == [.loaded, .cancelled])
        #expect(coordinator.stores.map(\.configurationName) == ["Good"])
        #expect(Self.snapshot(descriptions[1].url!) == pendingBefore)
    }

    /// Cancelled while a large store migrates (after its first batch): the migration rolls back, so the store
    /// keeps its old model and every row as it was — or, had it finished, it is fully migrated.
    @Test(arguments: [Backend.sqlite, .lmdb])
    func cancelledWhileMigratingLeavesTheStoreUntouchedOrMigrated(backend: Backend) async throws {
        let rows = 5 * 2_000 + 7
        try Self.populate(backend, in: dir.url, configurations: ["Pending"], pending: rows)
        let url = dir.file(Self.fileName("Pending", backend))
        let v1 = try Self.model(version: 1), v2 = try Self.model(version: 2)
        let coordinator = StoreCoordinator(model: v2)
        let handle = TaskHandle()
        let batches = Counter()
        let task = Task {
            await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Pending", url: url)]) { event in
                if case let .migrating(_, "Pending", done, total) = event, done < total {
                    batches.increment()
                    handle.cancel()
                }
            }
        }
        handle.set(task)
        let results = await task.value
        #expect(batches.value >= 1, "the migration reported at least one batch before it was cancelled")
        let result = try #require(results.first)
        switch result.outcome {
        case .cancelled:
            #expect(coordinator.stores.isEmpty)
            // Untouched: still version 1 (its version hashes equal the old model's) with every row as written.
            #expect(try StoreCompatibility.check(backend.storeType, at: url, model: v1, configuration: "Pending").basis == .versionHashes)
            let old = StoreCoordinator(model: v1)
            try old.addStore(backend.storeType, configuration: "Pending", at: url, options: .readOnly)
            let context = ObjectContext(coordinator: old)
            #expect(try context.count(FetchRequest(entityName: "Pending")) == rows)
            #expect(try context.count(FetchRequest(entityName: "Pending", predicate: try FetchPredicate(format: "note == nil"))) == rows / 2)
            #expect(try context.count(FetchRequest(entityName: "Pending", predicate: try FetchPredicate(format: "note == '-'"))) == 0)
        case .migrated:
            #expect(try StoreCompatibility.check(backend.storeType, at: url, model: v2, configuration: "Pending").basis == .versionHashes)
            let context = ObjectContext(coordinator: coordinator)
            #expect(try context.count(FetchRequest(entityName: "Pending", predicate: try FetchPredicate(format: "note == '-'"))) == rows / 2)
        default:
            Issue.record("expected cancelled or migrated, got \(result.outcome)")
        }
        // Loading again without cancelling migrates it fully.
        let again = StoreCoordinator(model: v2)
        let reload = await again.loadStores([StoreDescription(backend.storeType, configuration: "Pending", url: url)])
        #expect(reload.first?.store != nil)
        #expect(try ObjectContext(coordinator: again).count(
            FetchRequest(entityName: "Pending", predicate: try FetchPredicate(format: "note == nil OR note == '-'"))) == rows / 2)
    }
}

/// Lets a progress callback cancel the task that runs it.
private final class TaskHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<[StoreLoadResult], Never>?
    private var cancelRequested = false

    func set(_ task: Task<[StoreLoadResult], Never>) {
        lock.withLock {
            self.task = task
            if cancelRequested { task.cancel() }
        }
    }

    func cancel() {
        lock.withLock {
            cancelRequested = true
            task?.cancel()
        }
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

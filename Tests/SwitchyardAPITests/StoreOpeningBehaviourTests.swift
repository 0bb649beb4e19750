import Foundation
import Switchyard
import Testing

/// What `addStore` promises when a store file already exists: a changed model is migrated when Core Data
/// could infer the mapping, refused otherwise (or recreated, for a disposable store), and a read-only store
/// is never written. Each test names the Core Data behaviour it matches.
@Suite struct StoreOpeningBehaviourTests {
    static let fileBackends: [Backend] = [.sqlite, .lmdb]

    /// Shop's model with `change` applied to its Order entity.
    static func shop(changingOrder change: (inout EntityDescription) -> Void) throws -> ObjectModel {
        var entities = try Shop.model().entities
        for i in entities.indices where entities[i].name == "Order" { change(&entities[i]) }
        return try ObjectModel(entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    /// Saves orders a (qty 1) and b (qty 2) in a store of `backend` in `dir`, and closes it.
    static func seed(_ backend: Backend, in dir: TempDir) throws {
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "a", qty: 1)
        try Shop.order(context, "b", qty: 2)
        try context.save()
    }

    /// Core Data's lightweight migration (`NSInferMappingModelAutomaticallyOption`): a store written with the
    /// previous model opens with a model that adds an optional attribute; its objects keep their values and
    /// the new attribute reads nil (or its default).
    @Test(arguments: Backend.persistent)
    func anInferableChangeIsMigratedInPlace(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let model = try Self.shop { $0.attributes += [
            AttributeDescription(name: "note", type: .string),
            AttributeDescription(name: "priority", type: .integer16, defaultValue: .integer(3)),
        ] }
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        let orders = try context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try Shop.codes(orders) == ["a", "b"])
        #expect(try orders.map { try $0.get("qty", as: Int64.self) } == [1, 2])
        #expect(try orders.allSatisfy { try $0.get("note", as: String.self) == nil })
        #expect(try orders.map { try $0.get("priority", as: Int.self) } == [3, 3])
        try orders[0].set("note", "migrated")
        try context.save()
        let check = try ObjectContext(coordinator: coordinator).existingObject(with: orders[0].objectID)
        #expect(try check.get("note", as: String.self) == "migrated")
    }

    /// Core Data cannot migrate a store it may not write: a read-only open with a model that would change how
    /// rows are stored fails on every backend with the same reason, and the store is left as it was. (SQLite
    /// said only that a column was missing, as if the store were damaged; LMDB opened it and read the added
    /// attribute as nil, not its default.) Reading through another model that stores rows the same way (a
    /// tool's, or one with fewer entities) stays allowed.
    @Test(arguments: Backend.persistent)
    func aReadOnlyStoreThatNeedsMigrationSaysSo(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let model = try Self.shop { $0.attributes += [AttributeDescription(name: "note", type: .string, defaultValue: .string("n"))] }
        try Self.expectReadOnlyRefused(backend, in: dir, model: model, reason: Self.migrateReason)
        // Untouched: its own model still reads it (checked above), and the new one migrates it when it may write.
        let writable = StoreCoordinator(model: model)
        try backend.add(to: writable, configuration: "Main", in: dir.url)
        let orders = try ObjectContext(coordinator: writable).fetch(FetchRequest(entityName: "Order"))
        #expect(try orders.map { try $0.get("note", as: String.self) } == ["n", "n"])
    }

    /// The same for the other changes a read-only store would be read wrongly through: an attribute retyped,
    /// made required (the stored rows hold nil), or renamed (its renaming identifier naming the stored one). Core
    /// Data cannot open a store read-only with a model it would have to migrate; every backend refuses the same
    /// way, and the store stays readable with its own model. (SQLite opened all three and PostgreSQL called
    /// every change migratable.)
    @Test(arguments: Backend.persistent, ["retyped", "required", "renamed"])
    func aReadOnlyStoreWithAChangedAttributeSaysSo(_ backend: Backend, change: String) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let model = try Self.shop { order in
            switch change {
            case "retyped": order.attributes[2].type = .string
            case "required": order.attributes[2].isOptional = false
            default:
                order.attributes[1].name = "quantity"
                order.attributes[1].renamingIdentifier = "qty"
            }
        }
        #expect(model.entity(named: "Order") != (try Shop.model()).entity(named: "Order"))
        // Core Data infers neither a type change nor a nil made required; a rename it does, once it may write.
        let reason = change != "renamed"
            ? "the store was written with another model (entities changed: Order) that this one cannot migrate, and is opened read-only"
            : Self.migrateReason
        try Self.expectReadOnlyRefused(backend, in: dir, model: model, reason: reason)
    }

    static let migrateReason =
        "the store was written with another model (entities changed: Order) and is opened read-only: open it writable once to migrate it"

    /// Checks that a read-only open of the seeded store with `model` fails with `reason`, and that the store's own
    /// model then still reads both orders from it read-only.
    static func expectReadOnlyRefused(_ backend: Backend, in dir: TempDir, model: ObjectModel, reason: String) throws {
        #expect {
            try backend.add(to: StoreCoordinator(model: model), configuration: "Main", in: dir.url, options: .readOnly)
        } throws: { error in
            guard case .schemaMismatch(_, "Main", let text)? = error as? StoreError else { return false }
            return text.hasPrefix(reason)
        }
        let own = StoreCoordinator(model: try Shop.model())
        try backend.add(to: own, configuration: "Main", in: dir.url, options: .readOnly)
        let orders = try ObjectContext(coordinator: own).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try Shop.codes(orders) == ["a", "b"])
        #expect(try orders.map { try $0.get("qty", as: Int64.self) } == [1, 2])
        try own.removeStore(own.stores[0])
    }

    /// A model that stores rows the same way (an attribute made optional, which every stored row already
    /// satisfies, or one attribute fewer, as an older app version or a tool has) reads a read-only store as it is
    /// on every backend: a migration would change nothing the model reads. (PostgreSQL refused any changed
    /// entity.)
    @Test(arguments: Backend.persistent, ["optional", "removed"])
    func aReadOnlyStoreReadsThroughAModelThatStoresRowsTheSameWay(_ backend: Backend, change: String) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let model = try Self.shop { order in
            if change == "optional" { order.attributes[1].isOptional = true } else { order.attributes.removeAll { $0.name == "width" } }
        }
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url, options: .readOnly)
        let orders = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try orders.map { try $0.get("qty", as: Int64.self) } == [1, 2])
        try coordinator.removeStore(coordinator.stores[0])
        // Still written with the old model: its own opens it read-only too.
        let own = StoreCoordinator(model: try Shop.model())
        try backend.add(to: own, configuration: "Main", in: dir.url, options: .readOnly)
        #expect(try ObjectContext(coordinator: own).count(FetchRequest(entityName: "Order")) == 2)
    }

    /// An entity the store does not have yet (a newer app version's) is a migration too: Core Data cannot open
    /// the store read-only with that model, and neither does any backend. (LMDB opened it with the entity
    /// empty, SQLite said Z_PRIMARYKEY had no row for it, PostgreSQL that its table was missing.)
    @Test(arguments: Backend.persistent)
    func aReadOnlyStoreWithoutAnEntityOfTheModelSaysSo(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        var entities = try Shop.model().entities
        entities.append(EntityDescription(name: "Coupon", attributes: [AttributeDescription(name: "code", type: .string)]))
        let model = try ObjectModel(entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
        try Self.expectReadOnlyRefused(backend, in: dir, model: model, reason: Self.migrateReason.replacingOccurrences(of: "Order", with: "Coupon"))
        // Writable, the migration adds it.
        let coordinator = StoreCoordinator(model: model)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        #expect(try context.count(FetchRequest(entityName: "Order")) == 2)
        #expect(try context.count(FetchRequest(entityName: "Coupon")) == 0)
    }

    /// Core Data refuses a store whose model cannot be mapped automatically
    /// (`NSPersistentStoreIncompatibleVersionHashError`) and leaves it as it was: opened again with its own
    /// model, everything is there.
    @Test(arguments: Backend.persistent)
    func anIncompatibleChangeIsRefusedAndTheStoreKept(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let incompatible = try Self.shop { order in
            order.attributes = order.attributes.map { a in
                a.name == "qty" ? AttributeDescription(name: "qty", type: .string, isOptional: false) : a
            }
        }
        let coordinator = StoreCoordinator(model: incompatible)
        do {
            try backend.add(to: coordinator, configuration: "Main", in: dir.url)
            Issue.record("a store with qty as Integer 64 opened with qty as String")
        } catch let error as StoreError {
            guard case let .incompatibleModel(path, configuration, _) = error else { Issue.record("\(error)"); return }
            #expect(path.lowercased().contains("main") && configuration == "Main")
        }
        #expect(coordinator.stores.isEmpty)
        let original = try Shop.coordinator(backend, in: dir)
        let orders = try ObjectContext(coordinator: original).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try orders.map { try $0.get("qty", as: Int64.self) } == [1, 2])
    }

    /// A disposable store (a cache, as with Core Data apps that delete and recreate their cache store when
    /// migration fails) that cannot be migrated is recreated empty for the new model.
    @Test(arguments: Backend.persistent)
    func aDisposableStoreThatCannotBeMigratedIsRecreated(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let incompatible = try Self.shop { order in
            order.attributes = order.attributes.map { a in
                a.name == "qty" ? AttributeDescription(name: "qty", type: .string, isOptional: false) : a
            }
        }
        let coordinator = StoreCoordinator(model: incompatible)
        try backend.add(to: coordinator, configuration: "Main", in: dir.url, options: StoreOptions(disposable: true))
        let context = ObjectContext(coordinator: coordinator)
        #expect(try context.count(FetchRequest(entityName: "Order")) == 0)
        let order = try context.insert("Order")
        try order.set("code", "n")
        try order.set("qty", "many")
        try context.save()
        #expect(try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order"))[0].get("qty", as: String.self) == "many")
    }

    /// Core Data's `NSReadOnlyPersistentStoreOption`: a store opened read-only can be fetched from, and a save
    /// into it fails without writing anything.
    @Test(arguments: Backend.persistent)
    func aReadOnlyStoreIsReadButNeverWritten(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        do {
            let coordinator = StoreCoordinator(model: try Shop.model())
            let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url, options: .readOnly)
            #expect(store.isReadOnly)
            let context = ObjectContext(coordinator: coordinator)
            let orders = try context.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
            #expect(try Shop.codes(orders) == ["a", "b"])
            try orders[0].set("qty", Int64(50))
            try Shop.order(context, "c", qty: 3)
            do {
                try context.save()
                Issue.record("a read-only store accepted a save")
            } catch let error as StoreError {
                guard case .readOnly = error else { Issue.record("\(error)"); return }
            }
        }
        let check = ObjectContext(coordinator: try Shop.coordinator(backend, in: dir))
        let saved = try check.fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("code")]))
        #expect(try saved.map { try $0.get("qty", as: Int64.self) } == [1, 2])
    }

    /// What an app may create at the store's path before adding the store — an empty file for SQLite
    /// (`FileManager.createFile`, which SQLite and Core Data take as a new database), an empty directory for
    /// LMDB's store directory — becomes a new store and keeps what is saved; opened read-only it is a clear error
    /// naming the file, and stays as it is.
    @Test(arguments: fileBackends)
    func anEmptyFileBecomesANewStore(_ backend: Backend) throws {
        let dir = try TempDir()
        let url = dir.url.appendingPathComponent(backend == .sqlite ? "Main.sqlite" : "Main.lmdb")
        if backend == .sqlite {
            #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        } else {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        }
        let readOnly = StoreCoordinator(model: try Shop.model())
        let error = #expect(throws: StoreError.self) {
            try readOnly.addStore(backend.storeType, configuration: "Main", at: url, options: StoreOptions(readOnly: true))
        }
        #expect(error?.localizedDescription.contains(url.lastPathComponent) == true, "\(String(describing: error))")
        if backend == .sqlite {
            #expect((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue == 0)
        } else {
            #expect(try FileManager.default.contentsOfDirectory(atPath: url.path).isEmpty)
        }

        try Self.seed(backend, in: dir)                                    // opens Main.sqlite / Main.lmdb
        let reopened = try ObjectContext(coordinator: Shop.coordinator(backend, in: dir))
        #expect(try reopened.count(FetchRequest(entityName: "Order")) == 2)
    }

    /// A store whose folder cannot hold it fails to add with an error naming the store and what is wrong with
    /// the folder, where SQLite says only "unable to open database file" (Core Data's error for it carries the
    /// same SQLite code): a path under a file, and for SQLite a folder that does not exist (an LMDB store's
    /// directory is created, with its missing parents). Nothing is written beside it.
    @Test(arguments: fileBackends)
    func aStoreWhoseFolderCannotHoldItSaysWhy(_ backend: Backend) throws {
        let dir = try TempDir()
        let name = backend == .sqlite ? "Main.sqlite" : "Main.lmdb"
        let file = dir.url.appendingPathComponent("notes.txt")
        try Data("keep".utf8).write(to: file)
        let underFile = file.appendingPathComponent(name)
        let error = #expect(throws: StoreError.self) {
            try StoreCoordinator(model: try Shop.model()).addStore(backend.storeType, configuration: "Main", at: underFile)
        }
        let text = error?.localizedDescription ?? ""
        #expect(text.contains(underFile.path), "\(text)")
        #expect(text.contains("\(file.path) is not a folder"), "\(text)")
        #expect(try Data(contentsOf: file) == Data("keep".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["notes.txt"])

        let missing = dir.url.appendingPathComponent("no/such").appendingPathComponent(name)
        let coordinator = StoreCoordinator(model: try Shop.model())
        if backend == .sqlite {
            let error = #expect(throws: StoreError.self) {
                try coordinator.addStore(backend.storeType, configuration: "Main", at: missing)
            }
            let text = error?.localizedDescription ?? ""
            #expect(text.contains(missing.path), "\(text)")
            #expect(text.contains("the folder \(missing.deletingLastPathComponent().path) does not exist"), "\(text)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["notes.txt"])
        } else {
            try coordinator.addStore(backend.storeType, configuration: "Main", at: missing)
            let context = ObjectContext(coordinator: coordinator)
            try Shop.order(context, "a", qty: 1)
            try context.save()
            #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order")) == 1)
        }
    }

    /// `disposalHandler` decides about a disposable store that cannot be migrated, with the compatibility
    /// report: `.keep` vetoes (the add fails, the store keeps its data), `.quarantine` moves the old files
    /// aside — still openable with the old model — and creates the store again, empty.
    @Test(arguments: fileBackends)
    func theDisposalHandlerCanKeepOrQuarantine(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, in: dir)
        let incompatible = try Self.shop { order in
            order.attributes = order.attributes.map { a in
                a.name == "qty" ? AttributeDescription(name: "qty", type: .string, isOptional: false) : a
            }
        }
        let url = dir.url.appendingPathComponent(backend == .sqlite ? "Main.sqlite" : "Main.lmdb")
        let seen = Reports()
        do {
            let coordinator = StoreCoordinator(model: incompatible)
            coordinator.disposalHandler = { description, report in
                seen.append("\(description.configuration): \(report.blockingReasons.joined(separator: "; "))")
                return .keep
            }
            do {
                try coordinator.addStore(backend.storeType, configuration: "Main", at: url, options: StoreOptions(disposable: true))
                Issue.record("the handler's veto was ignored")
            } catch let error as StoreError {
                guard case .incompatibleModel = error else { Issue.record("\(error)"); return }
            }
            #expect(coordinator.stores.isEmpty)
        }
        #expect(seen.all.count == 1)
        #expect(seen.all.first.map { $0.hasPrefix("Main: ") && $0.contains("qty") } == true, "\(seen.all)")
        let kept = try ObjectContext(coordinator: Shop.coordinator(backend, in: dir)).count(FetchRequest(entityName: "Order"))
        #expect(kept == 2)

        let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path))
        do {
            let coordinator = StoreCoordinator(model: incompatible)
            coordinator.disposalHandler = { _, _ in .quarantine }
            try coordinator.addStore(backend.storeType, configuration: "Main", at: url, options: StoreOptions(disposable: true))
            #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order")) == 0)
        }
        let moved = Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path)).subtracting(before)
        let quarantined = try #require(moved.first { $0.contains("quarantined") && ($0.hasSuffix(".sqlite") || $0.hasSuffix(".lmdb")) }, "\(moved)")
        let old = StoreCoordinator(model: try Shop.model())
        try old.addStore(backend.storeType, configuration: "Main", at: dir.url.appendingPathComponent(quarantined))
        #expect(try ObjectContext(coordinator: old).count(FetchRequest(entityName: "Order")) == 2)
    }

    /// A SQLite store whose pages were damaged (a disk error, a copy cut short) is refused when a model change
    /// would migrate it, naming the file, and is left as it was (GRDB's own first write to a store it opens, a
    /// table created and dropped, is all that reaches the file). A migration reads only what it changes: until
    /// 2026-12-02 one that added an attribute went through without an error, carrying the damage into the new
    /// version, where it showed only when those rows were read. (SQLite's `PRAGMA quick_check` runs first.)
    @Test func aDamagedSQLiteStoreIsNotMigrated() throws {
        let dir = try TempDir()
        do {
            let context = ObjectContext(coordinator: try Shop.coordinator(.sqlite, in: dir))
            for i in 0..<3_000 { try Shop.order(context, "order \(i) " + String(repeating: "x", count: 100), qty: Int64(i)) }
            try context.save()
        }
        let url = dir.url.appendingPathComponent("Main.sqlite")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"), "the store was checkpointed when it closed")
        var bytes = [UInt8](try Data(contentsOf: url))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pages = bytes.count / pageSize
        try #require(pages > 40, "the orders fill many pages (\(pages))")
        // Two pages in the middle of the file, among the orders' rows and index entries.
        for i in (pages / 2 * pageSize)..<((pages / 2 + 2) * pageSize) { bytes[i] = UInt8(truncatingIfNeeded: i &* 131 &+ 7) }
        try Data(bytes).write(to: url)

        let model = try Self.shop { $0.attributes += [AttributeDescription(name: "note", type: .string)] }
        #expect {
            try Backend.sqlite.add(to: StoreCoordinator(model: model), configuration: "Main", in: dir.url)
        } throws: { error in
            guard case StoreError.notAStore(let path, .sqlite, let reason) = error else { return false }
            return path == url.path && reason.contains("damaged") && reason.contains("not migrated")
                && error.localizedDescription.contains(url.path)
        }
        // Not migrated: the model it was written with opens it as it is (were it the new model's, going back would
        // be a migration too, refused the same way), and its rows outside the damage read as saved.
        let old = StoreCoordinator(model: try Shop.model())
        try Backend.sqlite.add(to: old, configuration: "Main", in: dir.url)
        let first = try ObjectContext(coordinator: old).fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty == 0")))
        #expect(try Shop.codes(first) == ["order 0 " + String(repeating: "x", count: 100)])
    }
}

/// Collects strings from a `@Sendable` handler.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}

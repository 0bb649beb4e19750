import Foundation
import Switchyard
import SwitchyardPostgreSQL
import Testing

/// Migration chains through the public API, on every backend with files: a store written by V1 reaches V3
/// through an inferred step and a custom one (as CoreStore's chains and SwiftData's migration stages do).
@Suite struct MigrationChainTests {
    static let persistent: [Backend] = [.sqlite, .lmdb]
        + (ProcessInfo.processInfo.environment["SWITCHYARD_SKIP_POSTGRES"] == "1" ? [] : [.postgresql])

    /// V1: Person(name, age as a string) 1-n Note(text) n-n Label(title).
    static func v1() throws -> ObjectModel {
        try model(person: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "age", type: .string),
        ])
    }

    /// V2 adds an optional nickname (inferable).
    static func v2() throws -> ObjectModel {
        try model(person: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "age", type: .string),
            AttributeDescription(name: "nickname", type: .string),
        ])
    }

    /// V3 splits the name in two (non-optional), makes age an integer, and adds Audit rows made from people:
    /// nothing Core Data could infer.
    static func v3() throws -> ObjectModel {
        try model(
            person: [
                AttributeDescription(name: "firstName", type: .string, isOptional: false),
                AttributeDescription(name: "lastName", type: .string, isOptional: false),
                AttributeDescription(name: "age", type: .integer64),
                AttributeDescription(name: "nickname", type: .string),
            ],
            audit: true)
    }

    static func model(person attributes: [AttributeDescription], audit: Bool = false) throws -> ObjectModel {
        var personRelationships = [RelationshipDescription(name: "notes", destination: "Note", inverse: "person", isToMany: true)]
        var entities = [
            EntityDescription(
                name: "Note", attributes: [AttributeDescription(name: "text", type: .string)],
                relationships: [
                    RelationshipDescription(name: "person", destination: "Person", inverse: "notes"),
                    RelationshipDescription(name: "labels", destination: "Label", inverse: "notes", isToMany: true),
                ]),
            EntityDescription(
                name: "Label", attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [RelationshipDescription(name: "notes", destination: "Note", inverse: "labels", isToMany: true)]),
        ]
        if audit {
            personRelationships.append(RelationshipDescription(name: "audits", destination: "Audit", inverse: "person", isToMany: true))
            entities.append(EntityDescription(
                name: "Audit", attributes: [AttributeDescription(name: "event", type: .string, isOptional: false)],
                relationships: [RelationshipDescription(name: "person", destination: "Person", inverse: "audits")]))
        }
        entities.append(EntityDescription(name: "Person", attributes: attributes, relationships: personRelationships))
        return try ObjectModel(
            entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    /// The custom step V2 → V3: split names, parse ages, drop people named "Spam", add an Audit per person.
    static func splitNames() -> CustomMigration {
        var step = CustomMigration(batchSize: 7)
        step.transform("Person") { old, new in
            let name = try old.value("name", as: String.self) ?? ""
            if name == "Spam" { return new.drop() }
            let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
            try new.set("firstName", parts.first ?? "")
            try new.set("lastName", parts.count > 1 ? parts[1] : "")
            try new.set("age", (try old.value("age", as: String.self)).flatMap { Int64($0) })
            try new.insert("Audit", values: ["event": .string("migrated \(name)")], related: ["person": new.reference])
        }
        return step
    }

    static func chain() throws -> MigrationChain {
        var chain = try MigrationChain(versions: [
            ModelVersion(name: "V1", model: try v1()), ModelVersion(name: "V2", model: try v2()), ModelVersion(name: "V3", model: try v3()),
        ])
        try chain.setCustomStep(to: "V3", splitNames())
        return chain
    }

    static func url(_ backend: Backend, in dir: TempDir) throws -> URL {
        switch backend {
        case .postgresql:
            StoreCoordinator.registerPostgreSQL()
            return try Backend.postgresURL(in: dir.url, name: "Main")
        case .lmdb: return dir.url.appendingPathComponent("Main.lmdb")
        default: return dir.url.appendingPathComponent("Main.sqlite")
        }
    }

    /// True when no store is where a custom step writes the new one (`Main.sqlite.migrating`, the schema
    /// `…_migrating`): a PostgreSQL schema without a store refuses a read-only open.
    static func noHalfWrittenStore(_ backend: Backend, in dir: TempDir) throws -> Bool {
        let url = try url(backend, in: dir)
        guard backend == .postgresql else { return !FileManager.default.fileExists(atPath: url.path + ".migrating") }
        var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        parts.queryItems = parts.queryItems?.map { $0.name == "schema" ? URLQueryItem(name: "schema", value: $0.value! + "_migrating") : $0 }
        do {
            try StoreCoordinator(model: try v2()).addStore(.postgreSQL, configuration: "Main", url: parts.url!, options: .readOnly)
            return false
        } catch {
            return "\(error)".contains("no store in schema")
        }
    }

    /// Writes a V1 store: 30 people (every fifth named "Spam"), two notes each, labels shared by notes.
    static func writeV1(_ backend: Backend, in dir: TempDir) throws -> UUID {
        let coordinator = StoreCoordinator(model: try v1())
        let store = try coordinator.addStore(backend.storeType, configuration: "Main", at: try url(backend, in: dir))
        var metadata = try store.metadata()
        metadata.additional["AppKey"] = .string("kept")
        try store.setMetadata(metadata)
        let context = ObjectContext(coordinator: coordinator)
        let labels = try (0..<3).map { i -> ManagedObject in
            let label = try context.insert("Label")
            try label.set("title", "L\(i)")
            return label
        }
        for i in 0..<30 {
            let person = try context.insert("Person")
            try person.set("name", i % 5 == 0 ? "Spam" : "First\(i) Last \(i)")
            try person.set("age", i % 3 == 0 ? nil : String(20 + i))
            for n in 0..<2 {
                let note = try context.insert("Note")
                try note.set("text", "note \(i).\(n)")
                try note.setRelatedObject(person, forKey: "person")
                try note.addRelatedObject(labels[(i + n) % 3], forKey: "labels")
            }
        }
        try context.save()
        return store.identifier
    }

    @Test(arguments: persistent)
    func aV1StoreReachesV3ThroughAnInferredAndACustomStep(_ backend: Backend) async throws {
        let dir = try TempDir()
        let identifier = try Self.writeV1(backend, in: dir)
        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(try Self.chain())
        let events = EventLog()
        let results = await coordinator.loadStores(
            [StoreDescription(backend.storeType, configuration: "Main", url: try Self.url(backend, in: dir))]) { events.append($0) }
        let store = try #require(try results.get().first)
        #expect(events.steps == ["V1->V2 inferred", "V2->V3 custom"])
        // Reported as a migration, with what each step changed: V1 -> V2's nickname, V2 -> V3's Audit and name split.
        guard case .migrated(let report) = try #require(results.first).outcome else {
            Issue.record("a chain that ran two steps is a migration, not \(String(describing: results.first?.outcome))")
            return
        }
        let changed = report.entities.filter { $0.name == "Person" }.flatMap(\.properties).map(\.name)
        #expect(changed.contains("nickname") && changed.contains("firstName"), "\(report.summary)")
        #expect(report.entities.contains { $0.name == "Audit" && $0.kind == .added }, "\(report.summary)")
        #expect(store.identifier == identifier, "a migration keeps the store's UUID")
        #expect(try store.metadata().additional["AppKey"] == .string("kept"))

        let context = ObjectContext(coordinator: coordinator)
        let people = try context.fetch(FetchRequest(entityName: "Person", sortKeys: [SortKey("firstName")]))
        #expect(people.count == 24, "the six people named Spam were dropped")
        let first = try #require(people.first { try $0.get("firstName", as: String.self) == "First1" })
        #expect(try first.get("lastName", as: String.self) == "Last 1")
        #expect(try first.get("age", as: Int64.self) == 21)
        let third = try #require(people.first { try $0.get("firstName", as: String.self) == "First3" })
        #expect(try third.get("age", as: Int64.self) == nil, "a nil age stays nil")
        #expect(try first.relatedObjects(forKey: "notes").count == 2, "to-many through the members' to-one survive")
        let audits = try first.relatedObjects(forKey: "audits")
        #expect(try audits.map { try $0.get("event", as: String.self) } == ["migrated First1 Last 1"])
        #expect(try context.count(FetchRequest(entityName: "Audit")) == 24)

        let notes = try context.fetch(FetchRequest(entityName: "Note"))
        #expect(notes.count == 60, "notes are all kept")
        let orphans = try notes.filter { try $0.relatedObject(forKey: "person") == nil }
        #expect(orphans.count == 12, "notes of dropped people point nowhere")
        let label = try #require(try context.fetch(FetchRequest(entityName: "Label", predicate: try FetchPredicate(format: "title == 'L0'"))).first)
        #expect(try label.relatedObjects(forKey: "notes").count == 20, "many-to-many links survive")

        // The migrated store is a normal V3 store: it saves, and new keys do not collide with kept ones.
        let person = try context.insert("Person")
        try person.set("firstName", "New")
        try person.set("lastName", "Person")
        try context.save()
        #expect(try context.count(FetchRequest(entityName: "Person")) == 25)
    }

    @Test(arguments: persistent)
    func aStoreAtAMiddleVersionRunsOnlyTheStepsAfterIt(_ backend: Backend) async throws {
        let dir = try TempDir()
        _ = try Self.writeV1(backend, in: dir)
        // Bring it to V2 the usual way: a coordinator on V2 infers V1 -> V2.
        let v2 = StoreCoordinator(model: try Self.v2())
        try v2.addStore(backend.storeType, configuration: "Main", at: try Self.url(backend, in: dir))
        try v2.removeStore(v2.stores[0])

        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(try Self.chain())
        let events = EventLog()
        let results = await coordinator.loadStores(
            [StoreDescription(backend.storeType, configuration: "Main", url: try Self.url(backend, in: dir))]) { events.append($0) }
        _ = try results.get()
        #expect(events.steps == ["V2->V3 custom"])
        #expect(results.first?.outcome.kind == .migrated)
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Person")) == 24)

        // Opening it again runs nothing.
        let again = StoreCoordinator(model: try Self.v3())
        try again.setMigrationChain(try Self.chain())
        let none = EventLog()
        _ = try await again.loadStores(
            [StoreDescription(backend.storeType, configuration: "Main", url: try Self.url(backend, in: dir))]) { none.append($0) }.get()
        #expect(none.steps.isEmpty)
        try again.removeStore(again.stores[0])
        let third = StoreCoordinator(model: try Self.v3())
        try third.setMigrationChain(try Self.chain())
        let fresh = await third.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: try Self.url(backend, in: dir))])
        #expect(fresh.first?.outcome.kind == .loaded, "nothing left to migrate")
    }

    /// A store that `loadStores` created and the app let go of a moment ago migrates through the chain every time.
    /// The store `loadStores` opened on a thread of its own can close there just after the app's scope ends,
    /// removing its `-wal` and `-shm` while the chain looks at the file: SQLite then refused the look with
    /// SQLITE_CANTOPEN in about one run in five.
    @Test(arguments: persistent.filter { $0 != .postgresql })
    func aStoreJustReleasedByLoadStoresMigratesEveryTime(_ backend: Backend) async throws {
        for round in 0..<25 {
            let dir = try TempDir()
            let url = try Self.url(backend, in: dir)
            do {
                let coordinator = StoreCoordinator(model: try Self.v1())
                _ = try await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)]).get()
                let context = ObjectContext(coordinator: coordinator)
                let person = try context.insert("Person")
                try person.set("name", "Ann Lee")
                try context.save()
            }
            let coordinator = StoreCoordinator(model: try Self.v3())
            try coordinator.setMigrationChain(try Self.chain())
            let results = await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)])
            guard case .migrated = try #require(results.first).outcome else {
                Issue.record("round \(round): \(String(describing: results.first?.outcome))")
                return
            }
            let people = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Person"))
            #expect(try people.map { try $0.get("lastName", as: String.self) } == ["Lee"], "round \(round)")
        }
    }

    /// A step that fails leaves the store at the last version it finished: here V2, readable with V2's model.
    @Test(arguments: persistent)
    func aFailingCustomStepLeavesTheStoreAtThePreviousVersion(_ backend: Backend) throws {
        let dir = try TempDir()
        _ = try Self.writeV1(backend, in: dir)
        var chain = try Self.chain()
        var failing = CustomMigration(batchSize: 4)
        failing.transform("Person") { old, new in
            // Leaves firstName unset for the 10th person: non-optional, so the step must fail.
            if old.primaryKey == 10 { return }
            try new.set("firstName", "x")
            try new.set("lastName", "y")
        }
        try chain.setCustomStep(to: "V3", failing)
        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(chain)
        #expect {
            try coordinator.addStore(backend.storeType, configuration: "Main", at: try Self.url(backend, in: dir))
        } throws: { error in
            guard let error = error as? MigrationError, case let .stepFailed(_, configuration, from, to, reason) = error else { return false }
            return configuration == "Main" && from == "V2" && to == "V3" && reason.contains("firstName") && reason.contains("p10")
        }
        #expect(coordinator.stores.isEmpty)
        #expect(try Self.noHalfWrittenStore(backend, in: dir), "the half-written store is gone")
        let v2 = StoreCoordinator(model: try Self.v2())
        try v2.addStore(backend.storeType, configuration: "Main", at: try Self.url(backend, in: dir))
        let context = ObjectContext(coordinator: v2)
        #expect(try context.count(FetchRequest(entityName: "Person")) == 30, "V2 has every row")
        #expect(try context.count(FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "nickname == nil"))) == 30)
    }

    /// The hooks see the old version before the step and the new one after it, through the object API.
    @Test(arguments: persistent)
    func hooksRunBeforeAndAfterTheStep(_ backend: Backend) throws {
        let dir = try TempDir()
        _ = try Self.writeV1(backend, in: dir)
        var chain = try Self.chain()
        var step = Self.splitNames()
        step.willMigrate = { context in
            // Rename the spam before the step, so none is dropped.
            for person in try context.fetch(FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "name == 'Spam'"))) {
                try person.set("name", "Former Spam")
            }
        }
        step.didMigrate = { context in
            let label = try context.insert("Label")
            try label.set("title", "added after the step")
        }
        try chain.setCustomStep(to: "V3", step)
        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(chain)
        try coordinator.addStore(backend.storeType, configuration: "Main", at: try Self.url(backend, in: dir))
        let context = ObjectContext(coordinator: coordinator)
        #expect(try context.count(FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "firstName == 'Former'"))) == 6)
        #expect(try context.count(FetchRequest(entityName: "Label")) == 4)
    }

    /// Cancelling `loadStores` during a custom step stops it between batches: the store stays at the last
    /// finished step (V2 here), with every row, and no half-written store is left beside it.
    @Test(arguments: persistent)
    func cancellingDuringACustomStepLeavesTheLastFinishedStep(_ backend: Backend) async throws {
        let dir = try TempDir()
        _ = try Self.writeV1(backend, in: dir)
        let box = TaskBox()
        var chain = try Self.chain()
        var step = CustomMigration(batchSize: 7)
        step.transform("Person") { _, new in
            box.cancelOnce()
            try new.set("firstName", "x")
            try new.set("lastName", "y")
        }
        try chain.setCustomStep(to: "V3", step)
        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(chain)
        let url = try Self.url(backend, in: dir)
        let task = Task { await coordinator.loadStores([StoreDescription(backend.storeType, configuration: "Main", url: url)]) }
        box.set(task)
        let results = await task.value
        guard case .cancelled = try #require(results.first).outcome else {
            Issue.record("expected a cancelled load, got \(String(describing: results.first?.outcome))")
            return
        }
        #expect(coordinator.stores.isEmpty)
        #expect(try Self.noHalfWrittenStore(backend, in: dir))
        let v2 = StoreCoordinator(model: try Self.v2())
        try v2.addStore(backend.storeType, configuration: "Main", at: url)
        #expect(try ObjectContext(coordinator: v2).count(FetchRequest(entityName: "Person")) == 30)
    }

    /// A typed entity of the new version: the step writes through its key paths.
    struct PersonV3: EntityObject {
        static let entityName = "Person"
        static let declaredProperties: [DeclaredProperty] = [
            .attribute("firstName", String.self), .attribute("lastName", String.self), .optionalAttribute("age", Int64.self),
            .optionalAttribute("nickname", String.self),
        ]
        static var keyPathNames: [PartialKeyPath<PersonV3>: String] {
            [\PersonV3.firstName: "firstName", \PersonV3.lastName: "lastName", \PersonV3.age: "age", \PersonV3.nickname: "nickname"]
        }
        let managedObject: ManagedObject
        init(managedObject: ManagedObject) { self.managedObject = managedObject }
        var firstName: String { managedObject[attribute: "firstName"] }
        var lastName: String { managedObject[attribute: "lastName"] }
        var age: Int64? { managedObject[attribute: "age"] }
        var nickname: String? { managedObject[attribute: "nickname"] }
    }

    @Test func aTypedStepWritesThroughKeyPaths() throws {
        let dir = try TempDir()
        _ = try Self.writeV1(.sqlite, in: dir)
        var chain = try Self.chain()
        var step = CustomMigration()
        step.transform(PersonV3.self) { old, new in
            let name = try old.value("name", as: String.self) ?? ""
            try new.set(\PersonV3.firstName, String(name.prefix(1)))
            try new.set(\PersonV3.lastName, name)
            try new.set(\PersonV3.age, Int64(42))
            try new.set(\PersonV3.nickname, nil)
        }
        try chain.setCustomStep(to: "V3", step)
        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(chain)
        try coordinator.addStore(.sqlite, configuration: "Main", at: try Self.url(.sqlite, in: dir))
        let people = try ObjectContext(coordinator: coordinator).fetch(PersonV3.self)
        #expect(people.count == 30)
        #expect(people.allSatisfy { $0.age == 42 && $0.firstName == String($0.lastName.prefix(1)) })
    }

    @Test func chainsAreCheckedWhenSet() throws {
        #expect(throws: MigrationError.self) { try MigrationChain(versions: []) }
        let chain = try Self.chain()
        let coordinator = StoreCoordinator(model: try Self.v2())
        #expect {
            try coordinator.setMigrationChain(chain)
        } throws: { error in
            guard case .chainDoesNotEndAtModel(lastVersion: "V3", _)? = error as? MigrationError else { return false }
            return error.localizedDescription.contains("V3")
        }
        var other = chain
        #expect(throws: MigrationError.self) { try other.setCustomStep(to: "V9", CustomMigration()) }
        #expect(throws: MigrationError.self) { try other.setCustomStep(to: "V1", CustomMigration()) }
    }

    /// A transform naming an attribute the entity does not have fails with the version, entity and name.
    @Test func unknownPropertiesAreNamed() throws {
        let dir = try TempDir()
        _ = try Self.writeV1(.sqlite, in: dir)
        var chain = try Self.chain()
        var step = CustomMigration()
        step.transform("Person") { old, _ in _ = try old.value("surname") }
        try chain.setCustomStep(to: "V3", step)
        let coordinator = StoreCoordinator(model: try Self.v3())
        try coordinator.setMigrationChain(chain)
        #expect {
            try coordinator.addStore(.sqlite, configuration: "Main", at: try Self.url(.sqlite, in: dir))
        } throws: { error in
            error.localizedDescription.contains("surname") && error.localizedDescription.contains("Person")
        }
    }
}

/// Hands a task to code running elsewhere, which cancels it once.
final class TaskBox: @unchecked Sendable {
    // @unchecked: `task` and `done` are only touched under `lock`; `ready` is a semaphore.
    private let lock = NSLock()
    private let ready = DispatchSemaphore(value: 0)
    private var task: Task<[StoreLoadResult], Never>?
    private var done = false

    func set(_ task: Task<[StoreLoadResult], Never>) {
        lock.lock()
        self.task = task
        lock.unlock()
        ready.signal()
    }

    /// Waits (up to 10 s) for the task, then cancels it; later calls do nothing.
    func cancelOnce() {
        lock.lock()
        let first = !done
        done = true
        lock.unlock()
        guard first else { return }
        _ = ready.wait(timeout: .now() + 10)
        lock.lock()
        task?.cancel()
        lock.unlock()
    }
}

/// Load events, collected from any thread.
final class EventLog: @unchecked Sendable {
    // @unchecked: every access to `events` goes through `lock`.
    private let lock = NSLock()
    private var events: [StoreLoadEvent] = []

    func append(_ event: StoreLoadEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    /// The chain steps seen, as "V1->V2 inferred".
    var steps: [String] {
        lock.lock()
        defer { lock.unlock() }
        return events.compactMap { event in
            guard case let .migrationStep(_, _, from, to, custom) = event else { return nil }
            return "\(from)->\(to) \(custom ? "custom" : "inferred")"
        }
    }
}

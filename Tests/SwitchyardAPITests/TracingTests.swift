import Foundation
import Logging
import Switchyard
import Testing

/// Seeing what the library does, as Core Data's `-com.apple.CoreData.SQLDebug` shows it: a `Logger` given to
/// the coordinator receives store operations, SQL statements (arguments only when asked) and migration
/// decisions.
@Suite struct TracingTests {
    /// Collects what a `Logger` is sent.
    final class Lines: @unchecked Sendable {
        // @unchecked: `lines` is only touched under `lock`.
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    struct Capture: LogHandler {
        let lines: Lines
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let extra = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append("\(event.level) \(event.message) \(extra)")
        }
    }

    static func logger(_ lines: Lines, level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "test") { _ in Capture(lines: lines) }
        logger.logLevel = level
        return logger
    }

    static func run(_ backend: Backend, level: StoreTraceLevel, in dir: TempDir) throws -> [String] {
        let lines = Lines()
        let coordinator = StoreCoordinator(model: try Shop.model(), logger: Self.logger(lines))
        try backend.add(to: coordinator, configuration: "Main", in: dir.url, options: StoreOptions(traceLevel: level))
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "A-1", qty: 5)
        try context.save()
        _ = try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty > 31337")))
        _ = try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "code == 'A-1'")))
        // The temporary folder's random name (in "added store" lines) could spell a constant the tests look for.
        return lines.all.map { $0.replacingOccurrences(of: dir.url.path, with: "<dir>") }
    }

    /// The stores that trace: all but memory.
    static let tracing = Backend.persistent

    static func name(_ backend: Backend) -> String {
        switch backend {
        case .sqlite: "SQLite"
        case .lmdb: "LMDB"
        case .memory: "memory"
        case .postgresql: "PostgreSQL"
        }
    }

    @Test(arguments: tracing)
    func operationsAreTracedWithoutTheirConstants(_ backend: Backend) throws {
        let dir = try TempDir()
        let lines = try Self.run(backend, level: .operations, in: dir)
        let name = Self.name(backend)
        #expect(lines.contains { $0.contains("\(name) save: 1 inserts") && $0.contains(" ms") }, "\(lines)")
        #expect(lines.contains { $0.contains("\(name) fetch Order where (predicate") && $0.contains("0 rows in") }, "\(lines)")
        #expect(!lines.contains { $0.contains("31337") }, "constants stay hidden below level 3")
        #expect(!lines.contains { $0.contains("debug SQL ") }, "statements only from level 2")
    }

    /// SQLite and PostgreSQL: each statement with its duration; its arguments only at level 3.
    @Test(arguments: tracing.filter { $0 != .lmdb })
    func statementsAndThenArguments(_ backend: Backend) throws {
        let statements = try Self.run(backend, level: .statements, in: try TempDir())
        #expect(statements.contains { $0.contains("debug SQL ") && $0.contains("SELECT") }, "\(statements)")
        #expect(statements.contains { $0.contains("debug SQL ") && ($0.contains("INSERT") || $0.contains("COPY")) }, "\(statements)")
        #expect(!statements.contains { $0.contains("31337") })
        let arguments = try Self.run(backend, level: .arguments, in: try TempDir())
        #expect(arguments.contains { $0.contains("debug SQL ") && $0.contains("31337") }, "\(arguments)")
        #expect(arguments.contains { $0.contains("fetch Order where qty > 31337") })
    }

    /// LMDB's level 2: each write transaction's `mdb_put`/`mdb_del` calls with work and commit time, and each
    /// fetch's plan (the index it used, or a scan) with the rows it read; values only at level 3.
    @Test func transactionsAndPlansOnLMDB() throws {
        let lines = try Self.run(.lmdb, level: .statements, in: try TempDir())
        #expect(lines.contains { $0.contains("LMDB write transaction: ") && $0.contains("mdb_put") && $0.contains("commit") }, "\(lines)")
        // Order.qty is indexed: `qty > 31337` is no equality, so a scan; the save wrote the row, its index entries
        // and the key counter.
        #expect(lines.contains { $0.contains("LMDB fetch plan for Order: scan of Order; 1 rows read") }, "\(lines)")
        #expect(lines.contains { $0.contains("LMDB fetch plan for Order: index ") && $0.contains("for (1 value), covering the predicate; 1 rows read") }, "\(lines)")
        #expect(!lines.contains { $0.contains("31337") || $0.contains("A-1") })
        let context = try TempDir()
        let more = try Self.run(.lmdb, level: .arguments, in: context)
        #expect(more.contains { $0.contains("fetch Order where qty > 31337") }, "\(more)")
    }

    @Test(arguments: tracing)
    func nothingIsTracedByDefault(_ backend: Backend) throws {
        let lines = try Self.run(backend, level: .off, in: try TempDir())
        #expect(!lines.contains { $0.contains(" fetch ") || $0.contains("debug SQL ") })
        #expect(lines.contains { $0.contains("added store") }, "the coordinator's own events still arrive")
    }

    /// Why a store was judged migratable, and that it was migrated, reach the logger at `.info`.
    @Test(arguments: tracing)
    func migrationDecisionsAreLogged(_ backend: Backend) throws {
        let dir = try TempDir()
        try backend.add(to: StoreCoordinator(model: try Shop.model()), configuration: "Main", in: dir.url)
        var entities = try Shop.model().entities
        entities[entities.firstIndex { $0.name == "Tag" }!].attributes.append(AttributeDescription(name: "color", type: .string))
        let changed = try ObjectModel(
            entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: ["Customer", "Order", "Tag"])])
        let lines = Lines()
        try backend.add(to: StoreCoordinator(model: changed, logger: Self.logger(lines, level: .info)), configuration: "Main", in: dir.url)
        // The comparison before opening reads the store's files; a PostgreSQL store compares when it opens.
        if backend != .postgresql {
            #expect(lines.all.contains { $0.contains("stored model compared") && $0.contains("verdict=migratable") }, "\(lines.all)")
        }
        #expect(lines.all.contains { $0.contains("migrated store") && $0.contains("Tag") }, "\(lines.all)")
    }
}

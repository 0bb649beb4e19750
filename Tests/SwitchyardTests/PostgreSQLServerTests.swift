import Foundation
import Logging
import SwitchyardDifferential
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// Issue #15 point 3 on a real server: several processes sharing one PostgreSQL store, and everything that goes
/// wrong with a server — unreachable, wrong password, a database that is not a Switchyard store, the connection
/// lost in the middle of a save — each a clear error naming the store without its password, no partial save,
/// and the store usable again.
@Suite(.serialized) struct PostgreSQLServerTests {
    let dir = TemporaryDirectory()

    static func model() throws -> ObjectModel { try PostgresLoad.model() }

    /// A coordinator on a fresh store called `name`.
    func store(_ name: String, query: [URLQueryItem] = []) throws -> (StoreCoordinator, any PersistentStore, URL) {
        var parts = URLComponents(url: try dir.postgresURL(name), resolvingAgainstBaseURL: false)!
        parts.queryItems = (parts.queryItems ?? []) + query
        let coordinator = StoreCoordinator(model: try Self.model())
        let store = try coordinator.addStore(.postgreSQL, configuration: "Default", url: parts.url!)
        return (coordinator, store, parts.url!)
    }

    /// An administrator's connection to the test server.
    static func admin() throws -> PostgreSQLConnection {
        let base = try #require(TestServer.baseURL, "SWITCHYARD_POSTGRES_URL is unset: run `bash Tools/test.sh`")
        var location = try PostgreSQLLocation(base, configuration: "admin")
        location.tls = .disable
        return try PostgreSQLConnection(location, configuration: "admin", logger: Logger(label: "admin") { _ in SwiftLogNoOpLogHandler() })
    }

    // MARK: - Several processes

    @Test(.enabled(if: LMDBDurabilityTests.crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests`"), TestServer.needed)
    func eightProcessesWriteAndReadWithoutLosingOrDuplicating() throws {
        let helper = try #require(LMDBDurabilityTests.crashHelper)
        let (_, _, url) = try store("load")
        let report = try PostgresLoad.run(url: url, processes: 8, count: 200, executable: helper, arguments: ["pg-worker"])
        print("PostgreSQL load: \(report)")
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.rows == 1_600)
        #expect(report.lost == 0)
        #expect(report.duplicated == 0)
        #expect(report.reads == 8 * 20 * 2)
    }

    @Test(.enabled(if: LMDBDurabilityTests.crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests`"), TestServer.needed)
    func twoProcessesChangingOneObjectOneSavesTheOtherConflicts() throws {
        let helper = try #require(LMDBDurabilityTests.crashHelper)
        let (coordinator, _, url) = try store("conflict")
        let context = ObjectContext(coordinator: coordinator)
        let item = try context.insert("LoadItem")
        try item.set("worker", Int64(0))
        try item.set("seq", Int64(0))
        try item.set("label", "original")
        try context.save()
        var peers: [(Process, Pipe, Pipe)] = []
        for label in ["first", "second"] {
            let process = Process()
            process.executableURL = helper
            process.arguments = ["pg-conflict", url.absoluteString, label]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            peers.append((process, input, output))
        }
        // Both have read the object before either writes.
        for (_, _, output) in peers {
            let ready = String(decoding: output.fileHandleForReading.readLine(), as: UTF8.self)
            #expect(ready == "ready")
        }
        for (_, input, _) in peers { input.fileHandleForWriting.write(Data("go\n".utf8)) }
        var outcomes: [String] = []
        for (process, _, output) in peers {
            outcomes.append(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines))
            process.waitUntilExit()
        }
        #expect(outcomes.sorted() == ["conflict", "saved"], "\(outcomes)")
        // The winner's value is there, written once (version 2); nothing of the loser's save.
        let winner = outcomes[0] == "saved" ? "first" : "second"
        let reader = ObjectContext(coordinator: coordinator)
        let stored = try #require(try reader.fetch(FetchRequest(entityName: "LoadItem")).first)
        #expect(try stored.get("label", as: String.self) == winner)
        let row = try #require(try coordinator.stores[0].fetch(StoreFetchRequest(entityName: "LoadItem")).first)
        #expect(row.version == 2)
    }

    // MARK: - A server that is not there, or says no

    @Test func unreachableServerIsAClearErrorWithoutThePassword() throws {
        // A port nothing listens on: taken and released.
        let url = URL(string: "postgres://app:s3cret-word@127.0.0.1:\(Self.closedPort())/switchyard?sslmode=disable&connect_timeout=3")!
        let coordinator = StoreCoordinator(model: try Self.model())
        do {
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
            Issue.record("a store on a closed port opened")
        } catch let error as StoreError {
            let text = error.localizedDescription
            #expect(text.contains("postgres://app@127.0.0.1:"), "\(text)")
            #expect(text.contains("cannot reach the server"), "\(text)")
            #expect(!text.contains("s3cret-word"), "\(text)")
            #expect(error.configuration == "Default")
        }
        #expect(coordinator.stores.isEmpty)
    }

    @Test(TestServer.needed) func wrongPasswordIsAClearErrorWithoutThePassword() throws {
        // Tools/postgres.sh makes this role, which must give its password over TCP.
        let admin = try Self.admin()
        try admin.execute("""
            DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'switchyard_pw') THEN
                CREATE ROLE switchyard_pw LOGIN PASSWORD 'right-password';
              END IF;
            END $$
            """)
        let base = try #require(TestServer.baseURL)
        var parts = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        parts.user = "switchyard_pw"
        parts.password = "wrong-password"
        parts.queryItems = [URLQueryItem(name: "sslmode", value: "disable"), URLQueryItem(name: "schema", value: "pw_test")]
        let coordinator = StoreCoordinator(model: try Self.model())
        do {
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: parts.url!)
            Issue.record("the wrong password was accepted (the server must ask switchyard_pw for a password over TCP)")
        } catch let error as StoreError {
            let text = error.localizedDescription
            guard case let .postgreSQL(_, _, _, code, _) = error else { Issue.record("\(error)"); return }
            #expect(code == "28P01", "\(text)")
            #expect(text.contains("authentication failed for user switchyard_pw"), "\(text)")
            #expect(!text.contains("wrong-password"), "\(text)")
        }
    }

    @Test(TestServer.needed) func aSchemaOfSomethingElseIsNotAStoreAndIsLeftAlone() throws {
        let url = try dir.postgresURL("foreign")
        let schema = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "schema" }?.value)
        let admin = try Self.admin()
        try admin.execute("CREATE SCHEMA \(PostgreSQLConnection.quote(schema))")
        try admin.execute("CREATE TABLE \(PostgreSQLConnection.quote(schema)).people (id integer, name text)")
        try admin.execute("INSERT INTO \(PostgreSQLConnection.quote(schema)).people VALUES (1, 'Ada')")
        let coordinator = StoreCoordinator(model: try Self.model())
        do {
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
            Issue.record("a schema holding someone else's table opened as a store")
        } catch let error as StoreError {
            guard case let .notAStore(path, expected, reason) = error else { Issue.record("\(error)"); return }
            #expect(expected == .postgreSQL)
            #expect(path.contains("schema=\(schema)"))
            #expect(reason.contains("PEOPLE") || reason.contains("people"), "\(reason)")
        }
        let rows = try admin.query("SELECT count(*) FROM \(PostgreSQLConnection.quote(schema)).people")
        #expect(try rows.first?.makeRandomAccess().integer(0) == 1)
        let tables = try admin.query(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", [.text(schema)])
        #expect(try tables.first?.makeRandomAccess().integer(0) == 1)
    }

    // MARK: - Connections lost mid-save

    @Test(TestServer.needed) func connectionLostMidSaveKeepsNothingAndTheStoreWorksAgain() throws {
        let application = "switchyard-test-\(UUID().uuidString.prefix(8))"
        let (coordinator, store, _) = try store("midsave", query: [URLQueryItem(name: "application_name", value: application)])
        let context = ObjectContext(coordinator: coordinator)
        for seq in 0..<50 {
            let item = try context.insert("LoadItem")
            try item.set("worker", Int64(1))
            try item.set("seq", Int64(seq))
        }
        try context.save()
        // A save large enough to be in flight when its connection is killed.
        let big = StoreChangeSet(inserts: (0..<200_000).map { i in
            StoreRow(entityName: "LoadItem", primaryKey: 1_000_000 + Int64(i), values: ["worker": .integer(2), "seq": .integer(Int64(i)), "label": .string(String(repeating: "x", count: 40))])
        })
        let outcome = Locked<Result<Void, any Error>?>(nil)
        let saver = Thread {
            let result = Result { try store.save(big) }
            outcome.withLock { $0 = result }
        }
        saver.start()
        let admin = try Self.admin()
        var killed = 0
        let deadline = Date().addingTimeInterval(20)
        while outcome.withLock({ $0 == nil }) && Date() < deadline {
            let rows = try admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state IN ('active', 'idle in transaction')",
                [.text(application)])
            killed += rows.count
            if killed > 0 { break }
            Thread.sleep(forTimeInterval: 0.005)
        }
        while outcome.withLock({ $0 == nil }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(killed > 0, "the save finished before its connection could be terminated")
        guard case .failure(let failure)? = outcome.withLock({ $0 }) else {
            Issue.record("the save succeeded although its connection was terminated")
            return
        }
        let text = "\(failure)"
        #expect(text.contains(application) || text.contains("postgres://"), "\(text)")
        #expect(failure is StoreError, "\(failure)")
        // Nothing of the interrupted save; the store answers and saves again.
        #expect(try store.count(StoreFetchRequest(entityName: "LoadItem")) == 50)
        let again = try context.insert("LoadItem")
        try again.set("worker", Int64(3))
        try again.set("seq", Int64(0))
        try context.save()
        #expect(try store.count(StoreFetchRequest(entityName: "LoadItem")) == 51)
    }

    @Test(.enabled(if: PrivateCluster.binDirectory != nil && !TestServer.isSkipped, "needs PostgreSQL's server programs (Tools/test.sh installs them)"))
    func serverRestartedMidSaveKeepsNothingAndTheStoreWorksAgain() throws {
        // A cluster of the test's own: the restart must not disturb the tests sharing the test server.
        let cluster = try PrivateCluster()
        defer { cluster.stop() }
        let application = "switchyard-test-\(UUID().uuidString.prefix(8))"
        let coordinator = StoreCoordinator(model: try Self.model())
        let store = try coordinator.addStore(
            .postgreSQL, configuration: "Default",
            url: cluster.url(schema: "restart", query: [URLQueryItem(name: "application_name", value: application)]))
        let context = ObjectContext(coordinator: coordinator)
        let first = try context.insert("LoadItem")
        try first.set("worker", Int64(1))
        try first.set("seq", Int64(0))
        try context.save()
        let big = StoreChangeSet(inserts: (0..<200_000).map { i in
            StoreRow(entityName: "LoadItem", primaryKey: 1_000_000 + Int64(i), values: ["worker": .integer(2), "seq": .integer(Int64(i))])
        })
        let outcome = Locked<Result<Void, any Error>?>(nil)
        let saver = Thread {
            let result = Result { try store.save(big) }
            outcome.withLock { $0 = result }
        }
        saver.start()
        // Restart once the save's transaction is open on the server.
        let admin = try cluster.admin()
        while outcome.withLock({ $0 == nil }) {
            let inSave = try admin.query(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state IN ('active', 'idle in transaction')",
                [.text(application)])
            if !inSave.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.005)
        }
        #expect(cluster.pgCtl("restart") == 0)
        while outcome.withLock({ $0 == nil }) { Thread.sleep(forTimeInterval: 0.01) }
        switch outcome.withLock({ $0 }) {
        case .success?, nil: Issue.record("the save finished before the restart: make it bigger")
        case .failure(let error)?:
            let text = error.localizedDescription
            #expect(error is StoreError, "\(error)")
            #expect(text.contains("postgres://switchyard@127.0.0.1"), "\(text)")
            #expect(text.contains("Default"), "\(text)")
            #expect(text.contains("nothing of an unfinished save was kept") || text.contains("57P01"), "\(text)")
        }
        #expect(try store.count(StoreFetchRequest(entityName: "LoadItem")) == 1)
        let again = try context.insert("LoadItem")
        try again.set("worker", Int64(3))
        try again.set("seq", Int64(0))
        try context.save()
        #expect(try store.count(StoreFetchRequest(entityName: "LoadItem")) == 2)
    }

    @Test(.enabled(if: PrivateCluster.binDirectory != nil && !TestServer.isSkipped, "needs PostgreSQL's server programs (Tools/test.sh installs them)"))
    func aServerThatGoesAwayIsAClearErrorAndTheStoreWorksOnceItIsBack() throws {
        let cluster = try PrivateCluster()
        defer { cluster.stop() }
        let coordinator = StoreCoordinator(model: try Self.model())
        let store = try coordinator.addStore(
            .postgreSQL, configuration: "Default",
            url: cluster.url(schema: "down", query: [URLQueryItem(name: "connect_timeout", value: "3")]))
        let context = ObjectContext(coordinator: coordinator)
        let first = try context.insert("LoadItem")
        try first.set("worker", Int64(1))
        try first.set("seq", Int64(0))
        try context.save()
        #expect(cluster.pgCtl("stop") == 0)
        // Down: the save and a fetch fail, naming the store; the object stays pending in the context.
        let pending = try context.insert("LoadItem")
        try pending.set("worker", Int64(2))
        try pending.set("seq", Int64(0))
        var failures: [any Error] = []
        do { try context.save() } catch { failures.append(error) }
        do { _ = try store.count(StoreFetchRequest(entityName: "LoadItem")) } catch { failures.append(error) }
        #expect(cluster.pgCtl("start") == 0)
        #expect(failures.count == 2)
        for error in failures {
            let text = error.localizedDescription
            #expect(text.contains("postgres://switchyard@127.0.0.1"), "\(text)")
            #expect(text.contains("cannot reach the server") || text.contains("was closed"), "\(text)")
        }
        #expect(context.hasChanges)
        // Back: the same context saves what it kept, through the same store.
        try context.save()
        #expect(try store.count(StoreFetchRequest(entityName: "LoadItem")) == 2)
    }

    /// Runs `path` with `arguments` (standard streams to /dev/null) and returns its exit status.
    static func spawnAndWait(_ path: String, _ arguments: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status >> 8) & 0xFF
    }

    /// A loopback port nothing listens on.
    static func closedPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension FileHandle {
    /// Bytes up to the next newline (without it).
    func readLine() -> Data {
        var line = Data()
        while true {
            let byte = readData(ofLength: 1)
            if byte.isEmpty || byte[0] == 0x0A { return line }
            line.append(byte)
        }
    }
}

extension PostgreSQLServerTests {
    // MARK: - Reading values

    /// A NUMERIC's NaN and ±Infinity read as the double a REAL column holds (the driver's Decimal reads them
    /// as 0), so a decimal column whose legacy source held them is not silently zeroed; ordinary values stay
    /// exact.
    @Test(TestServer.needed) func numericSpecialValuesAreNotReadAsZero() throws {
        let row = try #require(try PostgreSQLServerTests.admin().query(
            "SELECT 'NaN'::numeric, 'Infinity'::numeric, '-Infinity'::numeric, 12.5::numeric, 9007199254740993::numeric, 0::numeric"
        ).first).makeRandomAccess()
        guard case .real(let nan) = try row.columnValue(0) else { Issue.record("NaN: \(try row.columnValue(0))"); return }
        #expect(nan.isNaN)
        #expect(try row.columnValue(1) == .real(Double.infinity))
        #expect(try row.columnValue(2) == .real(-Double.infinity))
        #expect(try row.columnValue(3) == .real(12.5))
        #expect(try row.columnValue(4) == .integer(9_007_199_254_740_993))
        #expect(try row.columnValue(5) == .integer(0))
        // Read into a decimal attribute they become Decimal's NaN (it has no infinity): no trap, no silent 0.
        for index in 0..<3 {
            guard case .decimal(let decimal) = try row.columnValue(index).decode(as: .decimal) else {
                Issue.record("column \(index) as a decimal: \(try row.columnValue(index).decode(as: .decimal))")
                continue
            }
            #expect(decimal.isNaN)
        }
        #expect(try row.columnValue(3).decode(as: .decimal) == .decimal(Decimal(string: "12.5")!))
    }
}

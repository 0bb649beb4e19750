import Foundation
import Logging
import SwitchyardDifferential
import SwitchyardStores
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// Issue #15 point 3: the connection pool's size and TLS chosen in `StoreOptions` (or the URL), seen from the
/// server's side (`pg_stat_activity`, `pg_stat_ssl`); and a password that never reaches an error or a log line.
/// The TLS cases need the throwaway cluster's self-signed certificate (`SWITCHYARD_PG_CA`, which
/// `Tools/postgres.sh` makes; CI always has it).
@Suite(.serialized) struct PostgreSQLConnectionOptionsTests {
    let dir = TemporaryDirectory()
    static let certificate = ProcessInfo.processInfo.environment["SWITCHYARD_PG_CA"].map(URL.init(fileURLWithPath:))
    static let isThrowawayCluster = ProcessInfo.processInfo.environment["SWITCHYARD_PG_DIR"] != nil

    /// The URL of store `name` with `query` in place of the test defaults (`sslmode=disable`), and a unique
    /// `application_name` to find its connections on the server.
    func url(_ name: String, _ query: [URLQueryItem] = [], user: String? = nil, password: String? = nil) throws -> (URL, String) {
        let application = "sy-options-\(UUID().uuidString.prefix(8))"
        var parts = URLComponents(url: try dir.postgresURL(name), resolvingAgainstBaseURL: false)!
        let replaced = Set(query.map(\.name))
        parts.queryItems = (parts.queryItems ?? []).filter { !replaced.contains($0.name) } + query
            + [URLQueryItem(name: "application_name", value: application)]
        if let user { parts.user = user }
        if let password { parts.password = password }
        return (parts.url!, application)
    }

    /// The server's view of the connections named `application`: how many, and how many use TLS.
    static func connections(_ application: String, admin given: PostgreSQLConnection? = nil) throws -> (open: Int, encrypted: Int) {
        let admin = try given ?? PostgreSQLServerTests.admin()
        let rows = try admin.query(
            "SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s ON s.pid = a.pid WHERE a.application_name = $1",
            [.text(application)])
        let encrypted = try rows.filter { try $0.makeRandomAccess().integer(0) == 1 }.count
        return (rows.count, encrypted)
    }

    /// Inserts and saves one object through a context, then fetches every object; the count fetched.
    @discardableResult
    static func roundTrip(_ coordinator: StoreCoordinator) throws -> Int {
        let context = ObjectContext(coordinator: coordinator)
        let item = try context.insert("LoadItem")
        try item.set("worker", Int64(1))
        try item.set("seq", Int64(Int.random(in: 0..<1_000_000)))
        try context.save()
        return try context.fetch(FetchRequest(entityName: "LoadItem")).count
    }

    // MARK: - Pool size

    @Test(TestServer.needed) func thePoolSizeInTheOptionsBoundsTheConnectionsAndOverridesTheURL() throws {
        let (url, application) = try url("pool", [URLQueryItem(name: "pool_size", value: "8")])
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        let store = try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(connectionPoolSize: 2))
        // Six threads fetching at once: the pool opens connections up to its size and no more.
        let stop = Locked(false)
        let failures = Locked<[String]>([])
        let running = Locked(6)
        let threads = (0..<6).map { _ in
            Thread {
                defer { running.withLock { $0 -= 1 } }
                while !stop.withLock({ $0 }) {
                    do { _ = try store.count(StoreFetchRequest(entityName: "LoadItem")) } catch {
                        failures.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }
        }
        for thread in threads { thread.start() }
        let admin = try PostgreSQLServerTests.admin()
        var most = 0
        let deadline = Date().addingTimeInterval(1.5)
        while Date() < deadline {
            most = max(most, try Self.connections(application, admin: admin).open)
            Thread.sleep(forTimeInterval: 0.01)
        }
        stop.withLock { $0 = true }
        while running.withLock({ $0 }) > 0 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(most == 2, "the server saw at most \(most) connections of a pool of 2 (URL said 8)")
    }

    @Test(TestServer.needed) func aPoolSizeOutOfRangeIsAClearError() throws {
        let (url, _) = try url("pool_bad")
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        #expect {
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(connectionPoolSize: 0))
        } throws: { error in
            let text = (error as? StoreError)?.localizedDescription ?? ""
            return text.contains("connectionPoolSize 0 is not from 1 to 256") && text.contains("postgres://switchyard@")
        }
    }

    // MARK: - TLS

    @Test(.enabled(if: certificate != nil, "needs SWITCHYARD_PG_CA: Tools/postgres.sh's cluster"))
    func tlsRequiredAndTrustingTheServersCertificateEncryptsEveryConnection() throws {
        let (url, application) = try url("tls")
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        try coordinator.addStore(
            .postgreSQL, configuration: "Default", url: url, options: StoreOptions(tls: .require(trusting: Self.certificate!)))
        #expect(try Self.roundTrip(coordinator) == 1)
        let seen = try Self.connections(application)
        #expect(seen.open >= 1)
        #expect(seen.encrypted == seen.open)
    }

    @Test(.enabled(if: certificate != nil, "needs SWITCHYARD_PG_CA: Tools/postgres.sh's cluster"))
    func tlsFromTheURLWorksAsTheOptionsDo() throws {
        let (url, application) = try url("tls_url", [
            URLQueryItem(name: "sslmode", value: "verify-full"), URLQueryItem(name: "sslrootcert", value: Self.certificate!.path),
        ])
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
        #expect(try Self.roundTrip(coordinator) == 1)
        let seen = try Self.connections(application)
        #expect(seen.open >= 1 && seen.encrypted == seen.open)
    }

    @Test(.enabled(if: certificate != nil, "needs SWITCHYARD_PG_CA: Tools/postgres.sh's cluster"))
    func preferEncryptsWithoutVerifyingAndDisableStaysPlain() throws {
        let (preferred, preferredApp) = try url("tls_prefer", [URLQueryItem(name: "sslmode", value: "prefer")])
        let (plain, plainApp) = try url("tls_plain")
        let one = StoreCoordinator(model: try PostgreSQLServerTests.model())
        try one.addStore(.postgreSQL, configuration: "Default", url: preferred)
        let two = StoreCoordinator(model: try PostgreSQLServerTests.model())
        // The options win over the URL's sslmode=disable... and say disable again: plain.
        try two.addStore(.postgreSQL, configuration: "Default", url: plain, options: StoreOptions(tls: .disable))
        try Self.roundTrip(one)
        try Self.roundTrip(two)
        let (p, q) = (try Self.connections(preferredApp), try Self.connections(plainApp))
        #expect(p.open >= 1 && p.encrypted == p.open)
        #expect(q.open >= 1 && q.encrypted == 0)
    }

    @Test(.enabled(if: certificate != nil, "needs SWITCHYARD_PG_CA: Tools/postgres.sh's cluster"))
    func tlsRequiredWithACertificateNobodyTrustsIsRefusedClearly() throws {
        // The system's roots do not sign the cluster's self-signed certificate.
        let (url, application) = try url("tls_untrusted", password: "s3cret-word")
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        do {
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(tls: .require()))
            Issue.record("a certificate no root signs was accepted")
        } catch let error as StoreError {
            let text = error.localizedDescription
            #expect(text.contains("postgres://switchyard@127.0.0.1"), "\(text)")
            #expect(text.lowercased().contains("certificate"), "\(text)")
            #expect(text.contains("Default"), "\(text)")
            #expect(!text.contains("s3cret-word"), "\(text)")
        }
        #expect(coordinator.stores.isEmpty)
        #expect(try Self.connections(application).open == 0)
    }

    @Test(TestServer.needed) func tlsWithAMissingCertificateFileIsAClearError() throws {
        let (url, _) = try url("tls_missing")
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        #expect {
            try coordinator.addStore(
                .postgreSQL, configuration: "Default", url: url,
                options: StoreOptions(tls: .require(trusting: URL(fileURLWithPath: "/nonexistent/ca.pem"))))
        } throws: { error in
            let text = (error as? StoreError)?.localizedDescription ?? ""
            return text.contains("/nonexistent/ca.pem") && text.contains("cannot be read")
        }
    }

    /// The connections that look for, drop or swap a store's tables (a split's outputs, a migration chain's
    /// custom step) take TLS from the options as the store does, not from the URL alone: with a URL that says
    /// `sslmode=disable`, options trusting a missing file fail clearly, options trusting the cluster's CA work.
    @Test(.enabled(if: certificate != nil, "needs SWITCHYARD_PG_CA: Tools/postgres.sh's cluster"))
    func administrativeConnectionsTakeTheOptionsTLS() throws {
        let (url, _) = try url("tls_admin")
        let trusted = StoreOptions(tls: .require(trusting: Self.certificate!))
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: trusted)
        #expect(try StoreFileSet.storeExists(at: url, type: .postgreSQL, options: trusted))
        #expect {
            try StoreFileSet.storeExists(
                at: url, type: .postgreSQL, options: StoreOptions(tls: .require(trusting: URL(fileURLWithPath: "/nonexistent/admin-ca.pem"))))
        } throws: { error in
            ((error as? StoreError)?.localizedDescription ?? "").contains("/nonexistent/admin-ca.pem")
        }
    }

    /// The tests' guard against a server elsewhere: loopback addresses pass, a host name beginning "127." does not.
    @Test func theTestsOnlyAcceptAServerOnThisMachine() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"] { #expect(LoopbackHost.contains(host), "\(host)") }
        for host in ["127.evil.example", "127.0.0", "127.0.0.256", "10.0.0.1", "db.internal", "", "127.0.0.1.example"] {
            #expect(!LoopbackHost.contains(host), "\(host)")
        }
    }

    // MARK: - Credentials

    @Test(.enabled(if: isThrowawayCluster, "needs Tools/postgres.sh's password role switchyard_pw"))
    func thePasswordNeverReachesALogLineOrAnError() throws {
        let lines = LogCapture()
        let logger = Logger(label: "switchyard.postgresql") { _ in lines.handler() }
        let (url, _) = try url("password", user: "switchyard_pw", password: "right-password")
        // Opened, used, failed: every path that logs or throws, at trace level.
        let store = try PostgreSQLStore(url: url, model: try PostgreSQLServerTests.model(), configuration: "Default", logger: logger)
        let coordinator = StoreCoordinator(model: try PostgreSQLServerTests.model())
        try coordinator.addStore(store)
        try Self.roundTrip(coordinator)
        var errors: [String] = []
        do {
            _ = try store.count(StoreFetchRequest(entityName: "LoadItem", predicate: FetchPredicate(format: "nosuch == 1")))
        } catch { errors.append("\(error) \(error.localizedDescription)") }
        var wrong = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        wrong.password = "wrong-password"
        do {
            _ = try PostgreSQLStore(url: wrong.url!, model: try PostgreSQLServerTests.model(), configuration: "Default", logger: logger)
        } catch { errors.append("\(error) \(error.localizedDescription)") }
        #expect(errors.count == 2)
        #expect(lines.count > 10, "the driver logged \(lines.count) lines at trace level")
        for text in lines.all + errors {
            #expect(!text.contains("right-password") && !text.contains("wrong-password"), "\(text)")
        }
        #expect(errors.last?.contains("postgres://switchyard_pw@127.0.0.1") == true, "\(errors)")
    }
}

/// A log handler keeping every line (message and metadata) at trace level, shared by the handlers it makes.
final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var count: Int { lines.withLock { $0.count } }

    func handler() -> some LogHandler { Handler(capture: self) }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(
            level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String,
            file: String, function: String, line: UInt
        ) {
            let merged = metadata.merging(extra ?? [:]) { $1 }
            capture.lines.withLock { $0.append("\(level) \(message) \(merged)") }
        }
    }
}

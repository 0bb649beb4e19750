import Foundation
import SwitchyardDifferential
import Logging
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// The PostgreSQL server the tests use: `SWITCHYARD_POSTGRES_URL`, which `Tools/test.sh` sets to a throwaway
/// cluster on a loopback port. Without it the PostgreSQL cases fail with a message saying so (they never skip
/// silently); `SWITCHYARD_SKIP_POSTGRES=1` leaves them out on purpose, and says so once.
enum TestServer {
    static let baseURL: URL? = ProcessInfo.processInfo.environment["SWITCHYARD_POSTGRES_URL"].flatMap(URL.init(string:))

    static let isSkipped: Bool = {
        let skipped = ProcessInfo.processInfo.environment["SWITCHYARD_SKIP_POSTGRES"] == "1"
        if skipped { print("note: SWITCHYARD_SKIP_POSTGRES=1: the PostgreSQL cases are left out of this run") }
        return skipped
    }()

    /// The trait of a test that needs the server: left out with `SWITCHYARD_SKIP_POSTGRES=1`, as the PostgreSQL
    /// cases of tests parameterized over backends are (without the variable and a server it fails, saying why).
    static var needed: ConditionTrait {
        .enabled(if: !isSkipped, "SWITCHYARD_SKIP_POSTGRES=1 leaves out the tests that need a PostgreSQL server")
    }

    /// The URL of a store in its own schema, named after `owner` (a test's temporary directory) and `name`, so
    /// reopening the same name reaches the same store.
    static func url(owner: String, name: String) throws -> URL {
        guard let base = baseURL else {
            throw StoreError.openFailed(
                path: "postgres://(SWITCHYARD_POSTGRES_URL unset)", configuration: name,
                reason: "the PostgreSQL tests need a server: run `bash Tools/test.sh` (it starts a throwaway one), set "
                    + "SWITCHYARD_POSTGRES_URL=postgres://user@127.0.0.1:PORT/DATABASE, or SWITCHYARD_SKIP_POSTGRES=1 to leave them out")
        }
        guard let host = base.host, LoopbackHost.contains(host) else {
            throw StoreError.openFailed(
                path: "postgres://\(base.host ?? "?")", configuration: name,
                reason: "SWITCHYARD_POSTGRES_URL names a server on another machine; the tests only use one on this machine (127.0.0.1, ::1, localhost)")
        }
        let cleaned = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(30))
        var parts = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        parts.queryItems = (parts.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: "t_\(owner.prefix(12))_\(cleaned)")]
        if !(parts.queryItems ?? []).contains(where: { $0.name == "sslmode" }) {
            parts.queryItems?.append(URLQueryItem(name: "sslmode", value: "disable"))
        }
        return parts.url!
    }

    /// Drops the schemas of `owner`'s stores (a test's temporary directory going away).
    static func dropSchemas(owner: String) {
        guard let base = baseURL, let location = try? PostgreSQLLocation(base, configuration: "tests") else { return }
        var plain = location
        plain.tls = .disable
        guard let connection = try? PostgreSQLConnection(plain, configuration: "tests", logger: .init(label: "tests") { _ in SwiftLogNoOpLogHandler() }),
            let rows = try? connection.query(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1", [.text("t_\(owner.prefix(12))_%")])
        else { return }
        for row in rows {
            guard let value = try? row.makeRandomAccess().columnValue(0), case .text(let schema) = value else { continue }
            try? connection.execute("DROP SCHEMA IF EXISTS \(PostgreSQLConnection.quote(schema)) CASCADE")
        }
    }
}

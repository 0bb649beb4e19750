import Foundation
import SwitchyardStores

// MARK: - PostgreSQLLocation

/// Where a PostgreSQL store lives and how to reach it, read from its URL in libpq's spelling:
///
/// ```
/// postgres://user:password@host:5432/database?schema=cloud&sslmode=require&pool_size=8&connect_timeout=10
/// ```
///
/// - `schema` (default `public`): the PostgreSQL schema holding the store's tables, so several stores can share
///   one database.
/// - `sslmode`: `disable`, `prefer` (the default, as libpq: TLS when offered, unverified) or `require`
///   (`verify-ca` and `verify-full` are read as `require`, which always verifies the certificate and host name).
/// - `sslrootcert`: a PEM file of the certificates that sign the server's (default: the system's roots).
/// - `pool_size` (default 4): the most connections the store opens at once.
/// - `connect_timeout` (seconds, default 10).
/// - `application_name`: shown in `pg_stat_activity`.
///
/// `StoreOptions.connectionPoolSize` and `StoreOptions.tls`, when set, take the place of `pool_size` and of
/// `sslmode` with `sslrootcert`.
struct PostgreSQLLocation: Sendable, Hashable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    var schema: String
    var tls: StoreTLS
    var poolSize: Int
    var connectTimeout: Int
    var applicationName: String
    /// The URL without its password, for every message.
    var display: String

    /// Parses `url`; a URL that is not a usable PostgreSQL address is `StoreError.openFailed` naming what is wrong
    /// (and never the password).
    init(_ url: URL, configuration: String, options: StoreOptions = .default) throws {
        let display = StoreDescription.displayLocation(type: .postgreSQL, url: url, configuration: configuration)
        func bad(_ reason: String) -> StoreError {
            StoreError.openFailed(path: display, configuration: configuration, reason: reason)
        }
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw bad("not a URL") }
        guard let scheme = parts.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw bad("a PostgreSQL store's URL starts with postgres:// (got \(parts.scheme.map { "\($0)://" } ?? "no scheme"))")
        }
        guard let host = parts.host, !host.isEmpty else { throw bad("the URL names no host (postgres://user@host:port/database)") }
        guard let user = parts.user, !user.isEmpty else { throw bad("the URL names no user (postgres://user@host:port/database)") }
        let database = String(parts.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw bad("the URL names no database (postgres://user@host:port/database)")
        }
        var query: [String: String] = [:]
        for item in parts.queryItems ?? [] { query[item.name.lowercased()] = item.value ?? "" }
        let known: Set<String> = [
            "schema", "sslmode", "sslrootcert", "pool_size", "connect_timeout", "application_name", "password",
        ]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw bad("unknown URL parameter '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        func positive(_ name: String, default value: Int, max: Int) throws -> Int {
            guard let text = query[name] else { return value }
            guard let n = Int(text), n > 0, n <= max else { throw bad("\(name)=\(text) is not a whole number from 1 to \(max)") }
            return n
        }
        let schema = query["schema"] ?? "public"
        guard !schema.isEmpty, schema.utf8.count <= 63 else { throw bad("schema '\(schema)' is empty or longer than 63 bytes") }
        var tls: StoreTLS
        switch (query["sslmode"] ?? "prefer").lowercased() {
        case "disable", "allow": tls = .disable
        case "prefer": tls = .prefer
        case "require", "verify-ca", "verify-full": tls = .require()
        case let other: throw bad("sslmode=\(other) is not one of disable, prefer, require, verify-ca, verify-full")
        }
        if let path = query["sslrootcert"], !path.isEmpty { tls.rootCertificates = URL(fileURLWithPath: path) }
        if let chosen = options.tls { tls = chosen }
        if tls.mode == .require, let roots = tls.rootCertificates, !FileManager.default.isReadableFile(atPath: roots.path) {
            throw bad("the TLS root certificates file \(roots.path) does not exist or cannot be read")
        }
        // An IPv6 literal comes bracketed from the URL ([::1]); the resolver wants it bare.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = try parts.port.map { port in
            guard (1...65535).contains(port) else { throw bad("port \(port) is out of range") }
            return port
        } ?? 5432
        self.user = user
        self.password = parts.password ?? query["password"]
        self.database = database
        self.schema = schema
        self.tls = tls
        if let size = options.connectionPoolSize {
            guard (1...256).contains(size) else { throw bad("connectionPoolSize \(size) is not from 1 to 256") }
            self.poolSize = size
        } else {
            self.poolSize = try positive("pool_size", default: 4, max: 256)
        }
        self.connectTimeout = try positive("connect_timeout", default: 10, max: 3600)
        self.applicationName = query["application_name"] ?? "Switchyard"
        self.display = display
    }
}

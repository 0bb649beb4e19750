import Foundation
import Logging
import Testing
@testable import SwitchyardPostgreSQL

/// A PostgreSQL cluster of one test's own, for the tests that stop or restart the server: the shared test server
/// keeps serving every other test meanwhile. Created with the same PostgreSQL as `Tools/postgres.sh` in a
/// temporary folder, on a loopback port, as the `postgres` user when the tests run as root; stopped and removed
/// in `deinit`.
final class PrivateCluster {
    let directory: URL
    let port: Int
    let bin: URL

    /// The PostgreSQL programs: `SWITCHYARD_PG_BIN`, else the newest `/usr/lib/postgresql/*/bin` with `initdb`.
    static let binDirectory: URL? = {
        if let bin = ProcessInfo.processInfo.environment["SWITCHYARD_PG_BIN"] { return URL(fileURLWithPath: bin) }
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.sorted().reversed().map { root.appendingPathComponent($0).appendingPathComponent("bin") }
            .first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) }
    }()

    /// The URL of a store in `schema` on this cluster.
    func url(schema: String, query: [URLQueryItem] = []) -> URL {
        var parts = URLComponents(string: "postgres://switchyard@127.0.0.1:\(port)/postgres")!
        parts.queryItems = [URLQueryItem(name: "schema", value: schema), URLQueryItem(name: "sslmode", value: "disable")] + query
        return parts.url!
    }

    /// An administrator's connection to this cluster.
    func admin() throws -> PostgreSQLConnection {
        try PostgreSQLConnection(
            PostgreSQLLocation(url(schema: "public"), configuration: "admin"), configuration: "admin",
            logger: Logger(label: "admin") { _ in SwiftLogNoOpLogHandler() })
    }

    init() throws {
        bin = try #require(Self.binDirectory, "no PostgreSQL server programs: run `bash Tools/test.sh`, which installs them")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-private-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory.path)
        }
        port = PostgreSQLServerTests.closedPort()
        let data = directory.appendingPathComponent("data").path
        try Self.check("initdb", run("initdb", ["-D", data, "-U", "switchyard", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]))
        let settings = """

            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(directory.path)'
            max_connections = 40
            fsync = off

            """
        let conf = try FileHandle(forWritingTo: URL(fileURLWithPath: data).appendingPathComponent("postgresql.conf"))
        try conf.seekToEnd()
        try conf.write(contentsOf: Data(settings.utf8))
        try conf.close()
        try Self.check("pg_ctl start", pgCtl("start"))
    }

    deinit { stop() }

    /// Stops the server and removes its folder (again in `deinit`, for a test that throws first).
    func stop() {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        _ = pgCtl("stop", mode: "immediate")
        try? FileManager.default.removeItem(at: directory)
    }

    /// `pg_ctl <action>` on this cluster, waiting for it to finish; its exit status.
    func pgCtl(_ action: String, mode: String = "fast") -> Int32 {
        let data = directory.appendingPathComponent("data").path
        return run("pg_ctl", ["-D", data, "-l", directory.appendingPathComponent("server.log").path, "-m", mode, "-w", action])
    }

    private func run(_ program: String, _ arguments: [String]) -> Int32 {
        let path = bin.appendingPathComponent(program).path
        // posix_spawn and waitpid, not Foundation's Process: a started server inherits the child's descriptors,
        // and Process waits for them to close (that is, for the server to stop).
        return getuid() == 0
            ? PostgreSQLServerTests.spawnAndWait("/usr/sbin/runuser", ["-u", "postgres", "--", path] + arguments)
            : PostgreSQLServerTests.spawnAndWait(path, arguments)
    }

    private static func check(_ step: String, _ status: Int32) throws {
        if status != 0 { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "private cluster: \(step) exited \(status)"]) }
    }
}

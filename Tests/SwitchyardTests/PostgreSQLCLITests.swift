import Foundation
import Testing
@testable import Switchyard
import SwitchyardPostgreSQL

/// `storesplit --store Cloud=postgres://…` and `storeinspect postgres://…` as built binaries (built with the
/// package's PostgreSQL trait, as `Tools/test.sh` builds them; without it these fail saying so).
@Suite struct PostgreSQLCLITests {
    static let enabled = CLITests.built && !TestServer.isSkipped

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(.enabled(if: enabled, "storesplit not built in .build/debug, or SWITCHYARD_SKIP_POSTGRES=1"))
    func storesplitWritesCloudToPostgreSQLAndStoreinspectReadsIt() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source, messages: 400)
        var parts = URLComponents(url: try temp.postgresURL("cli_cloud"), resolvingAgainstBaseURL: false)!
        parts.password = "not-shown"
        let cloud = parts.url!.absoluteString
        let stores = ["Cloud=\(cloud)", "Local=\(temp.file("Local.sqlite").path)", "Cache=\(temp.file("Cache.lmdb").path)"]
            .flatMap { ["--store", $0] }
        let run = try CLITests.run("storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--verify", "--json"] + stores)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try json(run.stdout)
        #expect(report["contentVerified"] as? Bool == true)
        let outputs = try #require(report["outputs"] as? [[String: Any]])
        let path = try #require(outputs.first { $0["configuration"] as? String == "Cloud" }?["path"] as? String)
        #expect(path.hasPrefix("postgres://") && path.contains("schema="))
        #expect(!run.stdout.contains("not-shown") && !run.stderr.contains("not-shown"))

        // Again without --force: the Cloud store is there, so the run refuses (exit 2), naming it without the password.
        let again = try CLITests.run("storesplit", [source.path, "--model", LegacyMessenger.targetURL.path] + stores)
        #expect(again.status == 2)
        #expect(again.stderr.hasPrefix("storesplit: ") && again.stderr.contains("already exists") && !again.stderr.contains("not-shown"))

        let inspect = try CLITests.run("storeinspect", [cloud, "--json"])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let inspection = try json(inspect.stdout)
        #expect(inspection["type"] as? String == StoreType.postgreSQL.rawValue)
        #expect(inspection["configuration"] as? String == "Cloud")
        let entities = try #require(inspection["entities"] as? [[String: Any]])
        #expect(entities.first { $0["entity"] as? String == "Message" }?["rows"] as? Int == 400)
        #expect(!inspect.stdout.contains("not-shown"))
    }

    @Test(.enabled(if: CLITests.built, "storesplit not built in .build/debug"))
    func aMalformedPostgreSQLStoreArgumentIsAUsageError() throws {
        let run = try CLITests.run("storesplit", ["x.sqlite", "--model", LegacyMessenger.targetURL.path, "--store", "Cloud=postgres://:pw@/"])
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("storesplit: ") && !run.stderr.contains(":pw@"), "\(run.stderr)")
    }

    /// SIGKILL mid-split with Cloud on PostgreSQL: the final schema holds a store only once it is complete, and a
    /// later run replaces the leftover sibling schema and completes.
    @Test(.enabled(if: enabled, "storesplit not built in .build/debug, or SWITCHYARD_SKIP_POSTGRES=1"))
    func aKilledSplitIntoPostgreSQLLeavesNoPartialStore() throws {
        StoreCoordinator.registerPostgreSQL()
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source, messages: 3_000)
        let cloud = try temp.postgresURL("killed")
        let arguments = [source.path, "--model", LegacyMessenger.targetURL.path, "--batch-size", "25", "--force", "--verify"]
            + ["Cloud=\(cloud.absoluteString)", "Local=\(temp.file("Local.sqlite").path)", "Cache=\(temp.file("Cache.lmdb").path)"]
                .flatMap { ["--store", $0] }
        let target = try LegacyMessenger.targetModel()
        var killedMidRun = 0
        for attempt in 0..<3 {
            // The file outputs' temporary names appear once every output, Cloud's schema first, was created.
            if try CLITests.killSplitMidRun(arguments, watching: temp.url, after: UInt32(attempt) * 30_000) { killedMidRun += 1 }
            if try StoreSplitter.exists(cloud, type: .postgreSQL) {
                let store = try PostgreSQLStore(url: cloud, model: target, configuration: "Cloud", options: .readOnly)
                #expect(try store.count(StoreFetchRequest(entityName: "Message")) == 3_000, "attempt \(attempt)")
            }
        }
        #expect(killedMidRun > 0, "at least one run must be killed before it finished")
        let run = try CLITests.run("storesplit", arguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try !StoreSplitter.exists(ServerStoreLocations.sibling(of: cloud, type: .postgreSQL, suffix: "_storesplit_partial"), type: .postgreSQL))
        let store = try PostgreSQLStore(url: cloud, model: target, configuration: "Cloud", options: .readOnly)
        #expect(try store.count(StoreFetchRequest(entityName: "Message")) == 3_000)
    }
}

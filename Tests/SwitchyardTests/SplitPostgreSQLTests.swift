import Foundation
import Testing
@testable import Switchyard
import SwitchyardPostgreSQL

/// `storesplit --store Cloud=postgres://…`: the Cloud configuration written into a PostgreSQL schema, under a
/// temporary schema until verified, then moved in place in one transaction; what is already there is kept
/// unless forced; a failure leaves no partial output; a password never shows in what the split reports.
@Suite struct SplitPostgreSQLTests {
    let temp = TemporaryDirectory()

    init() { StoreCoordinator.registerPostgreSQL() }

    private func destinations(cloud: URL, round: Int = 1) -> [SplitDestination] {
        [
            SplitDestination(configuration: "Cloud", url: cloud, type: .postgreSQL),
            SplitDestination(configuration: "Local", url: temp.file("Local\(round).sqlite"), type: .sqlite),
            SplitDestination(configuration: "Cache", url: temp.file("Cache\(round).lmdb"), type: .lmdb),
        ]
    }

    /// The Cloud store's URL with a password the server does not need (trust on loopback), to check it never shows.
    private func cloudURL() throws -> URL {
        var parts = URLComponents(url: try temp.postgresURL("cloud"), resolvingAgainstBaseURL: false)!
        parts.password = "never-shown"
        return parts.url!
    }

    @Test(TestServer.needed) func theCloudConfigurationSplitsIntoPostgreSQLAndIsUsableThroughTheCoordinator() throws {
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url, messages: 700)
        let cloud = try cloudURL()
        let target = try LegacyMessenger.targetModel()
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations(cloud: cloud))
        let report = try splitter.run(try splitter.plan(), options: SplitOptions(batchSize: 300, verifyContent: true))
        #expect(report.contentVerified)
        let output = try #require(report.outputs.first { $0.configuration == "Cloud" })
        #expect(output.path.hasPrefix("postgres://") && !output.path.contains("never-shown"))
        #expect(!"\(report)".contains("never-shown"))
        // The temporary schema is gone; the final one holds the store.
        #expect(try !StoreSplitter.exists(splitter.destinations[0].temporaryURL, type: .postgreSQL))
        #expect(try StoreSplitter.exists(cloud, type: .postgreSQL))

        let coordinator = StoreCoordinator(model: target)
        try coordinator.addStore(.postgreSQL, configuration: "Cloud", url: cloud)
        try coordinator.addStore(.sqlite, configuration: "Local", at: temp.file("Local1.sqlite"))
        try coordinator.addStore(.lmdb, configuration: "Cache", at: temp.file("Cache1.lmdb"))
        let context = ObjectContext(coordinator: coordinator)
        let counts = LegacyMessenger.counts(messages: 700)
        for entity in ["Account", "Chat", "Message"] {
            #expect(try context.count(FetchRequest(entityName: entity)) == counts[entity], "\(entity)")
        }
        // New objects continue the copied keys.
        let chat = try context.insert("Chat")
        try chat.set("chatID", "new")
        try context.save()
        #expect(chat.objectID.primaryKey == Int64(counts["Chat"]! + 1))
    }

    @Test(TestServer.needed) func anExistingStoreIsKeptUnlessForcedAndThenReplacedWhole() throws {
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url, messages: 30)
        let cloud = try temp.postgresURL("existing")
        let target = try LegacyMessenger.targetModel()
        let first = try StoreSplitter(source: url, targetModel: target, destinations: destinations(cloud: cloud))
        _ = try first.run(try first.plan())
        // Only the Cloud output exists when the same split runs again into new Local and Cache files.
        let second = try StoreSplitter(source: url, targetModel: target, destinations: destinations(cloud: cloud, round: 2))
        #expect {
            _ = try second.run(try second.plan())
        } throws: { error in
            guard case SplitError.outputExists(let path)? = error as? SplitError else { return false }
            return path.contains("schema=")
        }
        let report = try second.run(try second.plan(), options: SplitOptions(verifyContent: true, force: true))
        #expect(report.contentVerified)
        let store = try StoreCoordinator(model: target).addStore(.postgreSQL, configuration: "Cloud", url: cloud)
        #expect(try store.count(StoreFetchRequest(entityName: "Message")) == 30)
    }

    @Test(TestServer.needed) func anUnreachableOutputFailsTheRunAndLeavesNoPartialStore() throws {
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url, messages: 30)
        let cloud = try temp.postgresURL("never")
        // The Local output's server does not answer (port 1): the run fails after Cloud's temporary store exists.
        let unreachable = URL(string: "postgres://switchyard:secret-pw@127.0.0.1:1/nowhere?connect_timeout=2")!
        let splitter = try StoreSplitter(source: url, targetModel: try LegacyMessenger.targetModel(), destinations: [
            SplitDestination(configuration: "Cloud", url: cloud, type: .postgreSQL),
            SplitDestination(configuration: "Local", url: unreachable, type: .postgreSQL),
            SplitDestination(configuration: "Cache", url: temp.file("Cache.lmdb"), type: .lmdb),
        ])
        #expect {
            _ = try splitter.run(try splitter.plan())
        } throws: { error in
            // Named once, without the password, at the step that failed.
            let text = "\(error)"
            return (error as? SplitError)?.step == "prepare outputs" && text.components(separatedBy: "postgres://switchyard@127.0.0.1:1/nowhere").count == 2
                && !text.contains("secret-pw") && text.contains("cannot reach the server")
        }
        #expect(try !StoreSplitter.exists(cloud, type: .postgreSQL))
        #expect(try !StoreSplitter.exists(splitter.destinations[0].temporaryURL, type: .postgreSQL))
    }

    /// A PostgreSQL output takes its rows without indexes and builds them afterwards: the split store ends
    /// with the same primary keys and indexes as a store the coordinator creates, and they work.
    @Test(TestServer.needed) func theOutputEndsWithTheIndexesOfAStoreCreatedEmpty() throws {
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url, messages: 120)
        let cloud = try temp.postgresURL("indexed")
        let target = try LegacyMessenger.targetModel()
        let splitter = try StoreSplitter(source: url, targetModel: target, destinations: destinations(cloud: cloud))
        _ = try splitter.run(try splitter.plan(), options: SplitOptions(batchSize: 50))
        let fresh = try temp.postgresURL("fresh")
        _ = try StoreCoordinator(model: target).addStore(.postgreSQL, configuration: "Cloud", url: fresh)
        func indexes(_ url: URL) throws -> [String] {
            try MigrationFixtures.postgresValues(url, """
                SELECT tablename || ': ' || replace(indexdef, quote_ident(current_schema()) || '.', '') FROM pg_indexes
                WHERE schemaname = current_schema() ORDER BY 1
                """)
        }
        let split = try indexes(cloud), created = try indexes(fresh)
        #expect(split == created, "split: \(split)\ncreated: \(created)")
        #expect(split.contains { $0.hasPrefix("ZMESSAGE: CREATE UNIQUE INDEX") && $0.contains("(\"Z_PK\")") })
        #expect(split.contains { $0.hasPrefix("ZACCOUNT: CREATE UNIQUE INDEX") && $0.contains("ZACCOUNTID") })
        // The unique index holds: a second account with a copied accountID is refused.
        let coordinator = StoreCoordinator(model: target)
        try coordinator.addStore(.postgreSQL, configuration: "Cloud", url: cloud)
        let context = ObjectContext(coordinator: coordinator)
        let existing = try #require(try context.fetch(FetchRequest(entityName: "Account", fetchLimit: 1)).first)
        let copy = try context.insert("Account")
        try copy.set("accountID", try existing.get("accountID") as String?)
        #expect(throws: (any Error).self) { try context.save() }
    }

    /// Rows that break a uniqueness constraint of the target model (legal in the legacy model) fail the split,
    /// whichever kind of store the configuration goes to, with an error naming the attribute; nothing is left.
    @Test(arguments: (TestServer.isSkipped ? [] : [StoreType.postgreSQL]) + [.sqlite, .lmdb])
    func rowsBreakingAUniquenessConstraintFailTheSplitAndLeaveNothing(cloudType: StoreType) throws {
        let url = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: url, messages: 30)
        try SQLite3.execute(url.path, "UPDATE ZACCOUNT SET ZACCOUNTID = (SELECT ZACCOUNTID FROM ZACCOUNT WHERE Z_PK = 1) WHERE Z_PK = 2")
        let cloud = cloudType == .postgreSQL ? try temp.postgresURL("unique") : temp.file("Cloud.\(cloudType == .lmdb ? "lmdb" : "sqlite")")
        let splitter = try StoreSplitter(source: url, targetModel: try LegacyMessenger.targetModel(), destinations: [
            SplitDestination(configuration: "Cloud", url: cloud, type: cloudType),
            SplitDestination(configuration: "Local", url: temp.file("Local.sqlite"), type: .sqlite),
            SplitDestination(configuration: "Cache", url: temp.file("Cache.lmdb"), type: .lmdb),
        ])
        #expect {
            _ = try splitter.run(try splitter.plan())
        } throws: { error in
            "\(error)".lowercased().contains("accountid")
        }
        for destination in splitter.destinations {
            #expect(try !StoreSplitter.exists(destination.url, type: destination.type), "\(destination.displayPath)")
            #expect(try !StoreSplitter.exists(destination.temporaryURL, type: destination.type), "\(destination.displayPath)")
        }
    }

    @Test func aStoreArgumentNamesAPostgreSQLURL() throws {
        let destination = try SplitDestination(argument: "Cloud=postgres://app:pw@db.example.com:5433/main?schema=cloud")
        #expect(destination.type == .postgreSQL)
        #expect(destination.displayPath == "postgres://app@db.example.com:5433/main?schema=cloud")
        #expect(destination.temporaryURL.absoluteString.contains("schema=cloud_storesplit_partial"))
        #expect {
            _ = try SplitDestination(argument: "Cloud=postgres://")
        } throws: { error in "\(error)".contains("not a URL") }
    }
}

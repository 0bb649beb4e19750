import Foundation
import Switchyard
import Testing

/// Issue #16 point 3: real Core Data stores with persistent history (CoreDataPlus's SampleModel2 and CartKit's
/// SwiftData store) keep their history readable through Switchyard's API, and a save continues it in Core Data's
/// own layout: an `ATRANSACTION` row with interned strings, `ACHANGE` rows with `ZCOLUMNS`, `Z_PRIMARYKEY` counters.
@Suite(.enabled(if: Fixtures.available && SQLite3.available, "needs ../shared/fixtures/coredata and the sqlite3 CLI"))
struct CoreDataHistoryFixtureTests {
    static func copy(_ relative: String, _ temp: TemporaryDirectory) throws -> URL {
        let source = Fixtures.url(relative)
        let url = temp.file(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: url.path + suffix)
        }
        return url
    }

    @Test func coreDataPlusHistoryIsReadableAndContinued() throws {
        let temp = TemporaryDirectory()
        let url = try Self.copy("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", temp)
        let stored = try #require(try StoreInspection.storedModel(url))
        let coordinator = StoreCoordinator(model: stored)
        // Opened without the option: the store has history, so it is read and kept up.
        let store = try coordinator.addStore(.sqlite, configuration: "Default", at: url)

        let recorded = try coordinator.history(after: nil, in: "Default")
        try #require(recorded.count == 1)
        let first = recorded[0]
        #expect(first.token == HistoryToken(storeIdentifier: store.identifier, transactionNumber: 1))
        #expect(first.processID == "xctest" && first.bundleID == "com.apple.dt.xctest.tool" && first.author == nil)
        #expect(abs(first.timestamp.timeIntervalSinceReferenceDate - 737057647.288022) < 0.001)
        #expect(first.changes.count == 5468 && first.changes.allSatisfy { $0.kind == .insert })
        let byEntity = Dictionary(grouping: first.changes, by: \.objectID.entityName).mapValues(\.count)
        #expect(byEntity == ["Book": 51, "GraphicNovel": 1, "Feedback": 444, "Page": 4970, "Author": 2])
        // The objects it names are the store's objects.
        let context = ObjectContext(coordinator: coordinator)
        let page = try #require(first.changes.first { $0.objectID.entityName == "Page" })
        #expect(try context.existingObject(with: page.objectID).entity.name == "Page")

        // A save appends transaction 2 in Core Data's layout.
        context.transactionAuthor = "switchyard"
        context.name = "fixture-test"
        let feedback = try #require(try context.fetch(FetchRequest(entityName: "Feedback", sortKeys: [SortKey("comment")], fetchLimit: 1)).first)
        try feedback.set("comment", "edited")
        try context.save()
        let continued = try coordinator.history(after: first.token, in: "Default")
        try #require(continued.count == 1)
        #expect(continued[0].token.transactionNumber == 2)
        #expect(continued[0].author == "switchyard" && continued[0].contextName == "fixture-test")
        #expect(continued[0].changes.map(\.objectID) == [feedback.objectID])
        #expect(continued[0].changes.first?.updatedKeys == ["comment"])

        let path = url.path
        #expect(try SQLite3.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002") == "2")
        #expect(try SQLite3.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16001") == "5469")
        #expect(try SQLite3.query(path, """
            SELECT a.ZNAME || '|' || c.ZNAME FROM ATRANSACTION t JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS WHERE t.Z_PK = 2
            """) == "switchyard|fixture-test")
        #expect(try SQLite3.query(path, "SELECT Z_ENT FROM ATRANSACTION WHERE Z_PK = 2") == "16002")
        let feedbackNumber = try SQLite3.query(path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Feedback'")
        #expect(try SQLite3.query(path, "SELECT Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, length(ZCOLUMNS) FROM ACHANGE WHERE Z_PK = 5469")
            == "16001|1|\(feedbackNumber)|\(feedback.objectID.primaryKey!)|2|1")
    }

    @Test func cartKitSwiftDataHistoryIsReadable() throws {
        let temp = TemporaryDirectory()
        let url = try Self.copy("Karim-ezzedine__CartKit/Tests/CartKitStorageSwiftDataTests/LegacySwiftData/CartKitSwiftData_v1.sqlite", temp)
        let stored = try #require(try StoreInspection.storedModel(url))
        let coordinator = StoreCoordinator(model: stored)
        try coordinator.addStore(.sqlite, configuration: "Default", at: url, options: .readOnly)
        let recorded = try coordinator.history(after: nil, in: "Default")
        try #require(recorded.count == 1)
        #expect(recorded[0].processID == "xctest")
        #expect(recorded[0].changes.map(\.kind) == [.insert])
        let cart = try #require(recorded[0].changes.first?.objectID)
        #expect(cart.entityName == "CartModel" && cart.primaryKey == 1)
        #expect(try ObjectContext(coordinator: coordinator).existingObject(with: cart).get("storeId", as: String.self) == "store-legacy")
        #expect(try coordinator.currentHistoryToken(for: "Default").transactionNumber == 1)
    }

    /// `storeinspect history` reads a real store's history without Xcode: the summary line, every change with
    /// `--changes`, JSON, and clear errors for bad arguments and positions.
    @Test(.enabled(if: CLITests.built, "storeinspect not built in .build/debug"))
    func storeinspectPrintsTheHistory() throws {
        let temp = TemporaryDirectory()
        let url = try Self.copy("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite", temp)
        let summary = try CLITests.run("storeinspect", ["history", url.path])
        #expect(summary.status == 0, "\(summary.stderr)")
        #expect(summary.stdout == "#1 2024-05-10T18:14:07Z process xctest, bundle com.apple.dt.xctest.tool: 5468 changes (5468 inserts)\n")
        let listed = try CLITests.run("storeinspect", ["history", url.path, "--changes"])
        #expect(listed.stdout.split(separator: "\n").count == 1 + 5468)
        #expect(listed.stdout.contains("\n  insert Page/p221\n"))
        let json = try CLITests.run("storeinspect", ["history", url.path, "--json"])
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(decoded?.count == 1 && (decoded?.first?["changes"] as? [Any])?.count == 5468)
        #expect(try CLITests.run("storeinspect", ["history", url.path, "--after", "1"]).stdout == "no transactions\n")
        let ahead = try CLITests.run("storeinspect", ["history", url.path, "--after", "9"])
        #expect(ahead.status == 2)
        #expect(ahead.stderr == "storeinspect: history failed: \(url.path): --after 9 is past the store's last transaction (1)\n")
        let bad = try CLITests.run("storeinspect", ["history", url.path, "--limit", "0"])
        #expect(bad.status == 64 && bad.stderr.contains("--limit must be 1 or more"))
        // A negative number is the option's value, refused as such, not taken for another flag.
        let negative = try CLITests.run("storeinspect", ["history", url.path, "--limit", "-1"])
        #expect(negative.status == 64 && negative.stderr.contains("--limit must be 1 or more (got -1)"), "\(negative.stderr)")
        let before = try CLITests.run("storeinspect", ["history", url.path, "--after", "-5"])
        #expect(before.status == 64 && before.stderr.contains("--after must be 0 or more (got -5)"), "\(before.stderr)")
    }
}

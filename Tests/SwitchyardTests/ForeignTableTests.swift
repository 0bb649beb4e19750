import Foundation
import Testing
import Switchyard

/// Issue #12 point 9: tables Switchyard does not own — CloudKit mirroring (`ANSCK…`) and the app's own tables —
/// survive opening a real store read-write, saving into it and migrating it; a split names them by kind. Core
/// Data's persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`, `Z_ENT` 16001-16003) is kept and
/// continued (issue #16): its rows stay as they were, and each save appends its transaction.
@Suite(.enabled(if: Fixtures.available && SQLite3.available, "needs ../shared/fixtures/coredata and the sqlite3 CLI"))
struct ForeignTableTests {
    static let store = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"
    static let foreign = ["ANSCKRECORDMETADATA", "APPLOG"]
    static let history = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]

    /// The real store, plus a CloudKit mirroring table and entity and an app table as the app would leave them.
    static func prepare(_ temp: TemporaryDirectory) throws -> URL {
        let url = temp.file("SampleModel2_V1.sqlite")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: Fixtures.url(store).path + suffix) {
            try FileManager.default.copyItem(atPath: Fixtures.url(store).path + suffix, toPath: url.path + suffix)
        }
        try SQLite3.execute(url.path, """
            CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZRECORDNAME VARCHAR);
            INSERT INTO ANSCKRECORDMETADATA VALUES (1, 16004, 1, 'record-1'), (2, 16004, 1, 'record-2');
            INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (16004, 'NSCKRecordMetadata', 0, 2);
            CREATE TABLE APPLOG (id INTEGER PRIMARY KEY, message TEXT);
            INSERT INTO APPLOG (message) VALUES ('opened'), ('synced');
            """)
        return url
    }

    /// Every foreign table's rows and the `Z_PRIMARYKEY` rows above the history's, as text.
    static func foreignContent(_ url: URL) throws -> [String: [[String]]] {
        var content: [String: [[String]]] = [:]
        for table in foreign { content[table] = try SQLite3.rows(url.path, "SELECT * FROM \(table) ORDER BY 1") }
        content["Z_PRIMARYKEY"] = try SQLite3.rows(url.path, "SELECT * FROM Z_PRIMARYKEY WHERE Z_ENT > 16003 ORDER BY 1")
        return content
    }

    /// The history tables' rows, as text.
    static func historyContent(_ url: URL) throws -> [String: [[String]]] {
        var content: [String: [[String]]] = [:]
        for table in history { content[table] = try SQLite3.rows(url.path, "SELECT * FROM \(table) ORDER BY 1") }
        return content
    }

    /// Checks the history rows of `before` are still there, unchanged, and that `transactions` transactions of
    /// `changes` changes were appended.
    static func expectHistoryContinued(_ url: URL, from before: [String: [[String]]], transactions: Int, changes: Int) throws {
        let after = try historyContent(url)
        for table in history {
            let old = before[table] ?? [], new = after[table] ?? []
            #expect(Array(new.prefix(old.count)) == old, "\(table): recorded rows changed")
        }
        #expect((after["ATRANSACTION"]?.count ?? 0) - (before["ATRANSACTION"]?.count ?? 0) == transactions)
        #expect((after["ACHANGE"]?.count ?? 0) - (before["ACHANGE"]?.count ?? 0) == changes)
    }

    @Test func readWriteOpenSaveAndMigrationLeaveThemUntouched() async throws {
        let temp = TemporaryDirectory()
        let url = try Self.prepare(temp)
        let before = try Self.foreignContent(url)
        let history = try Self.historyContent(url)
        #expect(history["ACHANGE"]?.count == 5468)
        let stored = try #require(try StoreInspection.storedModel(url))

        // Read-write open with the store's own model, and a save.
        do {
            let coordinator = StoreCoordinator(model: stored)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url)
            let context = ObjectContext(coordinator: coordinator)
            let feedback = try #require(try context.fetch(FetchRequest(entityName: "Feedback", fetchLimit: 1)).first)
            try feedback.set("comment", "edited by Switchyard")
            try context.save()
        }
        #expect(try Self.foreignContent(url) == before)
        try Self.expectHistoryContinued(url, from: history, transactions: 1, changes: 1)

        // A migration: an attribute added to Feedback and an entity added whose model number (1) is taken.
        var entities = stored.entities.map { entity -> EntityDescription in
            var e = entity
            if e.name == "Feedback" { e.attributes.append(AttributeDescription(name: "helpful", type: .integer32, isOptional: true)) }
            return e
        }
        entities.append(EntityDescription(name: "Aardvark", attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)]))
        let changed = try ObjectModel(entities: entities)
        do {
            let coordinator = StoreCoordinator(model: changed)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url)
            let context = ObjectContext(coordinator: coordinator)
            let aardvark = try context.insert("Aardvark")
            try aardvark.set("name", "first")
            try context.save()
            #expect(try context.count(FetchRequest(entityName: "Feedback")) == 444)
        }
        #expect(try Self.foreignContent(url) == before)
        try Self.expectHistoryContinued(url, from: history, transactions: 2, changes: 2)
        let number = try SQLite3.query(url.path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Aardvark'")
        #expect(Int(number).map { $0 < 16000 } == true, "Aardvark got Z_ENT \(number), inside Core Data's reserved range")
    }

    /// The dry run names what stays behind by owner: persistent history, CloudKit mirroring, app tables, triggers.
    @Test func splitWarningNamesThemByKind() throws {
        let temp = TemporaryDirectory()
        let url = try Self.prepare(temp)
        let stored = try #require(try StoreInspection.storedModel(url))
        let splitter = try StoreSplitter(
            source: url, targetModel: stored,
            destinations: [SplitDestination(configuration: "Default", url: temp.file("Out.sqlite"), type: .sqlite)])
        let plan = try splitter.plan()
        let warning = try #require(plan.warnings.first { $0.hasPrefix("not copied, outside the model") })
        #expect(warning.contains(
            "persistent history (tables ACHANGE, ATRANSACTION, ATRANSACTIONSTRING; entities CHANGE, TRANSACTION, TRANSACTIONSTRING)"))
        #expect(warning.contains("CloudKit mirroring (table ANSCKRECORDMETADATA; entity NSCKRecordMetadata)"))
        #expect(warning.contains("triggers (5)"))
        #expect(warning.contains("app tables (table APPLOG)"))
        let log = try #require(plan.skipped.first { $0.name == "APPLOG" })
        #expect(log.rows == 2 && log.reason.contains("app's own"))
    }
}

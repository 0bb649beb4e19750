import Foundation
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// What a user-side review of the PostgreSQL store found, each kept from coming back: names longer than
/// PostgreSQL's 63 bytes, `IN` lists longer than its parameter limit, disposable stores, IPv6 hosts, passwords
/// in printed descriptions, and the inspection layer reading a PostgreSQL store.
@Suite struct PostgreSQLStoreTests {
    let dir = TemporaryDirectory()

    @Test(TestServer.needed) func namesLongerThan63BytesReopenAndStayApart() throws {
        let entityName = "Entity" + String(repeating: "A", count: 64)
        let first = "attribute" + String(repeating: "x", count: 60) + "One"
        let second = "attribute" + String(repeating: "x", count: 60) + "Two"
        let model = try ObjectModel(entities: [
            EntityDescription(name: entityName, attributes: [
                AttributeDescription(name: first, type: .string), AttributeDescription(name: second, type: .string),
            ]),
        ])
        let url = try dir.postgresURL("long")
        do {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
            let context = ObjectContext(coordinator: coordinator)
            let object = try context.insert(entityName)
            try object.set(first, "one")
            try object.set(second, "two")
            try context.save()
        }
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.postgreSQL, configuration: "Default", url: url)
        let objects = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: entityName))
        #expect(objects.count == 1)
        #expect(try objects.first?.get(first, as: String.self) == "one")
        #expect(try objects.first?.get(second, as: String.self) == "two")
    }

    @Test(TestServer.needed) func anINListLongerThanTheParameterLimitIsAnswered() throws {
        let store = try Backend.postgresql.open(try TestModels.library(), configuration: "Main", in: dir)
        let keys = try store.allocatePrimaryKeys(for: "Book", count: 3)
        try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Book", primaryKey: $0, values: ["title": .string("t\($0)")]) }))
        let titles = (0..<70_000).map { AttributeValue.string("t\($0)") }
        let predicate = FetchPredicate.comparison(Comparison(.keyPath(["title"]), .in, .list(titles.map { .constant($0) })))
        #expect(try store.count(StoreFetchRequest(entityName: "Book", predicate: predicate)) == 3)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Book", predicate: predicate)).count == 3)
    }

    @Test(TestServer.needed) func aDisposableStoreIsMigratedWhenItCanBeAndRecreatedWhenNot() throws {
        let url = try dir.postgresURL("cache")
        let v1 = try ObjectModel(entities: [EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "key", type: .string)])])
        do {
            let coordinator = StoreCoordinator(model: v1)
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(disposable: true))
            let context = ObjectContext(coordinator: coordinator)
            try context.insert("Entry").set("key", "old")
            try context.save()
        }
        // A change that can be migrated is migrated, disposable or not: the row stays.
        let v2 = try ObjectModel(entities: [EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "key", type: .string), AttributeDescription(name: "hits", type: .integer64),
        ])])
        let migrated = try StoreCoordinator(model: v2).addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(disposable: true))
        #expect(try migrated.fetch(StoreFetchRequest(entityName: "Entry")).map { $0["key"] } == [.string("old")])
        // One that cannot: refused when not disposable, the store untouched.
        let v3 = try ObjectModel(entities: [EntityDescription(name: "Entry", attributes: [
            AttributeDescription(name: "key", type: .integer64), AttributeDescription(name: "hits", type: .integer64),
        ])])
        #expect {
            try StoreCoordinator(model: v3).addStore(.postgreSQL, configuration: "Default", url: url)
        } throws: { error in
            guard case StoreError.incompatibleModel(let path, "Default", _)? = error as? StoreError else { return false }
            return path.contains("schema=")
        }
        #expect(try StoreCoordinator(model: v2).addStore(.postgreSQL, configuration: "Default", url: url)
            .count(StoreFetchRequest(entityName: "Entry")) == 1)
        // Disposable: recreated empty with the new model.
        let store = try StoreCoordinator(model: v3).addStore(.postgreSQL, configuration: "Default", url: url, options: StoreOptions(disposable: true))
        #expect(try store.count(StoreFetchRequest(entityName: "Entry")) == 0)
        #expect(try store.metadata().versionHashes == v3.versionHashes)
    }

    /// A disposable store recording history that is recreated starts its history over: the old transactions go
    /// with the old tables, and the new store's saves are recorded from number 1 without colliding with them.
    @Test(TestServer.needed) func aRecreatedDisposableStoreStartsItsHistoryOver() throws {
        let url = try dir.postgresURL("cachehistory")
        let options = StoreOptions(disposable: true, persistentHistory: true)
        let v1 = try ObjectModel(entities: [EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "key", type: .string)])])
        do {
            let coordinator = StoreCoordinator(model: v1)
            try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: options)
            let context = ObjectContext(coordinator: coordinator)
            for key in ["a", "b"] {
                try context.insert("Entry").set("key", key)
                try context.save()
            }
            #expect(try coordinator.history(after: nil, in: "Default").count == 2)
        }
        let v2 = try ObjectModel(entities: [EntityDescription(name: "Entry", attributes: [AttributeDescription(name: "key", type: .integer64)])])
        let coordinator = StoreCoordinator(model: v2)
        try coordinator.addStore(.postgreSQL, configuration: "Default", url: url, options: options)
        let context = ObjectContext(coordinator: coordinator)
        try context.insert("Entry").set("key", Int64(7))
        try context.save()
        let history = try coordinator.history(after: nil, in: "Default")
        #expect(history.map(\.token.transactionNumber) == [1])
        #expect(history.first?.changes.map(\.kind) == [.insert])
    }

    @Test func anIPv6HostIsReadWithoutItsBrackets() throws {
        let location = try PostgreSQLLocation(URL(string: "postgres://app@[::1]:5433/db")!, configuration: "Cloud")
        #expect(location.host == "::1")
        #expect(location.port == 5433)
    }

    @Test func printingADescriptionNeverShowsThePassword() throws {
        let description = StoreDescription(.postgreSQL, configuration: "Cloud", url: URL(string: "postgres://app:sekret@db/x?schema=c")!)
        #expect(!"\(description)".contains("sekret"))
        #expect(!String(reflecting: description).contains("sekret"))
        #expect("\(description)".contains("postgres://app@db/x?schema=c"))
    }

    @Test(TestServer.needed) func storeInspectionReadsAPostgreSQLStore() throws {
        let url = try dir.postgresURL("inspected")
        let model = try TestModels.library()
        let coordinator = StoreCoordinator(model: model)
        let store = try coordinator.addStore(.postgreSQL, configuration: "Main", url: url)
        let keys = try store.allocatePrimaryKeys(for: "Book", count: 4)
        try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Book", primaryKey: $0, values: ["title": .string("t\($0)")]) }))
        var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        parts.password = "not-needed-but-secret"
        // Without a model: the store's model cache and the configuration it was created for.
        let inspection = try StoreInspection.inspect(parts.url!, model: nil)
        #expect(inspection.type == .postgreSQL)
        #expect(inspection.configuration == "Main")
        #expect(inspection.model == "model cache")
        #expect(inspection.entities.first { $0.entity == "Book" }?.rows == 4)
        #expect(!inspection.path.contains("not-needed-but-secret"))
    }
}

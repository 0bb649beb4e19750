import Foundation
import Testing
import Switchyard

/// One real store under `../shared/fixtures/coredata` and the model that wrote it.
struct FixtureStore: Sendable, CustomTestStringConvertible {
    /// A short name for test output.
    let name: String
    /// The store, relative to the fixtures folder.
    let store: String
    /// The model that wrote it, relative to the fixtures folder; nil when only its model cache has it (the test
    /// then exports that model with `storeinspect model` and uses the file).
    let model: String?
    /// Why the store cannot yet pass every command, if it cannot (the test records a known issue naming it).
    let knownGap: String?

    var testDescription: String { name }

    static let xcServer = "richardpiazza__XCServerCoreData"
    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"

    /// Every store in the fixtures folder (its README lists them), with its own model.
    static let all: [FixtureStore] = [
        .init(
            name: "CartKit Core Data",
            store: "Karim-ezzedine__CartKit/Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite",
            model: "Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld", knownGap: nil),
        .init(
            name: "CartKit SwiftData",
            store: "Karim-ezzedine__CartKit/Tests/CartKitStorageSwiftDataTests/LegacySwiftData/CartKitSwiftData_v1.sqlite",
            model: nil, knownGap: nil),
        .init(
            name: "RestKit seed",
            store: "RestKit__RestKit/Examples/RKTwitterCoreData/RKSeedDatabase.sqlite",
            model: "RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel", knownGap: nil),
        .init(name: "SampleModel V1", store: "\(sampleModel)/Fixtures/SampleModel_V1.sqlite",
              model: "\(sampleModel)/SampleModel.xcdatamodeld/SampleModel.xcdatamodel", knownGap: nil),
        .init(name: "SampleModel V2", store: "\(sampleModel)/Fixtures/SampleModel_V2.sqlite",
              model: "\(sampleModel)/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel", knownGap: nil),
        .init(name: "SampleModel2 V1", store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite",
              model: nil, knownGap: nil),
        .init(name: "CoreDataStack", store: "bignerdranch__CoreDataStack/CoreDataStackTests/TestModel.sqlite",
              model: "bignerdranch__CoreDataStack/CoreDataStackTests/TestModel.xcdatamodeld/TestModel.xcdatamodel", knownGap: nil),
        .init(
            name: "contentful",
            store: "contentful__contentful-persistence.swift/Tests/ContentfulPersistenceTests/BundledPreseededDatabaseTests/Test.sqlite",
            model: "contentful__contentful-persistence.swift/Tests/ContentfulPersistenceTests/Test.xcdatamodeld", knownGap: nil),
        .init(name: "Moody", store: "objcio__core-data/Migrations/MigrationsTests/Moody.moody",
              model: "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld", knownGap: nil),
        .init(name: "XCServerCoreData 1.2.0 empty", store: "\(xcServer)/Tests/XCServerCoreData_1.2.0_empty.sqlite",
              model: "\(xcServer)/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.2.0.xcdatamodel", knownGap: nil),
        .init(name: "XCServerCoreData 2.0.1", store: "\(xcServer)/Tests/XCServerCoreData_2.0.1.sqlite",
              model: "\(xcServer)/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.1.xcdatamodel", knownGap: nil),
        .init(name: "XCServerCoreData 1.2.0 (WAL)", store: "\(xcServer)/XCServerCoreDataTests/XCServerCoreData_1.2.0.sqlite",
              model: "\(xcServer)/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.2.0.xcdatamodel", knownGap: nil),
    ]
}

/// Issue #12's "done": every real fixture store inspects, reports `identical` against its own model, and splits
/// with `--verify` into an SQLite and into an LMDB output — through the built `storeinspect` and `storesplit`,
/// as a user runs them.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage))
struct FixtureStoreCommandTests {
    /// The fixtures folder lists exactly these stores (a new store cannot go untested).
    @Test func listCoversEveryFixtureStore() throws {
        let enumerator = try #require(FileManager.default.enumerator(atPath: Fixtures.root.path))
        var found: Set<String> = []
        while let relative = enumerator.nextObject() as? String {
            if relative.hasSuffix(".sqlite") || relative.hasSuffix(".moody") { found.insert(relative) }
        }
        #expect(found == Set(FixtureStore.all.map(\.store)))
    }

    @Test(.enabled(if: CLITests.built, "storesplit/storeinspect not built in .build/debug"), arguments: FixtureStore.all)
    func storePassesEveryCommand(_ fixture: FixtureStore) throws {
        if let gap = fixture.knownGap {
            withKnownIssue(Comment(rawValue: gap)) { try Self.runCommands(fixture) }
        } else {
            try Self.runCommands(fixture)
        }
    }

    static func runCommands(_ fixture: FixtureStore) throws {
        let temp = TemporaryDirectory()
        let source = Fixtures.url(fixture.store)
        let url = temp.file(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: url.path + suffix)
        }
        let model: String
        if let relative = fixture.model {
            model = Fixtures.url(relative).path
        } else {
            let exported = try CLITests.run("storeinspect", ["model", url.path])
            try #require(exported.status == 0, "storeinspect model: \(exported.stderr)")
            let folder = temp.file("Cached.xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(exported.stdout.utf8).write(to: folder.appendingPathComponent("contents"))
            model = folder.path
        }

        let inspect = try CLITests.run("storeinspect", ["inspect", url.path, "--model", model, "--json"])
        #expect(inspect.status == 0, "storeinspect inspect: \(inspect.stderr)")
        let compat = try CLITests.run("storeinspect", ["compat", url.path, "--model", model, "--json"])
        #expect(compat.status == 0, "storeinspect compat: \(compat.stderr)")
        let verdict = (try? JSONSerialization.jsonObject(with: Data(compat.stdout.utf8)) as? [String: Any])?["verdict"] as? String
        #expect(verdict == "identical", "storeinspect compat: \(compat.stdout.prefix(400))")
        for ext in ["sqlite", "lmdb"] {
            let output = temp.file("Split.\(ext)")
            let split = try CLITests.run("storesplit", [url.path, "--model", model, "--store", "Default=\(output.path)", "--verify"])
            #expect(split.status == 0, "storesplit to \(ext): \(split.stderr)")
            #expect(split.stdout.contains("verified"), "storesplit to \(ext)")
            // Every output is a store the tools read in turn (an LMDB output with many indexes once was not).
            let again = try CLITests.run("storeinspect", ["inspect", output.path, "--json"])
            #expect(again.status == 0, "storeinspect inspect of the \(ext) output: \(again.stderr)")
        }
    }

    /// `storeinspect` lists abstract entities too, with their own rows (none) and the rows of their subentities
    /// (objc.io's Moody: abstract GeographicRegion over Country and Continent).
    @Test(.enabled(if: CLITests.built, "storeinspect not built in .build/debug"))
    func inspectListsAbstractEntities() throws {
        let temp = TemporaryDirectory()
        let source = Fixtures.url("objcio__core-data/Migrations/MigrationsTests/Moody.moody")
        let url = temp.file("Moody.moody")
        try FileManager.default.copyItem(at: source, to: url)
        let run = try CLITests.run("storeinspect", ["inspect", url.path, "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let inspection = try JSONDecoder().decode(StoreInspection.self, from: Data(run.stdout.utf8))
        let byName = Dictionary(uniqueKeysWithValues: inspection.entities.map { ($0.entity, $0) })
        let region = try #require(byName["GeographicRegion"])
        let country = try #require(byName["Country"]), continent = try #require(byName["Continent"])
        #expect(region.isAbstract && region.rows == 0)
        #expect(region.rowsIncludingSubentities == country.rows + continent.rows)
        #expect(country.rows > 0 && continent.rows > 0 && !country.isAbstract)
        #expect(country.rowsIncludingSubentities == country.rows)
        let text = try CLITests.run("storeinspect", [url.path])
        #expect(text.stdout.contains("GeographicRegion"))
        #expect(text.stdout.contains("abstract, \(country.rows + continent.rows) with subentities"))
    }
}

import Foundation
import Testing
@testable import Switchyard

/// `storeinspect compat`, run as the built binary: exit codes 0 compatible, 1 migratable, 3 incompatible, 2 error.
@Suite struct CompatCLITests {
    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"

    @Test(.enabled(if: CLITests.built && Fixtures.available, "needs the built storeinspect and the fixtures"))
    func coreDataStoreAgainstItsOwnModelAndTheNextVersion() throws {
        let store = Fixtures.url("\(Self.sampleModel)/Fixtures/SampleModel_V1.sqlite").path
        let v1 = Fixtures.url("\(Self.sampleModel)/SampleModel.xcdatamodeld/SampleModel.xcdatamodel").path
        let v2 = Fixtures.url("\(Self.sampleModel)/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel").path
        let same = try CLITests.run("storeinspect", ["compat", store, "--model", v1])
        #expect(same.status == 0)
        #expect(same.stdout.contains("configuration Default: identical"))
        let next = try CLITests.run("storeinspect", ["compat", store, "--model", v2, "--json"])
        #expect(next.status == 1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(next.stdout.utf8)) as? [String: Any])
        #expect(json["verdict"] as? String == "migratable")
        let report = try JSONDecoder().decode(StoreCompatibility.self, from: Data(next.stdout.utf8))
        #expect(report.basis == .modelCache)
        #expect(report.report.entities.first { $0.name == "LuxuryCar" }?.oldName == "ExpensiveSportCar")
    }

    @Test(.enabled(if: CLITests.built, "storeinspect not built in .build/debug"), arguments: [Backend.sqlite, .lmdb])
    func incompatibleStoreExitsThreeAndErrorsExitTwo(backend: Backend) throws {
        let dir = TemporaryDirectory()
        let url = backend.url(in: dir, name: "m")!
        try MigrationFixtures.populate(backend, url: url)
        let v2 = try MigrationFixtures.model { e in e["Item"]!.attributes[1].type = .string }
        _ = try ModelWriter.write(v2, name: "V2", toDirectory: dir.url)
        let model = dir.file("V2.xcdatamodel").path
        let incompatible = try CLITests.run("storeinspect", ["compat", url.path, "--model", model])
        #expect(incompatible.status == 3)
        #expect(incompatible.stdout.contains("count: typeChanged — Integer 64 -> String — NOT inferable"))
        let missing = try CLITests.run("storeinspect", ["compat", dir.file("none.sqlite").path, "--model", model])
        #expect(missing.status == 2)
        #expect(missing.stderr.hasPrefix("storeinspect: compat failed: "))
        // An unknown configuration is looked up in the model, so the error names the model file.
        let unknown = try CLITests.run("storeinspect", ["compat", url.path, "--model", model, "--configuration", "Nope"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "storeinspect: compat failed: \(model): unknown configuration 'Nope'; the model has: Default\n",
                "\(unknown.stderr)")
    }
}

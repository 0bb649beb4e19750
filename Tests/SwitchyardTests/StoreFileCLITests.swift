import Foundation
import Testing
@testable import Switchyard

/// `storefile` as an operator runs it on a real Core Data store (XCServerCoreData 2.0.1, 13,225 rows, 50+
/// indexes): copy, convert to LMDB and back, move, replace, destroy; refusals and their exit codes.
@Suite(.enabled(if: Fixtures.available && CLITests.built, "needs ../shared fixtures and the built tools"))
struct StoreFileCLITests {
    @Test func everyOperationOnARealStore() throws {
        let temp = TemporaryDirectory()
        let source = try SplitFidelityTests.copyFixture(SplitFidelityTests.xcServer201, into: temp)
        let model = Fixtures.url(SplitFidelityTests.xcServer201Model).path
        func run(_ arguments: [String]) throws -> CLITests.Run { try CLITests.run("storefile", arguments + ["--model", model]) }

        let backup = temp.file("Backup.sqlite").path
        let copy = try run(["copy", source.path, backup, "--compact"])
        #expect(copy.status == 0, "\(copy.stderr)")
        let lmdb = temp.file("Converted.lmdb").path
        let convert = try run(["convert", backup, lmdb, "--json"])
        #expect(convert.status == 0, "\(convert.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(convert.stdout.utf8)) as? [String: String]
        #expect(json?["rows"] == "13225" && json?["verified"] == "true")
        let inspect = try CLITests.run("storeinspect", ["inspect", lmdb, "--json"])
        #expect(inspect.status == 0, "\(inspect.stderr)")

        try FileManager.default.createDirectory(at: temp.file("moved"), withIntermediateDirectories: true)
        let moved = temp.file("moved/Converted.lmdb").path
        #expect(try run(["move", lmdb, moved]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: lmdb) && FileManager.default.fileExists(atPath: moved))
        let replace = try run(["replace", backup, "--with", moved])
        #expect(replace.status == 0, "\(replace.stderr)")

        // The backup, replaced by the LMDB conversion of itself, holds what the fixture holds, Z_OPT included.
        let fixtureModel = try ModelLoader.load(at: Fixtures.url(SplitFidelityTests.xcServer201Model))
        let (original, _) = try StoreSplitter.openReadOnly(source, model: fixtureModel)
        let (roundTrip, _) = try StoreSplitter.openReadOnly(URL(fileURLWithPath: backup), model: fixtureModel)
        #expect(try SplitFidelityTests.versions(roundTrip) == SplitFidelityTests.versions(original))

        // Refusals: an existing destination and a missing confirmation are usage errors; an unwritable place fails.
        let exists = try run(["copy", backup, moved])
        #expect(exists.status == 64 && exists.stderr.contains("already exists"))
        let unconfirmed = try run(["destroy", backup])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--yes"))
        let nowhere = try run(["copy", backup, temp.file("missing/Copy.sqlite").path])
        #expect(nowhere.status == 2 && nowhere.stderr.hasPrefix("storefile: copy failed: "))

        #expect(try run(["destroy", backup, "--yes"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: backup))
    }
}

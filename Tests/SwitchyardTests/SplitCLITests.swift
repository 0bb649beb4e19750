import Foundation
import Testing
@testable import Switchyard
#if canImport(Glibc)
import Glibc
#endif

/// `storesplit` and `storeinspect` as built binaries: plans, reports, exit codes, error format, kill safety.
@Suite struct SplitCLITests {
    static let built = CLITests.built
    static let dotAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/dot")
        || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/dot")

    private func stores(_ dir: URL) -> [String] {
        ["Cloud=\(dir.path)/Cloud.sqlite", "Local=\(dir.path)/Local.sqlite", "Cache=\(dir.path)/Cache.lmdb"]
            .flatMap { ["--store", $0] }
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func dryRunPrintsThePlanAndWritesNothing() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let text = try CLITests.run("storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--dry-run"] + stores(temp.url))
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("Message: 60 rows"))
        #expect(text.stdout.contains("Message.preview (Cloud -> Cache) -> Message.link = LinkPreview.url"))
        let run = try CLITests.run(
            "storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--dry-run", "--json"] + stores(temp.url))
        #expect(run.status == 0)
        let plan = try json(run.stdout)
        #expect(plan["dryRun"] as? Bool == true)
        #expect(plan["rows"] as? Int == LegacyMessenger.counts(messages: 60).values.reduce(0, +))
        #expect((plan["conversions"] as? [Any])?.count == 2)
        #expect(!FileManager.default.fileExists(atPath: temp.file("Cloud.sqlite").path))
        let explicit = try CLITests.run(
            "storesplit",
            [source.path, "--model", LegacyMessenger.targetURL.path, "--source-model", LegacyMessenger.legacyURL.path, "--dry-run"]
                + stores(temp.url))
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(explicit.stdout.contains("model from --source-model"))
    }

    /// A dry run approves only a plan the run could carry out: an output that exists already (without
    /// `--force`) or whose folder is missing fails it as it fails the run, exit code 2, the output named.
    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func dryRunRefusesOutputsTheRunWouldRefuse() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let existing = temp.file("Cloud.sqlite")
        try Data("not a store".utf8).write(to: existing)
        let arguments = [source.path, "--model", LegacyMessenger.targetURL.path, "--dry-run"] + stores(temp.url)
        for extra in [[], ["--json"]] {
            let refused = try CLITests.run("storesplit", arguments + extra)
            #expect(refused.status == 2, "\(refused.stdout)")
            #expect(refused.stderr.contains("storesplit: prepare outputs failed: \(existing.path) already exists (pass --force to replace it)"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
        }
        let forced = try CLITests.run("storesplit", arguments + ["--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try String(contentsOf: existing, encoding: .utf8) == "not a store")
        try FileManager.default.removeItem(at: existing)
        let missing = temp.url.appendingPathComponent("nowhere").appendingPathComponent("Local.sqlite").path
        let noFolder = try CLITests.run(
            "storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--dry-run",
                           "--store", "Cloud=\(temp.url.path)/Cloud.sqlite", "--store", "Local=\(missing)", "--store", "Cache=\(temp.url.path)/Cache.lmdb"])
        #expect(noFolder.status == 2)
        #expect(noFolder.stderr.contains("storesplit: prepare outputs failed: \(missing)"), "\(noFolder.stderr)")
        // Nothing was written by any of the dry runs.
        let written = try FileManager.default.contentsOfDirectory(atPath: temp.url.path).filter { !$0.hasPrefix("Legacy.sqlite") }
        #expect(written == [], "\(written)")
    }

    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func splitWithVerifyReportsJSONAndOutputsOpen() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.lmdb")
        try LegacyMessenger.make(.lmdb, at: source)
        let run = try CLITests.run(
            "storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--verify", "--json"] + stores(temp.url))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "no progress bar or warnings when stderr is not a terminal")
        let report = try json(run.stdout)
        #expect(report["contentVerified"] as? Bool == true)
        #expect(report["rowsCopied"] as? Int == LegacyMessenger.counts(messages: 60).values.reduce(0, +))
        // The process reports its own peak memory (VmHWM): some megabytes, never zero.
        #expect((report["peakMemoryBytes"] as? Int).map { $0 > 1_000_000 } == true)
        let inspect = try CLITests.run("storeinspect", [temp.file("Cloud.sqlite").path, "--json"])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let inspection = try json(inspect.stdout)
        #expect(inspection["configuration"] as? String == "Cloud")
        let counts = (inspection["entities"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) {
            $0[$1["entity"] as? String ?? ""] = $1["rows"] as? Int
        }
        #expect(counts == ["Account": 3, "Chat": 6, "Message": 60])
        #expect((inspection["additionalMetadata"] as? [String: String])?[LegacyMessenger.appKey] == "41")
        // An LMDB output lists only the entities of the configuration it was created for.
        let cache = try CLITests.run("storeinspect", [temp.file("Cache.lmdb").path, "--json"])
        #expect(cache.status == 0, "\(cache.stderr)")
        let cacheInspection = try json(cache.stdout)
        #expect(cacheInspection["configuration"] as? String == "Cache")
        let cacheCounts = (cacheInspection["entities"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) {
            $0[$1["entity"] as? String ?? ""] = $1["rows"] as? Int
        }
        #expect(cacheCounts == ["Avatar": 3, "LinkPreview": 4])
        // The monolithic LMDB source still reads as Default, every entity.
        let legacy = try CLITests.run("storeinspect", [source.path, "--json"])
        let legacyInspection = try json(legacy.stdout)
        #expect(legacyInspection["configuration"] as? String == "Default")
        #expect((legacyInspection["entities"] as? [Any])?.count == LegacyMessenger.counts(messages: 60).count)
    }

    /// Links and orders through the CLI: the dry run lists them, the verified JSON report counts and checksums
    /// them per output.
    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func manyToManyAndOrderedRelationshipsThroughTheCLI() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.lmdb")
        try SplitRelationshipModel.make(.lmdb, at: source)
        let model = try ModelWriter.write(try SplitRelationshipModel.target(), name: "Target", toDirectory: temp.url)
        let stores = ["--store", "Media=\(temp.url.path)/Media.sqlite", "--store", "Music=\(temp.url.path)/Music.lmdb"]
        let dry = try CLITests.run("storesplit", [source.path, "--model", model.path, "--dry-run"] + stores)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("Label.photos <-> Photo.labels in Media: many-to-many links\n"))
        #expect(dry.stdout.contains("Playlist.songs <-> Song.playlists in Music: many-to-many links with the order of songs and playlists"))
        #expect(dry.stdout.contains("Album.tracks <-> Track.album in Media: member order"))
        let run = try CLITests.run("storesplit", [source.path, "--model", model.path, "--verify", "--json"] + stores)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try json(run.stdout)
        let outputs = report["outputs"] as? [[String: Any]] ?? []
        let links = outputs.flatMap { $0["links"] as? [[String: Any]] ?? [] }.reduce(into: [String: Int]()) {
            $0["\($1["entity"] as? String ?? "").\($1["relationship"] as? String ?? "")"] = $1["links"] as? Int
        }
        #expect(links == ["Album.tracks": 28, "Label.photos": 240, "Person.friends": 40, "Playlist.songs": 55])
        #expect(outputs.flatMap { $0["links"] as? [[String: Any]] ?? [] }.allSatisfy { ($0["checksum"] as? String)?.count == 16 })
    }

    /// Exit code 1: rows written to the source while the split runs (after planning counted them) make the
    /// outputs disagree with the plan; verification refuses them and nothing is renamed into place.
    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func sourceChangedDuringTheSplitFailsVerificationWithExitCode1() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.lmdb")
        let legacy = try LegacyMessenger.make(.lmdb, at: source, messages: 3_000)
        let process = Process()
        process.executableURL = CLITests.binDirectory.appendingPathComponent("storesplit")
        // One row per transaction: Messages (Cloud) take long enough to add an Avatar (Cache, copied last).
        process.arguments = [source.path, "--model", LegacyMessenger.targetURL.path, "--batch-size", "1"] + stores(temp.url)
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        // The temporary outputs appear once planning (which counted the Avatars) is done.
        let partial = temp.file("Cloud.sqlite.storesplit-partial").path
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: partial), process.isRunning, Date() < deadline { usleep(1_000) }
        let key = try legacy.allocatePrimaryKeys(for: "Avatar", count: 1).lowerBound
        try legacy.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Avatar", primaryKey: key, values: ["accountID": "late", "imageData": .binary(Data([9]))]),
        ]))
        let stillRunning = process.isRunning
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(stillRunning, "the split finished before the source changed; the test needs a longer copy")
        #expect(process.terminationStatus == 1, "\(stderr)")
        #expect(stderr.hasPrefix("storesplit: verify failed: Avatar in Cache: source has 3 rows, copied 4, output holds 4"))
        for name in ["Cloud.sqlite", "Local.sqlite", "Cache.lmdb"] {
            #expect(!FileManager.default.fileExists(atPath: temp.file(name).path), "\(name) must not be renamed into place")
            #expect(!FileManager.default.fileExists(atPath: temp.file(name + ".storesplit-partial").path))
        }
    }

    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func exitCodesAndErrorFormat() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let model = LegacyMessenger.targetURL.path
        let noModel = try CLITests.run("storesplit", [source.path] + stores(temp.url))
        #expect(noModel.status == 64)
        #expect(noModel.stderr.hasPrefix("storesplit: arguments failed: no --model"))
        let badType = try CLITests.run("storesplit", [source.path, "--model", model, "--store", "Cloud=\(temp.url.path)/x.txt"])
        #expect(badType.status == 64)
        #expect(badType.stderr.contains("cannot tell the store type"))
        let missing = try CLITests.run("storesplit", [temp.file("nope.sqlite").path, "--model", model] + stores(temp.url))
        #expect(missing.status == 2)
        #expect(missing.stderr.hasPrefix("storesplit: open source failed: "))
        let plan = try CLITests.run(
            "storesplit", [source.path, "--model", model, "--store", "Cloud=\(temp.url.path)/Cloud.sqlite"])
        #expect(plan.status == 2)
        #expect(plan.stderr.hasPrefix("storesplit: plan failed: "))
        #expect(plan.stderr.contains("add --store Local=PATH"))
        try Data().write(to: temp.file("Local.sqlite"))
        let exists = try CLITests.run("storesplit", [source.path, "--model", model] + stores(temp.url))
        #expect(exists.status == 2)
        #expect(exists.stderr.hasPrefix("storesplit: prepare outputs failed: "))
        #expect(exists.stderr.contains("--force"))
        let forced = try CLITests.run("storesplit", [source.path, "--model", model, "--force"] + stores(temp.url))
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.contains("row counts match"))
    }

    /// SIGKILL at random points: no store ever appears under a final name unless it is complete.
    @Test(.enabled(if: built, "storesplit not built in .build/debug"))
    func killedSplitLeavesNoPartialStoreUnderAFinalName() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source, messages: 3_000)
        let arguments = [source.path, "--model", LegacyMessenger.targetURL.path, "--batch-size", "25", "--force", "--verify"] + stores(temp.url)
        var generator = SystemRandomNumberGenerator()
        var killedMidRun = 0
        for attempt in 0..<4 {
            // At once the first time, a random moment later after that.
            let delay = attempt > 0 ? UInt32.random(in: 0...(20_000 * UInt32(attempt)), using: &generator) : 0
            if try CLITests.killSplitMidRun(arguments, watching: temp.url, after: delay) { killedMidRun += 1 }
            let target = try LegacyMessenger.targetModel()
            let cloud = temp.file("Cloud.sqlite")
            if FileManager.default.fileExists(atPath: cloud.path) {
                // Renamed into place only after verification: complete.
                let store = try SQLiteStore(url: cloud, model: target, configuration: "Cloud", options: .readOnly)
                #expect(try store.count(StoreFetchRequest(entityName: "Message")) == 3_000, "attempt \(attempt)")
            }
            if FileManager.default.fileExists(atPath: temp.file("Cache.lmdb").path) {
                let store = try LMDBStore(url: temp.file("Cache.lmdb"), model: target, configuration: "Cache", options: .readOnly)
                #expect(try store.count(StoreFetchRequest(entityName: "LinkPreview")) == 4, "attempt \(attempt)")
            }
        }
        #expect(killedMidRun > 0, "at least one run must be killed before it finished")
        // A later run replaces any leftover temporary output and completes.
        let run = try CLITests.run("storesplit", arguments)
        #expect(run.status == 0, "\(run.stderr)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: temp.url.path).filter { $0.contains("storesplit-partial") }
        #expect(leftovers.isEmpty)
    }

    @Test(.enabled(if: built, "storeinspect not built in .build/debug"))
    func modelSubcommandPrintsTheCachedModelThatLoadsBack() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let run = try CLITests.run("storeinspect", ["model", source.path])
        #expect(run.status == 0, "\(run.stderr)")
        let dir = temp.file("Recovered.xcdatamodel")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(run.stdout.utf8).write(to: dir.appendingPathComponent("contents"))
        let recovered = try ModelLoader.load(at: dir)
        let legacy = try LegacyMessenger.legacyModel()
        #expect(recovered.entities.map(\.name) == legacy.entities.map(\.name))
        #expect(recovered.versionHashes == legacy.versionHashes)
        let lmdb = temp.file("Legacy.lmdb")
        try LegacyMessenger.make(.lmdb, at: lmdb)
        let fromLMDB = try CLITests.run("storeinspect", ["model", lmdb.path])
        #expect(fromLMDB.status == 0)
        #expect(fromLMDB.stdout == run.stdout)
        let missing = try CLITests.run("storeinspect", ["model", temp.file("none.sqlite").path])
        #expect(missing.status == 2)
        #expect(missing.stderr.hasPrefix("storeinspect: read model cache failed: "))
    }

    @Test(.enabled(if: built, "storeinspect not built in .build/debug"))
    func graphClustersConfigurationsAndDashesFetchedProperties() throws {
        let run = try CLITests.run("storeinspect", ["graph", LegacyMessenger.targetURL.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("digraph model {"))
        for configuration in ["Cloud", "Local", "Cache"] { #expect(run.stdout.contains("label=\"\(configuration)\";")) }
        #expect(run.stdout.contains("\"Message\" -> \"LinkPreview\" [style=dashed, label=\"preview: url == $FETCH_SOURCE.link\", color=red"))
        #expect(run.stdout.contains("\"Chat\" -> \"Message\" [label=\"messages * / chat\", dir=both]"))
    }

    @Test(.enabled(if: built && dotAvailable, "graphviz dot not installed (or storeinspect not built): SVG rendering not tested"))
    func graphRendersWithGraphviz() throws {
        let temp = TemporaryDirectory()
        let graph = try CLITests.run("storeinspect", ["graph", LegacyMessenger.targetURL.path])
        let file = temp.file("model.dot")
        try Data(graph.stdout.utf8).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/dot") ? "/usr/bin/dot" : "/usr/local/bin/dot")
        process.arguments = ["-Tsvg", file.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let svg = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(svg.contains("<svg"))
        #expect(svg.contains("LinkPreview"))
    }

    static let scriptAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

    /// On a terminal (a pty from script(1)) the progress bar shows entity, rows/s and ETA.
    @Test(.enabled(if: built && scriptAvailable, "script(1) not installed (or storesplit not built): progress bar not tested"))
    func progressBarOnATerminal() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try LegacyMessenger.make(.sqlite, at: source)
        let command = ([CLITests.binDirectory.appendingPathComponent("storesplit").path, source.path, "--model",
                        LegacyMessenger.targetURL.path, "--store", "Cloud=\(temp.url.path)/Cloud.lmdb",
                        "--store", "Local=\(temp.url.path)/Local.lmdb", "--store", "Cache=\(temp.url.path)/Cache.lmdb"])
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let terminal = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(terminal)")
        // The first entity is drawn at once, the last at 100%.
        #expect(terminal.contains("0% Cloud.Account 0/3"))
        #expect(terminal.contains("100% Cache.LinkPreview 4/4"))
        #expect(terminal.contains("rows/s  ETA "))
    }
}

/// Issue #12 point 5 from the command line: a store whose `Z_MAX` lies below its keys is split with a warning,
/// and the report says the output's `Z_MAX` was raised.
@Suite struct SplitZMaxCLITests {
    @Test(.enabled(if: CLITests.built && SQLite3.available, "storesplit not built in .build/debug, or no sqlite3 CLI"))
    func zMaxBelowTheKeysIsReported() throws {
        let temp = TemporaryDirectory()
        let source = temp.file("Legacy.sqlite")
        try (LegacyMessenger.make(.sqlite, at: source) as! BulkCopyStore).closeFiles()
        try SQLite3.execute(source.path, "UPDATE Z_PRIMARYKEY SET Z_MAX = 0 WHERE Z_NAME = 'Chat'")
        let stores = ["Cloud=\(temp.url.path)/Cloud.sqlite", "Local=\(temp.url.path)/Local.sqlite", "Cache=\(temp.url.path)/Cache.lmdb"]
            .flatMap { ["--store", $0] }
        let dry = try CLITests.run("storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--dry-run"] + stores)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("warning: Z_MAX of Chat is 0 but the source holds primary keys up to 6"))
        let run = try CLITests.run("storesplit", [source.path, "--model", LegacyMessenger.targetURL.path, "--verify"] + stores)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("storesplit: warning: Z_MAX of Chat is 0"))
        #expect(run.stdout.contains("Z_MAX of Chat raised from 0 to 6, the largest primary key"))
        #expect(try SQLite3.query("\(temp.url.path)/Cloud.sqlite", "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Chat'") == "6")
    }
}

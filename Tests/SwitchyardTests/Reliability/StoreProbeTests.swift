import Foundation
import Testing

@testable import Switchyard

/// The tools read an LMDB store in a child process first (`StoreProbe`): a child that dies by a signal
/// becomes an error naming the store and the signal; the tool itself never goes down.
@Suite struct StoreProbeTests {
    let dir = TemporaryDirectory()

    func probe(_ script: String) throws {
        try StoreProbe.probe(URL(fileURLWithPath: "/stores/Cloud.lmdb"), executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script])
    }

    @Test func aChildKilledByASignalIsADamagedStore() throws {
        #expect {
            try probe("kill -BUS $$")
        } throws: { error in
            guard case SplitError.source(let path, let reason) = error else { return false }
            return path == "/stores/Cloud.lmdb" && reason.contains("signal \(SIGBUS)") && reason.contains("damaged")
        }
        #expect {
            try probe("kill -SEGV $$")
        } throws: { error in
            "\(error)".contains("signal \(SIGSEGV)")
        }
    }

    @Test func aChildThatFailsReportsItsOwnError() throws {
        #expect {
            try probe("echo 'first line' >&2; echo 'storeinspect: probe failed: not a LMDB store' >&2; exit 2")
        } throws: { error in
            guard case SplitError.source(_, let reason) = error else { return false }
            return reason == "reading every row failed: not a LMDB store"
        }
        // The child's own prefix and the path it repeats are said once, by storesplit.
        #expect {
            try probe("echo 'storeinspect: probe failed: /stores/Cloud.lmdb: /stores/Cloud.lmdb (configuration Default): not a LMDB store: bad page' >&2; exit 2")
        } throws: { error in
            "\(error)" == "open source failed: /stores/Cloud.lmdb: reading every row failed: not a LMDB store: bad page"
        }
        try probe("exit 0")
    }

    /// What the child does on a healthy store: every row of every entity, and the to-many members.
    @Test func readEverythingReadsEveryRow() throws {
        let url = dir.file("healthy.lmdb")
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Box", attributes: [AttributeDescription(name: "label", type: .string)],
                relationships: [RelationshipDescription(name: "items", destination: "Item", inverse: "box", isToMany: true)]),
            EntityDescription(name: "Item", attributes: [AttributeDescription(name: "n", type: .integer64)],
                relationships: [RelationshipDescription(name: "box", destination: "Box", inverse: "items")]),
        ])
        do {
            let store = try LMDBStore(url: url, model: model, configuration: "Default")
            let boxes = try store.allocatePrimaryKeys(for: "Box", count: 3)
            let items = try store.allocatePrimaryKeys(for: "Item", count: 5_000)
            try store.save(StoreChangeSet(inserts: boxes.map { StoreRow(entityName: "Box", primaryKey: $0, values: ["label": .string("b\($0)")]) }
                + items.map { StoreRow(entityName: "Item", primaryKey: $0, values: ["n": .integer($0)],
                    toOne: ["box": RowReference(entityName: "Box", primaryKey: boxes.lowerBound + $0 % 3)]) }))
        }
        #expect(try StoreProbe.readEverything(at: url) == 5_003)
    }

    @Test(.enabled(if: CLITests.built, "storesplit not built"), arguments: DamagedLMDBTests.damaged)
    func storesplitRefusesADamagedSourceWithoutCrashing(name: String) throws {
        let url = try DamagedLMDBTests().storeDirectory(with: name)
        let model = try ModelWriter.write(try ObjectModel(entities: [EntityDescription(name: "Thing")]), toDirectory: dir.url)
        let run = try CLITests.run("storesplit", [url.path, "--model", model.path, "--store", "Default=\(dir.file("out.sqlite").path)"])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("storesplit: ") && run.stderr.contains("damaged"), "\(run.stderr)")
    }

    /// Found by fuzzing (fuzz-lmdb, 2026-11-24): a file the page walk accepts but on which liblmdb's
    /// `mdb_dbi_open` writes through a null pointer. In-process it still crashes (README "Known limits"); the
    /// tools read it in their probe child and fail the step instead.
    @Test(.enabled(if: CLITests.built, "storeinspect not built"))
    func storeinspectSurvivesAStoreThatCrashesLiblmdb() throws {
        let url = dir.file("dbi.lmdb")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Reproducers.data("lmdb-fuzz-dbi-open-segv.data.mdb").write(to: url.appendingPathComponent("data.mdb"))
        let run = try CLITests.run("storeinspect", [url.path])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("storeinspect: inspect failed:") && run.stderr.contains("killed the probe process with signal"), "\(run.stderr)")
    }
}

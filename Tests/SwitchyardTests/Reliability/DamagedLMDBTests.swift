import Foundation
import Testing
import Switchyard

/// Damaged `data.mdb` files that liblmdb does not survive (an `assert` → abort, a read outside the map →
/// SIGBUS): the page walk before opening turns them into `StoreError.notAStore`, in the library and in the
/// tools, which print a clear error instead of dying.
@Suite struct DamagedLMDBTests {
    let dir = TemporaryDirectory()

    static let damaged = ["lmdb-damaged-page-abort.data.mdb", "lmdb-damaged-page-sigbus.data.mdb"]

    func storeDirectory(with dataFile: String) throws -> URL {
        let url = dir.file(dataFile.replacingOccurrences(of: ".data.mdb", with: ".lmdb"))
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Reproducers.data(dataFile).write(to: url.appendingPathComponent("data.mdb"))
        return url
    }

    @Test(arguments: damaged)
    func damagedPagesAreNotAStore(name: String) throws {
        let url = try storeDirectory(with: name)
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64)]),
        ])
        for options in [StoreOptions.readOnly, .default] {
            #expect {
                _ = try LMDBStore(url: url, model: model, configuration: "Default", options: options)
            } throws: { error in
                guard case StoreError.notAStore(let path, .lmdb, let reason) = error else { return false }
                return path == url.path && reason.contains("damaged")
            }
        }
    }

    /// The whole-file walk the tools run (any size) finds the same damage.
    @Test(arguments: damaged)
    func checkFileFindsDamagedPages(name: String) throws {
        let url = try storeDirectory(with: name)
        #expect {
            try LMDBStore.checkFile(at: url)
        } throws: { error in
            guard case StoreError.notAStore(_, .lmdb, let reason) = error else { return false }
            return reason.contains("damaged")
        }
    }

    @Test(.enabled(if: CLITests.built, "storeinspect not built"), arguments: damaged)
    func storeinspectReportsDamagedPages(name: String) throws {
        let url = try storeDirectory(with: name)
        let run = try CLITests.run("storeinspect", [url.path])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("damaged"), "\(run.stderr)")
    }

    @Test(.enabled(if: CLITests.built, "storeinspect not built"))
    func storeinspectReportsAnEmptyDataFile() throws {
        let url = dir.file("empty.lmdb")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: url.appendingPathComponent("data.mdb").path, contents: Data())
        let run = try CLITests.run("storeinspect", [url.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("empty"), "\(run.stderr)")
    }

    /// A healthy store with enough rows for branch pages and overflow values passes the walk, read-only and
    /// read-write.
    @Test func healthyStorePassesThePageWalk() throws {
        let url = dir.file("healthy.lmdb")
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [
                AttributeDescription(name: "number", type: .integer64, isIndexed: true),
                AttributeDescription(name: "blob", type: .binary),
            ]),
        ])
        do {
            let store = try LMDBStore(url: url, model: model, configuration: "Default")
            _ = try store.allocatePrimaryKeys(for: "Record", count: 3_000)
            var rows: [StoreRow] = []
            for key in 1...3_000 {
                let size = key % 100 == 0 ? 20_000 : 40
                let values: [String: AttributeValue] = [
                    "number": .integer(Int64(key)), "blob": .binary(Data(repeating: UInt8(key % 256), count: size)),
                ]
                rows.append(StoreRow(entityName: "Record", primaryKey: Int64(key), values: values))
            }
            try store.save(StoreChangeSet(inserts: rows))
        }
        try LMDBStore.checkFile(at: url)
        let reader = try LMDBStore(url: url, model: model, configuration: "Default", options: .readOnly)
        #expect(try reader.count(StoreFetchRequest(entityName: "Record")) == 3_000)
    }

    /// Found by fuzzing (fuzz-lmdb, 2026-11-24): a rows database whose header claims about 7e18 entries passed
    /// the page walk, and fetching every row reserved room for all of them (an allocation of exabytes, a
    /// crash). Fetching it now reads what is there (or reports damage), as `storeinspect` and the fuzz target do.
    @Test func aDatabaseHeaderClaimingTooManyEntriesDoesNotCrashAFetch() throws {
        let url = try storeDirectory(with: "lmdb-fuzz-entry-count-huge.data.mdb")
        let model = try #require(try StoreInspection.storedModel(url), "the damaged store still holds its model cache")
        let configuration = model.configurationNames.first ?? "Default"
        let store = try LMDBStore(url: url, model: model, configuration: configuration, options: .readOnly)
        for entity in store.entities {
            do {
                let rows = try store.fetch(StoreFetchRequest(entityName: entity.name))
                #expect(rows.count < 1_000_000)
            } catch let error as StoreError {
                guard case .notAStore = error else { throw error }
            }
        }
    }

    /// Found by fuzzing (fuzz-lmdb, 2026-11-24): a meta page whose last page number is the largest UInt64 made
    /// the length check overflow (a trap) before anything was read. It is `notAStore` now.
    @Test func aMetaPageNamingTheLastPossiblePageIsNotAStore() throws {
        let url = try storeDirectory(with: "lmdb-fuzz-last-page-overflow.data.mdb")
        #expect {
            try LMDBStore.checkFile(at: url)
        } throws: { error in
            guard case StoreError.notAStore(_, .lmdb, let reason) = error else { return false }
            return reason.contains("impossible last page")
        }
    }

    /// Found by fuzzing (fuzz-lmdb, 2026-11-27): a meta page whose transaction id has every bit set made the
    /// page walk's conversion of `mdb_txn_id` (a size_t, an Int in Swift) trap. Opening it is `notAStore` now,
    /// read-only or not, through the coordinator as a user opens it.
    @Test func aMetaPageHoldingAnImpossibleTransactionIDIsNotAStore() throws {
        let url = try storeDirectory(with: "lmdb-fuzz-txnid-overflow.data.mdb")
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64)]),
        ])
        for options in [StoreOptions.readOnly, .default] {
            #expect {
                _ = try StoreCoordinator(model: model).addStore(.lmdb, configuration: "Default", at: url, options: options)
            } throws: { error in
                guard case StoreError.notAStore(let path, .lmdb, let reason) = error else { return false }
                return path == url.path && reason.contains("meta page 0 holds an impossible transaction id 18446744073709551615")
            }
        }
        #expect(throws: StoreError.self) { try LMDBStore.checkFile(at: url) }
    }
}

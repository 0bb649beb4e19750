import Foundation
import Testing
@testable import Switchyard
import SwitchyardPostgreSQL

/// A migration killed with SIGKILL half-way (in a child process, after its first batch) leaves the old store:
/// it opens with its old model and every row is as it was; opening it again then migrates it whole. On
/// PostgreSQL the server rolls back the killed connection's transaction, DDL included.
@Suite struct MigrationCrashTests {
    let dir = TemporaryDirectory()

    /// The helper's models (Tests/LMDBCrashHelper/MigrationCrash.swift declares the same).
    static func model(_ version: Int) throws -> ObjectModel {
        let note = version == 1
            ? AttributeDescription(name: "note", type: .string)
            : AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: .string("-"))
        return try ObjectModel(entities: [
            EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64), note]),
        ])
    }

    static func open(_ backend: Backend, _ url: URL, _ model: ObjectModel) throws -> any PersistentStore {
        switch backend {
        case .sqlite: return try SQLiteStore(url: url, model: model, configuration: "Default")
        case .postgresql: return try PostgreSQLStore(url: url, model: model, configuration: "Default")
        default: return try LMDBStore(url: url, model: model, configuration: "Default")
        }
    }

    @Test(.enabled(if: LMDBDurabilityTests.crashHelper != nil, "lmdb-crash-helper is not built: run `swift build --build-tests`"),
          arguments: [Backend.sqlite, .lmdb] + (TestServer.isSkipped ? [] : [.postgresql]))
    func migrationKilledHalfWayLeavesTheOldStore(backend: Backend) throws {
        let helper = try #require(LMDBDurabilityTests.crashHelper)
        let url = backend.url(in: dir, name: "crash")!
        let rows = 4 * StoreMigration.batchSize
        do {
            let store = try Self.open(backend, url, try Self.model(1))
            _ = try store.allocatePrimaryKeys(for: "Record", count: rows)
            var inserts: [StoreRow] = []
            for i in 1...rows {
                var values: [String: AttributeValue] = ["number": .integer(Int64(i))]
                if i % 2 == 0 { values["note"] = .string("n") }
                inserts.append(StoreRow(entityName: "Record", primaryKey: Int64(i), values: values))
            }
            try store.save(StoreChangeSet(inserts: inserts))
        }
        let child = Process()
        child.executableURL = helper
        child.arguments = ["migrate", backend.rawValue, backend == .postgresql ? url.absoluteString : url.path]
        let output = Pipe(), errors = Pipe()
        child.standardOutput = output
        child.standardError = errors
        try child.run()
        var transcript = ""
        while !transcript.contains("batch ") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            transcript += String(decoding: chunk, as: UTF8.self)
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        transcript += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(transcript.hasPrefix("batch "), "\(transcript) \(stderr)")
        #expect(!transcript.contains("finished"))
        #expect(child.terminationReason == .uncaughtSignal)

        do {
            let old = try Self.open(backend, url, try Self.model(1))
            #expect(try old.storedModel() == Self.model(1))
            #expect(try old.count(StoreFetchRequest(entityName: "Record")) == rows)
            #expect(try old.count(StoreFetchRequest(entityName: "Record", predicate: FetchPredicate(format: "note == nil"))) == rows / 2)
        }
        let migrated = try Self.open(backend, url, try Self.model(2))
        #expect(try migrated.count(StoreFetchRequest(entityName: "Record", predicate: FetchPredicate(format: "note == '-'"))) == rows / 2)
        #expect(try migrated.count(StoreFetchRequest(entityName: "Record")) == rows)
    }
}

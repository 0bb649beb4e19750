import Foundation
import Testing

@testable import Switchyard

/// A SQLite writer facing another process's write lock gives up after `StoreOptions.writeTimeout`, as the LMDB
/// store does, with an error that says so; reads go on meanwhile.
@Suite struct SQLiteBusyTimeoutTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [EntityDescription(name: "Record", attributes: [AttributeDescription(name: "number", type: .integer64)])])
    }

    @Test(.enabled(if: SQLite3.available, "sqlite3 is not installed"))
    func aWriteGivesUpAfterTheWriteTimeout() throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("busy.sqlite")
        var options = StoreOptions.default
        options.writeTimeout = 1
        let store = try SQLiteStore(url: url, model: try Self.model(), configuration: "Default", options: options)
        let key = try store.allocatePrimaryKeys(for: "Record", count: 1).lowerBound
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Record", primaryKey: key, values: ["number": .integer(1)])]))

        // Another process takes the write lock and keeps it for 3 s.
        let holder = Process()
        holder.executableURL = SQLite3.executable
        holder.arguments = [url.path]
        let marker = dir.url.appendingPathComponent("locked")
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        defer {
            holder.terminate()
            holder.waitUntilExit()
        }
        // sqlite3 buffers what it prints to a pipe: it signals through a file once it holds the lock.
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\n.shell touch '\(marker.path)'\n.shell sleep 3\nCOMMIT;\n".utf8))
        try input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: marker.path), Date() < deadline { usleep(10_000) }
        try #require(FileManager.default.fileExists(atPath: marker.path), "sqlite3 did not take the lock")

        let started = Date()
        #expect {
            let next = try store.allocatePrimaryKeys(for: "Record", count: 1).lowerBound
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Record", primaryKey: next, values: ["number": .integer(2)])]))
        } throws: { error in
            guard case StoreError.sqlite(let path, "Default", _, let code, let message) = error else { return false }
            return path == url.path && code & 0xFF == 5 && message.contains("write timeout")
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.9 && waited < 2.9, "waited \(waited) s for a 1 s write timeout")
        #expect(try store.count(StoreFetchRequest(entityName: "Record")) == 1, "reads go on while another process writes")
    }
}

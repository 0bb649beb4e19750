import Foundation
import Switchyard

// lmdb-crash-helper: the child process of LMDBDurabilityTests' crash test.
//
//   lmdb-crash-helper STORE COMMITTED PENDING
//
// Opens the LMDB store at STORE (a model with one entity, Blob: seq Integer 64 indexed, payload Binary),
// commits COMMITTED rows in saves of 10, prints "committed N", allocates PENDING more keys, prints "writing",
// and saves the PENDING rows (64 KiB each) in one transaction — during which the test kills it with SIGKILL.
// "finished" is printed only if that save returns. Payloads of committed rows encode their primary key, so
// the test can check every byte that was committed.

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

runMigrationCrashModeIfAsked()   // `migrate` mode: see MigrationCrash.swift
runCreationCrashModeIfAsked()    // `create` mode: see CreateCrash.swift
runHistoryPeerModeIfAsked()      // `history-peer` mode: see HistoryPeer.swift
runPostgresWorkerModeIfAsked()   // `pg-worker` and `pg-conflict` modes: see PostgresWorker.swift

let arguments = CommandLine.arguments
guard arguments.count == 4, let committed = Int(arguments[2]), let pending = Int(arguments[3]), committed >= 0, pending > 0 else {
    FileHandle.standardError.write(Data("usage: lmdb-crash-helper STORE COMMITTED PENDING\n".utf8))
    exit(64)
}

/// 64 KiB: the primary key (8 bytes, big-endian), then the key modulo 251 repeated.
func payload(_ key: Int64) -> Data {
    var data = Data(repeating: UInt8(key % 251), count: 65_536)
    withUnsafeBytes(of: key.bigEndian) { data.replaceSubrange(0..<8, with: $0) }
    return data
}

do {
    let model = try ObjectModel(entities: [
        EntityDescription(name: "Blob", attributes: [
            AttributeDescription(name: "seq", type: .integer64, isIndexed: true),
            AttributeDescription(name: "payload", type: .binary),
        ]),
    ])
    let store = try LMDBStore(
        url: URL(fileURLWithPath: arguments[1]), model: model, configuration: "Default",
        options: StoreOptions(initialMapSize: 1 << 20))
    var written = 0
    while written < committed {
        let keys = try store.allocatePrimaryKeys(for: "Blob", count: min(10, committed - written))
        try store.save(StoreChangeSet(inserts: keys.map {
            StoreRow(entityName: "Blob", primaryKey: $0, values: ["seq": .integer($0), "payload": .binary(payload($0))])
        }))
        written += keys.count
    }
    say("committed \(written)")
    let keys = try store.allocatePrimaryKeys(for: "Blob", count: pending)
    let shared = Data(repeating: 0xAB, count: 65_536)   // one buffer: the child's memory is LMDB's dirty pages
    let big = StoreChangeSet(inserts: keys.map {
        StoreRow(entityName: "Blob", primaryKey: $0, values: ["seq": .integer($0), "payload": .binary(shared)])
    })
    say("writing")
    try store.save(big)
    say("finished")
} catch {
    FileHandle.standardError.write(Data("lmdb-crash-helper: \(error)\n".utf8))
    exit(1)
}

import FuzzSupport
import Foundation
import Switchyard

// fuzz-predicate: the input as an NSPredicate format string. The parser must never crash; a predicate that
// parses is run on the same rows in a memory, a SQLite and an LMDB store, and when every store answers, the
// answers must be the same rows (a difference aborts: a parity finding). FUZZ_PARITY_LMDB=0 leaves LMDB out
// of the comparison (it still runs), for fuzzing past a known LMDB difference.

/// The model, rows and three stores every input runs against (static: created on first use).
enum Fixture {
    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Person",
            attributes: [
                AttributeDescription(name: "name", type: .string, isIndexed: true),
                AttributeDescription(name: "age", type: .integer64, isIndexed: true),
                AttributeDescription(name: "score", type: .double),
                AttributeDescription(name: "born", type: .date),
                AttributeDescription(name: "token", type: .uuid),
                AttributeDescription(name: "active", type: .boolean),
            ],
            relationships: [RelationshipDescription(name: "friend", destination: "Person")]),
    ])
    static let rows: [StoreRow] = [
        ("Ann", 30, 1.5, true), ("bob", 25, -2, false), ("Émile", 41, 99, true), ("", 0, 0, false),
        ("ann", 30, .infinity, true), ("Zoë", -7, 3.25, false), ("a%b_c", 12, 0.1, true),
    ].enumerated().map { index, row in
        var values: [String: AttributeValue] = [
            "name": .string(row.0), "age": .integer(Int64(row.1)), "score": .double(row.2), "active": .bool(row.3),
            "born": .date(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400)),
        ]
        if index % 2 == 0 { values["token"] = .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5\(index)")!) }
        let key = Int64(index + 1)
        let friend = RowReference(entityName: "Person", primaryKey: Int64((index + 1) % 7 + 1))
        return StoreRow(entityName: "Person", primaryKey: key, values: values, toOne: index == 3 ? [:] : ["friend": friend])
    }

    static func filled(_ store: any PersistentStore) -> any PersistentStore {
        _ = try! store.allocatePrimaryKeys(for: "Person", count: rows.count)
        try! store.save(StoreChangeSet(inserts: rows))
        return store
    }

    nonisolated(unsafe) static let stores: [(String, any PersistentStore)] = [
        ("memory", filled(try! InMemoryStore(model: model, configuration: "Default"))),
        ("sqlite", filled(try! SQLiteStore(url: fuzzScratch.appendingPathComponent("p.sqlite"), model: model, configuration: "Default"))),
        ("lmdb", filled(try! LMDBStore(url: fuzzScratch.appendingPathComponent("p.lmdb"), model: model, configuration: "Default"))),
    ]
    static let compareLMDB = ProcessInfo.processInfo.environment["FUZZ_PARITY_LMDB"] != "0"
}

/// One input (libFuzzer calls this by its C name).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard count <= 512 else { return 0 }
    let format = String(decoding: fuzzData(bytes, count), as: UTF8.self)
    guard let predicate = try? FetchPredicate(format: format) else { return 0 }
    var answers: [(String, [Int64])] = []
    for (name, store) in Fixture.stores {
        guard let found = try? store.fetch(StoreFetchRequest(entityName: "Person", predicate: predicate)) else { continue }
        if name == "lmdb" && !Fixture.compareLMDB { continue }
        answers.append((name, found.map(\.primaryKey).sorted()))
    }
    if answers.count == (Fixture.compareLMDB ? 3 : 2), let first = answers.first, answers.contains(where: { $0.1 != first.1 }) {
        FileHandle.standardError.write(Data("parity: \(format)\n\(answers)\n".utf8))
        abort()
    }
    return 0
}

exit(runFuzzer(fuzzOne))

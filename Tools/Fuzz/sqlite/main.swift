import FuzzSupport
import Foundation
import Switchyard

// fuzz-sqlite: the input written as a store file and opened the way storeinspect does (StoreInspection:
// header, Z_METADATA plist, model cache, row counts), then read-only with the model it holds, fetching every
// row of every entity. Seeds are small Switchyard stores (Tools/Fuzz/corpus/sqlite).
enum Scratch {
    static let store = fuzzScratch.appendingPathComponent("fuzz.sqlite")
}
// FUZZ_WRITE_SEED=PATH: write a small store (two entities, a to-many, a few rows) at PATH and exit.
if let seed = ProcessInfo.processInfo.environment["FUZZ_WRITE_SEED"] {
    try! writeSeedRows(try! SQLiteStore(url: URL(fileURLWithPath: seed), model: try! seedModel(), configuration: "Main"))
    exit(0)
}

/// One input (libFuzzer calls this by its C name).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let store = Scratch.store
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
    FileManager.default.createFile(atPath: store.path, contents: fuzzData(bytes, count))
    _ = try? StoreInspection.inspect(store, model: nil)
    if let model = try? StoreInspection.storedModel(store), let configuration = model.configurationNames.first ?? Optional("Default"),
        let opened = try? SQLiteStore(url: store, model: model, configuration: configuration, options: .readOnly)
    {
        for entity in opened.entities { _ = try? opened.fetch(StoreFetchRequest(entityName: entity.name)) }
    }
    return 0
}

exit(runFuzzer(fuzzOne))

import FuzzSupport
import Foundation
import Switchyard

// fuzz-lmdb: the input written as an LMDB store's data.mdb (a fresh directory each time: LMDB keeps one
// environment per directory and process) and opened the way storeinspect does, then read-only with the
// model it holds, fetching every row and counting rows with predicates on each attribute. The page walk must reject what liblmdb cannot survive; an abort or
// SIGBUS inside liblmdb is a finding.
// FUZZ_WRITE_SEED=PATH: write a small store (two entities, a to-many, a few rows) at PATH and exit.
if let seed = ProcessInfo.processInfo.environment["FUZZ_WRITE_SEED"] {
    try! writeSeedRows(try! LMDBStore(url: URL(fileURLWithPath: seed), model: try! seedModel(), configuration: "Main"))
    exit(0)
}

/// Inputs run so far (each gets its own directory).
nonisolated(unsafe) var round = 0
/// One input (libFuzzer calls this by its C name).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    round += 1   // libFuzzer runs inputs on one thread
    let directory = fuzzScratch.appendingPathComponent("r\(round).lmdb")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    FileManager.default.createFile(atPath: directory.appendingPathComponent("data.mdb").path, contents: fuzzData(bytes, count))
    _ = try? StoreInspection.inspect(directory, model: nil)
    if let model = try? StoreInspection.storedModel(directory), let configuration = model.configurationNames.first ?? Optional("Default"),
        let opened = try? LMDBStore(url: directory, model: model, configuration: configuration, options: .readOnly)
    {
        for entity in opened.entities {
            _ = try? opened.fetch(StoreFetchRequest(entityName: entity.name))
            // Counts with a predicate read each attribute straight from the encoded rows, past the values before
            // it (LMDBRowCoding's skips): a damaged row must be an error there too.
            for attribute in entity.attributes {
                for (op, constant) in [(ComparisonOperator.notEqual, AttributeValue.null), (.equal, .integer(3)), (.greater, .integer(0)), (.less, .string("m"))] {
                    let predicate = FetchPredicate.comparison(Comparison(.keyPath([attribute.name]), op, .constant(constant)))
                    _ = try? opened.count(StoreFetchRequest(entityName: entity.name, predicate: predicate))
                }
            }
        }
    }
    return 0
}

exit(runFuzzer(fuzzOne))

import CFuzzDriver
import Foundation
import Switchyard

/// Runs libFuzzer with this process's arguments (`-max_total_time=…`, a corpus folder, …), calling `body`
/// for every input; returns libFuzzer's exit code. A crash, a trap or an ASan report in `body` is a finding.
public func runFuzzer(_ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    return LLVMFuzzerRunDriver(&argc, &argv, body)
}

/// The input as `Data`.
public func fuzzData(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Data {
    guard let bytes, count > 0 else { return Data() }
    return Data(bytes: bytes, count: count)
}

/// A scratch folder for this process, removed by the OS's tmp cleaning (fuzz runs are long-lived).
public let fuzzScratch: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-fuzz-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

/// The seed stores' model: Owner 1-n Pet, an indexed string and a binary attribute, configuration `Main`.
public func seedModel() throws -> ObjectModel {
    try ObjectModel(
        entities: [
            EntityDescription(
                name: "Owner",
                attributes: [AttributeDescription(name: "name", type: .string, isIndexed: true)],
                relationships: [RelationshipDescription(name: "pets", destination: "Pet", inverse: "owner", isToMany: true)]),
            EntityDescription(
                name: "Pet",
                attributes: [AttributeDescription(name: "age", type: .integer64), AttributeDescription(name: "blob", type: .binary)],
                relationships: [RelationshipDescription(name: "owner", destination: "Owner", inverse: "pets")]),
        ],
        configurations: [ConfigurationDescription(name: "Main", entityNames: ["Owner", "Pet"])])
}

/// Fills a seed store (`seedModel()`): three owners and six pets.
public func writeSeedRows(_ store: any PersistentStore) throws {
    _ = try store.allocatePrimaryKeys(for: "Owner", count: 3)
    _ = try store.allocatePrimaryKeys(for: "Pet", count: 6)
    let owners = (1...3).map { StoreRow(entityName: "Owner", primaryKey: Int64($0), values: ["name": .string("owner \($0)")]) }
    let pets = (1...6).map {
        StoreRow(
            entityName: "Pet", primaryKey: Int64($0), values: ["age": .integer(Int64($0)), "blob": .binary(Data(repeating: 7, count: $0 * 10))],
            toOne: ["owner": RowReference(entityName: "Owner", primaryKey: Int64($0 % 3 + 1))])
    }
    try store.save(StoreChangeSet(inserts: owners + pets))
}

import FuzzSupport
import Foundation
import Switchyard

// fuzz-plist: bytes as a binary property list (BinaryPropertyList), a keyed archive (KeyedArchive and the
// Core Data model reader) and store metadata (StoreMetadata.decode).
/// One input (libFuzzer calls this by its C name).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = fuzzData(bytes, count)
    _ = try? BinaryPropertyList(data, source: "fuzz")
    if let archive = try? KeyedArchive(data, source: "fuzz") {
        _ = try? ArchivedModelReader(archive: archive, source: "fuzz").model()
    }
    _ = try? StoreMetadata.decode(data)
    return 0
}

exit(runFuzzer(fuzzOne))

import FuzzSupport
import Foundation
import Switchyard

// fuzz-deflate: bytes as raw DEFLATE (Deflate.decompress, bounded output) and as a model cache blob
// (ModelCache.decode: inflate, then keyed archive or model XML).
/// One input (libFuzzer calls this by its C name).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = fuzzData(bytes, count)
    if let inflated = try? Deflate.decompress(data, maxOutput: 1 << 20) {
        _ = try? Deflate.compress(inflated)
    }
    _ = try? ModelCache.decode(data, source: "fuzz")
    return 0
}

exit(runFuzzer(fuzzOne))

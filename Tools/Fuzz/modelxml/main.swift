import FuzzSupport
import Foundation
import Switchyard

// fuzz-modelxml: model `contents` XML through ModelLoader (XMLParser after the UTF-8 check), then the model
// written back and read again. Any error is fine; a crash is a finding.
/// One input (libFuzzer calls this by its C name).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = fuzzData(bytes, count)
    // The same bytes as an Xcode mapping model's xcmapping.xml (the same XMLParser, archived expressions inside).
    _ = try? MappingModel.load(xml: data, source: "fuzz-mapping")
    if let model = try? ModelLoader.load(contentsXML: data, source: "fuzz") {
        _ = try? ModelLoader.load(contentsXML: Data(ModelWriter.xml(for: model).utf8), source: "fuzz-rewritten")
    }
    return 0
}

exit(runFuzzer(fuzzOne))

import CFuzzDriver
import Foundation

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

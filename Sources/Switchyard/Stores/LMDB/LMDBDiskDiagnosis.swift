import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - LMDBDiskDiagnosis

/// Says why a write failed when LMDB only reports `EIO`: liblmdb turns a short write (the disk filled up
/// in the middle of it, or the process's file-size limit was reached) into "Input/output error".
enum LMDBDiskDiagnosis {
    /// Less free space than this on the store's file system counts as full.
    static let nearlyFull: UInt64 = 1 << 20

    /// "no space left on the device …" or "the file size limit … is reached", or nil when neither applies.
    static func explain(storeDirectory: String) -> String? {
        var stats = statvfs()
        if statvfs(storeDirectory, &stats) == 0 {
            let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
            if free < nearlyFull {
                return "no space left on the device holding the store: \(free) bytes free"
            }
        }
        var limit = rlimit()
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        if getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max {
            let dataPath = (storeDirectory as NSString).appendingPathComponent("data.mdb")
            let size = (try? FileManager.default.attributesOfItem(atPath: dataPath)[.size] as? NSNumber)?.uint64Value ?? 0
            if size + (1 << 16) >= UInt64(limit.rlim_cur) {
                return "the file size limit (ulimit -f) of \(limit.rlim_cur) bytes is reached: data.mdb is \(size) bytes"
            }
        }
        return nil
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - DiskDiagnosis

/// Says why a write failed when the engine only reports an I/O error: liblmdb turns a short write (the disk
/// filled up in the middle of it, or the process's file-size limit was reached) into `EIO`, and SQLite may
/// report a `-shm` that cannot grow as "disk I/O error" (SQLITE_IOERR_SHMSIZE).
package enum DiskDiagnosis {
    /// Less free space than this on the store's file system counts as full.
    package static let nearlyFull: UInt64 = 1 << 20

    /// "no space left on the device …" or "the file size limit … is reached", or nil when neither applies.
    /// `storeDirectory` is the LMDB store's directory, or the directory holding a SQLite store (`dataFile`
    /// then names the file to compare with the size limit).
    package static func explain(storeDirectory: String, dataFile: String = "data.mdb") -> String? {
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
            let dataPath = (storeDirectory as NSString).appendingPathComponent(dataFile)
            let size = (try? FileManager.default.attributesOfItem(atPath: dataPath)[.size] as? NSNumber)?.uint64Value ?? 0
            if size + (1 << 16) >= UInt64(limit.rlim_cur) {
                return "the file size limit (ulimit -f) of \(limit.rlim_cur) bytes is reached: \(dataFile) is \(size) bytes"
            }
        }
        return nil
    }
}

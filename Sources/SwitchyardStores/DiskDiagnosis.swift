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

    /// Why a store cannot be created or opened for writing in `folder`, or nil when the folder can be written:
    /// "the folder /x does not exist", "/x is not a folder", "cannot write in /x: Read-only file system" (or
    /// "Permission denied", "No space left on device"). SQLite reports all of these only as "unable to open
    /// database file". When `creatable` (LMDB creates its directory), a folder that does not exist is judged by
    /// its nearest existing ancestor. The one place that decides whether a store's folder can be written.
    package static func folderProblem(_ folder: String, creatable: Bool = false) -> String? {
        var candidate = folder.isEmpty ? "." : folder
        while true {
            var info = stat()
            if stat(candidate, &info) == 0 {
                if info.st_mode & S_IFMT != S_IFDIR { return "\(candidate) is not a folder" }
                return writeProblem(candidate).map { "cannot write in \(candidate): \($0)" }
            }
            let code = errno
            guard code == ENOENT else { return "cannot reach \(candidate): \(String(cString: strerror(code)))" }
            guard creatable else { return "the folder \(folder) does not exist" }
            let parent = (candidate as NSString).deletingLastPathComponent
            if parent == candidate || parent.isEmpty { return nil }
            candidate = parent
        }
    }

    /// The system's reason a file cannot be created in `directory`, found by creating (and removing) a probe
    /// file rather than by access(2): that also catches a full inode table, and permissions for root.
    private static func writeProblem(_ directory: String) -> String? {
        let probe = directory + "/.switchyard-probe-" + UUID().uuidString
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        close(fd)
        unlink(probe)
        return nil
    }
}

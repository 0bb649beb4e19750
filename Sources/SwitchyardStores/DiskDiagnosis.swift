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
    /// database file". The one place that decides whether a store's folder can be written.
    ///
    /// - `creatable`: the folder is created when missing (LMDB's directory, with its parents), so a missing
    ///   folder is judged by its nearest existing ancestor.
    /// - `probing`: decide by creating (and removing) a probe file, which also catches a full inode table and
    ///   permissions for root; for checks before writing. Without it, `access(2)` only: for explaining a failure
    ///   after the fact, which must never write beside a store.
    package static func folderProblem(_ folder: String, creatable: Bool = false, probing: Bool = false) -> String? {
        let start = folder.isEmpty ? "." : folder   // the folder of a bare file name is the working directory
        var candidate = start
        while true {
            var info = stat()
            if stat(candidate, &info) == 0 {
                if info.st_mode & S_IFMT != S_IFDIR { return "\(candidate) is not a folder" }
                if candidate != start, !creatable { return "the folder \(start) does not exist" }
                return writeProblem(candidate, probing: probing).map { "cannot write in \(candidate): \($0)" }
            }
            let code = errno
            // A missing component, or one that is a file: look further up for what is there.
            guard code == ENOENT || code == ENOTDIR else { return "cannot reach \(candidate): \(String(cString: strerror(code)))" }
            let parent = (candidate as NSString).deletingLastPathComponent
            let next = parent.isEmpty ? "." : parent
            if next == candidate { return nil }
            candidate = next
        }
    }

    /// The system's reason a file cannot be created in `directory`, or nil.
    private static func writeProblem(_ directory: String, probing: Bool) -> String? {
        guard probing else {
            return access(directory, W_OK | X_OK) == 0 ? nil : String(cString: strerror(errno))
        }
        let probe = directory + "/.switchyard-probe-" + UUID().uuidString
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        close(fd)
        unlink(probe)
        return nil
    }
}

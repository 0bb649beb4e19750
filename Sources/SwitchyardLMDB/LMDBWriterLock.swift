import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SwitchyardStores

// MARK: - LMDBWriterLock

/// The cross-process writer lock with a timeout that LMDB lacks.
///
/// LMDB serializes writers with a process-shared mutex in `lock.mdb` and `mdb_txn_begin` waits on it forever:
/// a writer whose process is stopped (SIGSTOP, a debugger) would block every other process's writes, and
/// every writable open, which runs a bootstrap write. So each Switchyard write first takes an exclusive
/// `flock` on the environment's `data.mdb` descriptor (LMDB's own locks are `fcntl` locks on `lock.mdb`, which
/// `flock` does not touch), polling until `timeout`; only the holder goes on to LMDB's mutex. A writer in a
/// program that does not use Switchyard (`mdb_load`, another LMDB binding) does not take this lock and can
/// still make a write wait.
package struct LMDBWriterLock {
    /// The `data.mdb` descriptor owned by the environment (never closed here).
    package let descriptor: Int32

    /// Takes the lock, or throws `StoreError.lmdb` with `ETIMEDOUT` after `timeout` seconds.
    package static func acquire(descriptor: Int32, timeout: TimeInterval, path: String, configuration: String) throws -> LMDBWriterLock {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        var pause: useconds_t = 500
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return LMDBWriterLock(descriptor: descriptor) }
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else {
                // A file system without flock: fall back to LMDB's own (untimed) mutex.
                if code == ENOLCK || code == EOPNOTSUPP || code == ENOSYS { return LMDBWriterLock(descriptor: -1) }
                throw StoreError.lmdb(path: path, configuration: configuration, call: "flock(data.mdb)", code: code, message: String(cString: strerror(code)))
            }
            if Date() >= deadline {
                throw StoreError.lmdb(
                    path: path, configuration: configuration, call: "write lock", code: ETIMEDOUT,
                    message: "another process has held this store's write lock for more than \(formatted(timeout)) s "
                        + "(a stopped or hung writer?); the write was given up and nothing was written")
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
    }

    /// Releases the lock.
    package func unlock() {
        if descriptor >= 0 { _ = flock(descriptor, LOCK_UN) }
    }

    private static func formatted(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

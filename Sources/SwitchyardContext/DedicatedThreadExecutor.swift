import Foundation

// MARK: - DedicatedThreadExecutor

/// A serial executor that runs its jobs on one thread of its own, outside Swift's cooperative pool, so the
/// blocking work a context does (SQLite and LMDB file I/O, store locks) never holds one of the pool's few
/// threads. `BackgroundContext` and `LiveQuery` are actors on one of these; as a task executor it also lets a
/// task start there without waiting for a pool thread to hop from.
///
/// The thread starts in `init` and ends after `shutdown()` once the jobs already enqueued have run.
package final class DedicatedThreadExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `isShuttingDown` are read and written only while `condition` is locked,
    // and `thread` is set once in `init` before the thread starts and only read afterwards.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var isShuttingDown = false
    private var thread: Thread?

    /// Starts the thread, named `name` (what debuggers and `top -H` show).
    package init(name: String) {
        let thread = Thread { [self] in
            Self.nameCurrentThread(name)
            runJobs()
        }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    /// `name` as the system can show it: Linux keeps at most 15 bytes of a thread's name and refuses a longer
    /// one outright (the thread then keeps its creator's name), so a longer name is cut to its first 15 bytes at a
    /// character boundary ("Switchyard.BackgroundContext" shows as "Switchyard.Back").
    package static func systemName(_ name: String) -> String {
        #if os(Linux)
        var result = ""
        for character in name {
            guard result.utf8.count + character.utf8.count <= 15 else { break }
            result.append(character)
        }
        return result
        #else
        return name
        #endif
    }

    /// Gives the running thread its system name (`systemName(_:)`). On Linux through glibc's
    /// `pthread_setname_np`, looked up at run time (Swift's Glibc module does not export it): Foundation gives a
    /// name set before the start to the `Thread` object only, and one set from inside the thread reached the system
    /// only once the starting thread had recorded the new thread's handle, which under load it sometimes had not
    /// (the thread then kept its creator's name, a dispatch worker's "oot.default-qos").
    private static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return }
        _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), systemName(name))
        #else
        Thread.current.name = name
        #endif
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    package func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    package func checkIsolated() {
        precondition(Thread.current === thread, "not on \(thread?.name ?? "the executor's thread")")
    }

    /// Lets the thread end once the jobs already enqueued have run (the thread holds the executor until then).
    package func shutdown() {
        condition.lock()
        isShuttingDown = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        var batch: [UnownedJob] = []
        while true {
            condition.lock()
            while jobs.isEmpty && !isShuttingDown { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedSerialExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

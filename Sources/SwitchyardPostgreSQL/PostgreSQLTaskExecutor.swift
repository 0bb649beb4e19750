import Dispatch

// MARK: - PostgreSQLTaskExecutor

/// Where the driver's async-only calls (`COPY … FROM STDIN`) run when a blocking store call waits for them: a
/// dispatch queue of its own, never Swift concurrency's cooperative pool. A store call blocks its thread while
/// it waits; when that thread is one of the pool's few, a task queued on the pool could wait for it forever.
final class PostgreSQLTaskExecutor: TaskExecutor {
    static let shared = PostgreSQLTaskExecutor()
    private let queue = DispatchQueue(label: "switchyard.postgresql.tasks")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

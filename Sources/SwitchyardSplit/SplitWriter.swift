import Dispatch
import SwitchyardModel

// MARK: - SplitWriter

/// Runs a split's writes on a thread of their own, in the order they are submitted, while the submitting thread
/// reads and converts the next batch: the output's work (an SQLite or LMDB commit, a PostgreSQL server taking a
/// `COPY`) overlaps the source's. One write runs at a time and `submit` waits for it before queueing the next,
/// so at most two batches are held at once and memory stays bounded by the batch size.
///
/// After a write fails, `submit` and `finish` throw its error and nothing more is written.
final class SplitWriter: Sendable {
    private let queue = DispatchQueue(label: "switchyard.storesplit.writer")
    private let slot = DispatchSemaphore(value: 1)
    private let group = DispatchGroup()
    private let state = Locked<(failure: (any Error)?, written: Int)>((nil, 0))

    /// Queues `write` once the previous write has ended; `write` returns the rows it wrote. Throws the error of an
    /// earlier write, if one failed.
    func submit(_ write: @escaping @Sendable () throws -> Int) throws {
        slot.wait()
        if let failure = state.withLock({ $0.failure }) {
            slot.signal()
            throw failure
        }
        queue.async(group: group) { [state, slot] in
            defer { slot.signal() }
            do {
                let rows = try write()
                state.withLock { $0.written += rows }
            } catch {
                state.withLock { $0.failure = error }
            }
        }
    }

    /// Rows written by the writes that have ended.
    var written: Int { state.withLock { $0.written } }

    /// Waits until no write runs or waits: the outputs can then be closed or removed.
    func waitForWrites() {
        group.wait()
    }

    /// Waits for every queued write; throws the first write's error, if one failed.
    func finish() throws {
        group.wait()
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }
}

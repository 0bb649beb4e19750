import Foundation
import Logging
import PostgresNIO
import SwitchyardModel

// MARK: - PostgreSQLCancelRequest

/// Stops one running statement on the server: `pg_cancel_backend(pid)` from a connection of its own (PostgresNIO
/// sends no protocol cancel message), sent again every 200 ms until `finish()`. The server ignores a cancel that
/// reaches the process between the messages of a statement, and an attempt can fail (no free connection slot),
/// so one attempt is not enough. `finish()` stops the repeats and waits for an attempt under way, so no cancel
/// reaches the process after its statement has ended (the connection's next statement is not touched).
final class PostgreSQLCancelRequest: Sendable {
    private struct State {
        var isFinished = false
        var attempt: EventLoopFuture<Void>?
        var failures = 0
    }
    private let state = Locked(State())
    private let pid: Int64
    private let driverConfiguration: PostgresConnection.Configuration
    private let loop: any EventLoop
    private let logger: Logger
    private let location: PostgreSQLLocation
    private let configuration: String

    init(
        pid: Int64, driverConfiguration: PostgresConnection.Configuration, loop: any EventLoop, logger: Logger,
        location: PostgreSQLLocation, configuration: String
    ) {
        self.pid = pid
        self.driverConfiguration = driverConfiguration
        self.loop = loop
        self.logger = logger
        self.location = location
        self.configuration = configuration
    }

    /// Sends the first cancel; does not block (called from the cancelling task's thread).
    func start() { attempt() }

    /// Stops sending and waits for an attempt under way. Its failure is logged, not thrown: the statement's
    /// outcome is what the caller reports.
    func finish() {
        let attempt = state.withLock { state in
            state.isFinished = true
            return state.attempt
        }
        do {
            try attempt?.wait()
        } catch {
            // Logged once already by the attempt itself.
        }
    }

    private func attempt() {
        let sent: EventLoopFuture<Void>? = state.withLock { state in
            guard !state.isFinished else { return nil }
            let logger = self.logger, pid = self.pid
            let sent = PostgresConnection.connect(on: loop, configuration: driverConfiguration, id: 2, logger: logger)
                .flatMap { canceller in
                    canceller.query("SELECT pg_cancel_backend(\(pid)::integer)", logger: logger).map { _ in () }.always { _ in
                        canceller.close().whenComplete { _ in _ = canceller }
                    }
                }
            state.attempt = sent
            return sent
        }
        // Outside the lock: a callback on a completed future can run at once, on this thread.
        sent?.whenComplete { result in
            if case .failure(let error) = result, self.state.withLock({ state in state.failures += 1; return state.failures == 1 }) {
                let reason = PostgreSQLConnection.storeError(error, location: self.location, configuration: self.configuration, sql: "SELECT pg_cancel_backend($1)")
                self.logger.warning("cannot cancel a statement yet, trying again: \(reason.localizedDescription)")
            }
            _ = self.loop.scheduleTask(in: .milliseconds(200)) { self.attempt() }
        }
    }
}

import Foundation
import Logging
import SwitchyardStores

// MARK: - PostgreSQLPool

/// At most `pool_size` connections to one store's server, opened when first needed and handed to one caller at
/// a time. A connection the server dropped (a restart, a network failure) is left behind when it comes back, so
/// the next call connects again: the store is usable once the server is back.
///
/// `@unchecked Sendable`: `idle`, `open` and `isShutDown` are read and written only with `condition` locked, and
/// a connection is out of `idle` (so used by one thread only) between `take()` and `give(_:)`.
final class PostgreSQLPool: @unchecked Sendable {
    let location: PostgreSQLLocation
    let configuration: String
    private let logger: Logger
    private let tracer: StoreTracer?
    private let condition = NSCondition()
    private var idle: [PostgreSQLConnection] = []
    private var open = 0
    private var isShutDown = false

    init(_ location: PostgreSQLLocation, configuration: String, logger: Logger, tracer: StoreTracer? = nil) {
        self.location = location
        self.configuration = configuration
        self.logger = logger
        self.tracer = tracer
    }

    deinit { shutDown() }

    /// Runs `body` with a connection of its own.
    func withConnection<T>(_ body: (PostgreSQLConnection) throws -> T) throws -> T {
        let connection = try take()
        var broken = false
        defer { give(connection, broken: broken) }
        do {
            return try body(connection)
        } catch {
            broken = connection.isClosed
            throw error
        }
    }

    /// Runs `body` in one read-only `REPEATABLE READ` transaction when `transaction` is true (several statements
    /// that must see one snapshot), else on a plain connection (one statement is its own snapshot).
    func withConnection<T>(transaction: Bool, _ body: (PostgreSQLConnection) throws -> T) throws -> T {
        transaction ? try withTransaction(readOnly: true, body) : try withConnection(body)
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws (or when the
    /// connection fails, which the server rolls back itself). `readOnly` reads one snapshot (`REPEATABLE READ`).
    /// Under a cancelled `StoreInterruption` the running statement stops and the transaction rolls back; the
    /// commit itself is never interrupted.
    func withTransaction<T>(readOnly: Bool = false, _ body: (PostgreSQLConnection) throws -> T) throws -> T {
        let connection = try take()
        var broken = false
        defer { give(connection, broken: broken) }
        try connection.execute(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN")
        do {
            let result = try body(connection)
            // A cancellation that comes once the body is done lets the commit finish: the save is kept whole.
            try StoreInterruption.uninterruptible { try connection.execute("COMMIT") }
            return result
        } catch {
            if connection.isClosed {
                broken = true
            } else {
                do {
                    try StoreInterruption.uninterruptible { try connection.execute("ROLLBACK") }
                } catch {
                    broken = true
                }
            }
            throw error
        }
    }

    /// Closes the idle connections; connections in use close when they come back.
    func shutDown() {
        condition.lock()
        isShutDown = true
        let closing = idle
        idle = []
        open -= closing.count
        condition.broadcast()
        condition.unlock()
        _ = closing
    }

    private func take() throws -> PostgreSQLConnection {
        condition.lock()
        while true {
            if isShutDown {
                condition.unlock()
                throw StoreError.closed(path: location.display, configuration: configuration)
            }
            if let connection = idle.popLast() {
                if connection.isClosed {
                    open -= 1
                    continue
                }
                condition.unlock()
                return connection
            }
            if open < location.poolSize {
                open += 1
                condition.unlock()
                do {
                    return try PostgreSQLConnection(location, configuration: configuration, logger: logger, tracer: tracer)
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            // Every connection is in use: wait for one, or for the caller's task to be cancelled.
            if let interruption = StoreInterruption.current {
                if interruption.isCancelled {
                    condition.unlock()
                    throw CancellationError()
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.05))
            } else {
                condition.wait()
            }
        }
    }

    private func give(_ connection: PostgreSQLConnection, broken: Bool) {
        condition.lock()
        if broken || connection.isClosed || isShutDown {
            open -= 1
        } else {
            idle.append(connection)
        }
        condition.signal()
        condition.unlock()
    }
}

import Foundation
import Logging
import SwitchyardModel

// MARK: - StoreTraceLevel

/// How much a store traces, like Core Data's `-com.apple.CoreData.SQLDebug 1…3`. Set it per store
/// (`StoreOptions.traceLevel`) or for the whole process with the environment variable `SWITCHYARD_TRACE=1…3`.
/// Lines go to the coordinator's `Logger` (`StoreCoordinator(model:logger:)`) at `.debug`, else to standard
/// error.
public enum StoreTraceLevel: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Nothing.
    case off = 0
    /// Every fetch, count and save: entity, rows and duration.
    case operations = 1
    /// Also every SQL statement SQLite or PostgreSQL runs, with its duration; on LMDB each fetch's and count's
    /// plan (index or scan, rows read) and each write transaction's calls and commit time. Arguments and
    /// constants hidden.
    case statements = 2
    /// Also statement arguments and predicate constants (they may be private data).
    case arguments = 3

    public static func < (a: StoreTraceLevel, b: StoreTraceLevel) -> Bool { a.rawValue < b.rawValue }

    /// The level `SWITCHYARD_TRACE` asks for (`off` when unset or not 0…3).
    public static var fromEnvironment: StoreTraceLevel {
        ProcessInfo.processInfo.environment["SWITCHYARD_TRACE"].flatMap { Int($0) }.flatMap(StoreTraceLevel.init(rawValue:)) ?? .off
    }
}

// MARK: - StoreTracer

/// A store's trace output: its level and where lines go. The coordinator that adds the store points it at its
/// own logger.
@usableFromInline package final class StoreTracer: Sendable {
    @usableFromInline package let level: StoreTraceLevel
    private let logger: Locked<Logger>
    private let store: String

    package init(level: StoreTraceLevel?, store: String) {
        self.level = level ?? .fromEnvironment
        self.store = store
        var logger = Logger(label: "switchyard.trace") { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = .debug
        self.logger = Locked(logger)
    }

    package var isOn: Bool { level > .off }

    /// Sends lines to `logger` from now on (at `.debug`, whatever its level lets through).
    package func use(_ logger: Logger) {
        self.logger.withLock { $0 = logger }
    }

    @usableFromInline package func emit(_ message: String) {
        let logger = self.logger.withLock { $0 }
        logger.debug("\(message)", metadata: ["store": "\(store)"])
    }

    /// Runs `body`; at `operations` and above, traces `what` (given the result) with its duration.
    @inlinable @inline(__always)
    package func measure<T>(_ what: (T) -> String, _ body: () throws -> T) rethrows -> T {
        try measure(what, excluding: { 0 }, body)
    }

    /// `measure`, leaving out of the duration the nanoseconds `excluded` gives once `body` is done: what a
    /// streaming read's caller spent on the rows handed to it (see `handOver`), which is not the store's time.
    @inlinable @inline(__always)
    package func measure<T>(_ what: (T) -> String, excluding excluded: () -> UInt64, _ body: () throws -> T) rethrows -> T {
        guard level >= .operations else { return try body() }
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        let ms = Double(elapsed - min(excluded(), elapsed)) / 1e6
        emit("\(what(result)) in \(String(format: "%.3f", ms)) ms")
        return result
    }

    /// Hands `row` to a streaming read's caller; when tracing, adds the time the caller took to `callerNanos`.
    @inlinable @inline(__always)
    package func handOver<Row>(_ row: consuming Row, to body: (consuming Row) throws -> Void, callerNanos: inout UInt64) rethrows {
        guard level >= .operations else { return try body(consume row) }
        let start = DispatchTime.now().uptimeNanoseconds
        defer { callerNanos &+= DispatchTime.now().uptimeNanoseconds - start }
        try body(consume row)
    }

    /// How a request reads in a trace line: entity, and the predicate with its constants shown only at
    /// `arguments`.
    package func describe(_ request: StoreFetchRequest) -> String {
        var text = request.entityName
        if let predicate = request.predicate {
            text += level >= .arguments ? " where \(predicate.format)" : " where (predicate; constants hidden below level 3)"
        }
        if let limit = request.fetchLimit { text += " limit \(limit)" }
        return text
    }
}

// MARK: - TracingStore

/// A store that traces (SQLite, LMDB, PostgreSQL): the coordinator that adds it points its tracer at the
/// coordinator's logger.
package protocol TracingStore {
    var tracer: StoreTracer { get }
}

extension StoreChangeSet {
    /// "2 inserts, 1 update, 0 deletes, 3 links" for trace lines.
    package var traceSummary: String {
        "\(inserts.count) inserts, \(updates.count) updates, \(deletes.count) deletes, "
            + "\(linkInserts.count + linkDeletes.count) link changes, \(orders.count) orders"
    }
}

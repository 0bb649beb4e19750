import Foundation
import Logging
import PostgresNIO
import SwitchyardModel
import SwitchyardStores

// MARK: - PostgreSQLConnection

/// One connection to the server, opened in `init` (with the store's schema first on its `search_path`) and closed
/// in `deinit`. Calls block the calling thread until the server answers, so they are made from the store's
/// callers' threads (an `ObjectContext`'s, or a `BackgroundContext`'s own thread), never from NIO's event loop.
/// Every failure goes through `check`, which turns it into `StoreError.postgreSQL` naming the store (without
/// its password), the statement and the SQLSTATE.
///
/// Not `Sendable`: one thread uses a connection at a time; `PostgreSQLPool` hands it out.
final class PostgreSQLConnection {
    private let connection: PostgresConnection
    /// Fails the statement `wait` waits for, if any, when the connection closes.
    private let inFlight = Locked<(@Sendable () -> Void)?>(nil)
    /// The server process serving this connection: what `pg_cancel_backend` names to stop its statement.
    private var backendPID: Int64 = 0
    /// The settings `init` connected with; a cancel request connects with them too.
    private let driverConfiguration: PostgresConnection.Configuration
    /// The cancel request started while a statement ran; the statement's caller finishes it before the next one.
    private let pendingCancel = Locked<PostgreSQLCancelRequest?>(nil)
    private let logger: Logger
    /// Traces each statement at `StoreTraceLevel.statements` (its arguments at `.arguments`); nil or off: nothing.
    private let tracer: StoreTracer?
    let location: PostgreSQLLocation
    let configuration: String

    /// A value bound as a statement parameter (`$1`, `$2`, ...): never pasted into SQL text.
    typealias Parameter = ColumnValue

    init(_ location: PostgreSQLLocation, configuration: String, logger: Logger, tracer: StoreTracer? = nil) throws {
        self.location = location
        self.configuration = configuration
        self.logger = logger
        self.tracer = tracer.flatMap { $0.level >= .statements ? $0 : nil }
        driverConfiguration = try Self.driverConfiguration(location, configuration: configuration)
        do {
            connection = try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: driverConfiguration, id: 1, logger: logger
            ).wait()
        } catch {
            throw Self.storeError(error, location: location, configuration: configuration, sql: "")
        }
        let inFlight = self.inFlight
        connection.closeFuture.whenComplete { _ in inFlight.withLock { $0?() } }
        // One round trip: the schema first on the search path, and the server process a cancel request names.
        let sql = "SELECT pg_backend_pid(), set_config('search_path', $1, false)"
        guard let pid = try StoreInterruption.uninterruptible({ try query(sql, [.text(Self.quote(location.schema))]) })
            .first.flatMap({ try $0.makeRandomAccess().integer(0) })
        else {
            throw StoreError.postgreSQL(
                path: location.display, configuration: configuration, sql: sql, code: "client",
                message: "the server did not say which process serves the connection")
        }
        backendPID = pid
    }

    /// The driver's settings for `location`: address, credentials, TLS, connect timeout, application name.
    private static func driverConfiguration(_ location: PostgreSQLLocation, configuration: String) throws -> PostgresConnection.Configuration {
        var tls = PostgresConnection.Configuration.TLS.disable
        if location.tls.mode != .disable {
            do {
                var settings = TLSConfiguration.makeClientConfiguration()
                if location.tls.mode == .require, let roots = location.tls.rootCertificates {
                    settings.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(roots.path))
                }
                if location.tls.mode == .prefer { settings.certificateVerification = .none }
                let context = try NIOSSLContext(configuration: settings)
                tls = location.tls.mode == .require ? .require(context) : .prefer(context)
            } catch {
                throw StoreError.openFailed(
                    path: location.display, configuration: configuration,
                    reason: "cannot set up TLS\(location.tls.rootCertificates.map { " with \($0.path)" } ?? ""): \(error)")
            }
        }
        var config = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: tls)
        config.options.connectTimeout = .seconds(Int64(location.connectTimeout))
        config.options.additionalStartupParameters = [("application_name", location.applicationName)]
        return config
    }

    deinit {
        // The closure keeps the driver's connection until it has closed (it must not go away open).
        let connection = self.connection
        connection.close().whenComplete { _ in _ = connection }
    }

    /// True when the server or the network dropped the connection; the pool then opens a new one.
    var isClosed: Bool { connection.isClosed }

    // MARK: - Statements

    /// Runs `sql` with `parameters` and returns every row.
    @discardableResult
    func query(_ sql: String, _ parameters: [Parameter] = []) throws -> [PostgresRow] {
        try check(sql, parameters) {
            try wait(connection.query(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(parameters)), logger: logger)).rows
        }
    }

    /// Runs `sql` and calls `row` for each result row as it arrives (a large result is never held whole).
    func forEachRow(_ sql: String, _ parameters: [Parameter] = [], _ row: @escaping @Sendable (PostgresRow) throws -> Void) throws {
        _ = try check(sql, parameters) {
            try wait(connection.query(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(parameters)), logger: logger, row))
        }
    }

    /// Runs a statement that returns no rows.
    func execute(_ sql: String, _ parameters: [Parameter] = []) throws {
        _ = try query(sql, parameters)
    }

    /// Sends `rows` to `table` with `COPY … FROM STDIN` in text format: one statement whatever the row count,
    /// the server's fastest way in. Values are written by `ColumnValue`'s kind, in `columns` order, and sent in
    /// chunks as they are encoded, so the server parses one chunk while the next is written. The driver quotes
    /// the names without escaping them, so names holding a double quote are refused (`canCopy`).
    func copy(into table: String, columns: [String], rows: some Collection<[ColumnValue]>) throws {
        precondition(Self.canCopy(table: table, columns: columns), "COPY names must not contain a double quote")
        let sql = "COPY \(Self.quote(table)) (\(columns.map(Self.quote).joined(separator: ", "))) FROM STDIN"
        let (chunks, sender) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let connection = self.connection, logger = self.logger
        let promise = connection.eventLoop.makePromise(of: Void.self)
        // Off the cooperative pool: this thread may be one of its threads, blocked below until the copy ends.
        Task(executorPreference: PostgreSQLTaskExecutor.shared) {
            do {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    for try await chunk in chunks { try await writer.write(chunk) }
                }
                promise.succeed(())
            } catch {
                promise.fail(error)
            }
        }
        let chunkSize = 1 << 18
        // A cancelled perform stops encoding at the next chunk and fails the copy (the server discards it).
        let interruption = StoreInterruption.current
        var buffer = ByteBuffer()
        buffer.reserveCapacity(chunkSize + 4096)
        for row in rows {
            for (i, value) in row.enumerated() {
                if i > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                Self.writeCopyText(value, to: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "\n"))
            if buffer.readableBytes >= chunkSize {
                if interruption?.isCancelled == true {
                    sender.finish(throwing: CancellationError())
                    do {
                        try wait(promise.futureResult)
                    } catch {
                        // The copy failed because its rows stopped: the cancellation, thrown below.
                    }
                    throw CancellationError()
                }
                sender.yield(buffer)
                buffer = ByteBuffer()
                buffer.reserveCapacity(chunkSize + 4096)
            }
        }
        if buffer.readableBytes > 0 { sender.yield(buffer) }
        sender.finish()
        try check(sql) { try wait(promise.futureResult) }
    }

    /// Whether `copy` can name this table and these columns.
    static func canCopy(table: String, columns: [String]) -> Bool {
        !table.contains("\"") && !columns.contains { $0.contains("\"") }
    }

    /// One value in `COPY`'s text format: `\N` for NULL, backslash escapes in text, `\\x` hex for bytes.
    private static func writeCopyText(_ value: ColumnValue, to buffer: inout ByteBuffer) {
        switch value {
        case .null:
            buffer.writeStaticString("\\N")
        case .integer(let i):
            buffer.writeString(String(i))
        case .real(let d):
            if d.isNaN { buffer.writeStaticString("NaN") }
            else if d.isInfinite { buffer.writeStaticString(d < 0 ? "-Infinity" : "Infinity") }
            else { buffer.writeString("\(d)") }
        case .text(let s):
            var plain = true
            for byte in s.utf8 where byte == UInt8(ascii: "\\") || byte < 0x20 { plain = false; break }
            if plain {
                buffer.writeString(s)
            } else {
                for byte in s.utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                    case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                    case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                    case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                    case 0x08: buffer.writeStaticString("\\b")
                    case 0x0C: buffer.writeStaticString("\\f")
                    case 0x0B: buffer.writeStaticString("\\v")
                    default: buffer.writeInteger(byte)
                    }
                }
            }
        case .blob(let data):
            buffer.writeStaticString("\\\\x")
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                for byte in data {
                    buffer.writeInteger(digits[Int(byte >> 4)])
                    buffer.writeInteger(digits[Int(byte & 0x0F)])
                }
            }
        }
    }

    /// The result of `future`, or `ConnectionClosed` as soon as the connection closes: a statement sent on a
    /// connection the server has just dropped (terminated, restarted) would otherwise never answer.
    ///
    /// The one close callback `init` registers fails the statement in flight (`inFlight`): a callback per
    /// statement would keep every statement's promise, and so every result's rows, until the connection
    /// closed (a split's verification grew by 0.3 KB per row read).
    private func wait<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        if connection.isClosed { throw ConnectionClosed() }
        let promise = future.eventLoop.makePromise(of: T.self)
        inFlight.withLock { $0 = { promise.fail(ConnectionClosed()) } }
        defer { inFlight.withLock { $0 = nil } }
        // Closed before the slot was set: the close callback has run already.
        if connection.isClosed { promise.fail(ConnectionClosed()) }
        future.cascade(to: promise)
        return try promise.futureResult.wait()
    }

    /// The connection closed before a statement's answer came.
    struct ConnectionClosed: Error {}

    /// The one place a driver failure becomes a `StoreError`, where each statement is traced, and where a
    /// statement made under a `StoreInterruption` is stopped on the server when its task is cancelled.
    private func check<T>(_ sql: String, _ parameters: [Parameter] = [], _ body: () throws -> T) throws -> T {
        do {
            guard let interruption = StoreInterruption.current else { return try traced(sql, parameters, body) }
            defer { finishCancelRequest() }
            do {
                return try interruption.whileRunning(interrupt: cancelRequest) {
                    try traced(sql, parameters, body)
                }
            } catch {
                // The server's "canceling statement due to user request", when this task asked for it.
                if interruption.isCancelled, Self.sqlState(of: error) == "57014" { throw CancellationError() }
                throw error
            }
        } catch let error as StoreError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw Self.storeError(error, location: location, configuration: configuration, sql: sql)
        }
    }

    private func traced<T>(_ sql: String, _ parameters: [Parameter], _ body: () throws -> T) throws -> T {
        guard let tracer else { return try body() }
        return try tracer.measure({ _ in
            let shown = sql.count > 2_000 ? String(sql.prefix(2_000)) + "… (\(sql.count) characters)" : sql
            let arguments = tracer.level >= .arguments && !parameters.isEmpty
                ? " with \(parameters.prefix(100).map { "\($0)" }.joined(separator: ", "))\(parameters.count > 100 ? ", …" : "")"
                : ""
            return "SQL \(shown)\(arguments)"
        }, body)
    }

    /// Asks the server to cancel the statement this connection runs (`PostgreSQLCancelRequest`). Called from the
    /// cancelling task's thread, so it only starts the request; `finishCancelRequest` ends it.
    /// The request is built only when a cancel comes: almost no statement is ever cancelled.
    private var cancelRequest: @Sendable () -> Void {
        let pid = backendPID, driverConfiguration = driverConfiguration, loop = connection.eventLoop, logger = logger
        let location = location, configuration = configuration, pending = pendingCancel
        return {
            let request = PostgreSQLCancelRequest(
                pid: pid, driverConfiguration: driverConfiguration, loop: loop, logger: logger,
                location: location, configuration: configuration)
            pending.withLock { $0 = request }
            request.start()
        }
    }

    /// Ends a cancel request started during the statement that just ended: no more attempts, and the one under
    /// way has reached the server, so none can arrive after the connection's next statement started (a cancel
    /// that finds the process idle is ignored).
    private func finishCancelRequest() {
        pendingCancel.withLock { request in defer { request = nil }; return request }?.finish()
    }

    // MARK: - Errors

    /// The SQLSTATE of a server error (`23505` for a unique violation...), nil for any other failure.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// The name of the constraint a server error names (the index of a unique violation).
    static func constraintName(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.constraintName]
    }

    /// `StoreError.postgreSQL` for a driver error: the server's SQLSTATE and message when it answered, else what
    /// kept the client from reaching it. PostgresNIO's own description hides everything; this keeps what a user
    /// needs and never the password.
    static func storeError(_ error: any Error, location: PostgreSQLLocation, configuration: String, sql fullSQL: String) -> StoreError {
        // A statement of thousands of placeholders is cut: the error names it, it need not repeat it.
        let sql = fullSQL.count > 300 ? String(fullSQL.prefix(300)) + "… (\(fullSQL.count) characters)" : fullSQL
        if error is ConnectionClosed {
            return .postgreSQL(
                path: location.display, configuration: configuration, sql: sql, code: "connectionClosed",
                message: "the connection to \(location.host):\(location.port) was closed (the server ended it, restarted or went away); "
                    + "nothing of an unfinished save was kept, and the next call connects again")
        }
        guard let psql = error as? PSQLError else {
            return .postgreSQL(path: location.display, configuration: configuration, sql: sql, code: "client", message: "\(error)")
        }
        if let info = psql.serverInfo, let state = info[.sqlState] {
            var message = info[.message] ?? "server error"
            if let detail = info[.detail] { message += " (\(detail))" }
            if state == "28P01" || state == "28000" { message = "authentication failed for user \(location.user): \(message)" }
            return .postgreSQL(path: location.display, configuration: configuration, sql: sql, code: state, message: message)
        }
        let message: String
        switch psql.code {
        case .connectionError:
            message = "cannot reach the server at \(location.host):\(location.port): \(psql.underlying.map { "\($0)" } ?? "connection failed")"
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            message = "the connection to \(location.host):\(location.port) was closed (\(psql.code)); nothing of an unfinished save was kept, and the next call connects again"
        case .authMechanismRequiresPassword:
            message = "the server asks user \(location.user) for a password and the URL gives none"
        case .sslUnsupported:
            message = "the server does not offer TLS and the store requires it (sslmode=require in the URL or StoreTLS.require in the options)"
        default:
            message = "\(psql.code)\(psql.underlying.map { ": \($0)" } ?? "")"
        }
        return .postgreSQL(path: location.display, configuration: configuration, sql: sql, code: "\(psql.code)", message: message)
    }

    // MARK: - Spelling

    /// `"name"`, with embedded quotes doubled: every identifier from a model goes through here.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func bindings(_ parameters: [Parameter]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: parameters.count)
        for parameter in parameters {
            switch parameter {
            case .null: binds.appendNull()
            case .integer(let i): binds.append(i)
            case .real(let d): binds.append(d)
            case .text(let s): binds.append(s)
            case .blob(let data): binds.append(ByteBuffer(bytes: data))
            }
        }
        return binds
    }
}

// MARK: - Reading cells

extension PostgresRandomAccessRow {
    /// The value at `index` as the column holds it.
    func columnValue(_ index: Int) throws -> ColumnValue {
        let cell = self[index]
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
        case .float4, .float8: return .real(try cell.decode(Double.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .blob(Data(buffer: try cell.decode(ByteBuffer.self)))
        case .numeric:
            // NaN and ±Infinity: the driver's Decimal reads them as 0; their sign field (the third 16-bit word of
            // the binary form) says which, and they become the double a REAL column would hold.
            if let bytes = cell.bytes, cell.format == .binary, bytes.readableBytes >= 6,
                let sign = bytes.getInteger(at: bytes.readerIndex + 4, endianness: .big, as: UInt16.self), sign >= 0xC000
            {
                return .real(sign == 0xD000 ? .infinity : sign == 0xF000 ? -.infinity : .nan)
            }
            // A decimal column: exact when it is a 64-bit integer, else the double Core Data's REAL would hold.
            let text = "\(try cell.decode(Decimal.self))"
            return Int64(text).map { .integer($0) } ?? Double(text).map { .real($0) } ?? .text(text)
        default: return .text(try cell.decode(String.self))
        }
    }

    /// The integer at `index` (a key, a version, an entity number); nil for NULL.
    func integer(_ index: Int) throws -> Int64? {
        guard case .integer(let i) = try columnValue(index) else { return nil }
        return i
    }
}

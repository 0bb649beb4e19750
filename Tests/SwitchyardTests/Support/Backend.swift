import Foundation
import Testing
@testable import Switchyard
@testable import SwitchyardPostgreSQL

/// Every store backend; behaviour tests are parameterized over `Backend.allCases` (every store, PostgreSQL
/// included) and only where a test is about local files over `Backend.embedded`.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case lmdb
    case memory
    case postgresql

    /// The embedded stores and PostgreSQL (left out only with `SWITCHYARD_SKIP_POSTGRES=1`).
    static var allCases: [Backend] { embedded + (TestServer.isSkipped ? [] : [.postgresql]) }

    /// The same as `allCases`: the conformance suite's spelling.
    static var everyStore: [Backend] { allCases }

    /// The embedded stores, for what only they have (files, a map size, a process-local memory store).
    static var embedded: [Backend] { [.sqlite, .lmdb, .memory] }

    var testDescription: String { rawValue }

    var storeType: StoreType {
        switch self {
        case .sqlite: return .sqlite
        case .lmdb: return .lmdb
        case .memory: return .memory
        case .postgresql: return .postgreSQL
        }
    }

    /// The location a store of this backend gets inside `dir` (nil for memory).
    func url(in dir: TemporaryDirectory, name: String) -> URL? {
        switch self {
        case .sqlite: return dir.file("\(name).sqlite")
        case .lmdb: return dir.file("\(name).lmdb")
        case .memory: return nil
        case .postgresql: return try? dir.postgresURL(name)
        }
    }

    /// Opens (or creates) a store directly, without a coordinator.
    func open(_ model: ObjectModel, configuration: String, in dir: TemporaryDirectory, name: String? = nil) throws -> any PersistentStore {
        let name = name ?? configuration
        switch self {
        case .sqlite: return try SQLiteStore(url: dir.file("\(name).sqlite"), model: model, configuration: configuration)
        case .lmdb: return try LMDBStore(url: dir.file("\(name).lmdb"), model: model, configuration: configuration)
        case .memory: return try InMemoryStore(model: model, configuration: configuration)
        case .postgresql: return try PostgreSQLStore(url: try dir.postgresURL(name), model: model, configuration: configuration)
        }
    }

    /// Adds a store of this backend to `coordinator`.
    @discardableResult
    func add(to coordinator: StoreCoordinator, configuration: String, in dir: TemporaryDirectory, name: String? = nil) throws -> any PersistentStore {
        if self == .postgresql {
            return try coordinator.addStore(.postgreSQL, configuration: configuration, url: try dir.postgresURL(name ?? configuration))
        }
        return try coordinator.addStore(storeType, configuration: configuration, at: url(in: dir, name: name ?? configuration))
    }
}

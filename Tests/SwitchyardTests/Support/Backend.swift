import Foundation
import Testing
@testable import Switchyard

/// Every store backend; behaviour tests are parameterized over `Backend.allCases`.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case lmdb
    case memory

    var testDescription: String { rawValue }

    var storeType: StoreType {
        switch self {
        case .sqlite: return .sqlite
        case .lmdb: return .lmdb
        case .memory: return .memory
        }
    }

    /// The location a store of this backend gets inside `dir` (nil for memory).
    func url(in dir: TemporaryDirectory, name: String) -> URL? {
        switch self {
        case .sqlite: return dir.file("\(name).sqlite")
        case .lmdb: return dir.file("\(name).lmdb")
        case .memory: return nil
        }
    }

    /// Opens (or creates) a store directly, without a coordinator.
    func open(_ model: ObjectModel, configuration: String, in dir: TemporaryDirectory, name: String? = nil) throws -> any PersistentStore {
        let name = name ?? configuration
        switch self {
        case .sqlite: return try SQLiteStore(url: dir.file("\(name).sqlite"), model: model, configuration: configuration)
        case .lmdb: return try LMDBStore(url: dir.file("\(name).lmdb"), model: model, configuration: configuration)
        case .memory: return try InMemoryStore(model: model, configuration: configuration)
        }
    }

    /// Adds a store of this backend to `coordinator`.
    @discardableResult
    func add(to coordinator: StoreCoordinator, configuration: String, in dir: TemporaryDirectory, name: String? = nil) throws -> any PersistentStore {
        try coordinator.addStore(storeType, configuration: configuration, at: url(in: dir, name: name ?? configuration))
    }
}

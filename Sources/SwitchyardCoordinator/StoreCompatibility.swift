import Foundation
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - StoreCompatibility

/// Whether a store on disk can be opened with a model, without opening it for writing: the report
/// `storeinspect compat` prints and the coordinator acts on.
///
/// ```swift
/// let result = try StoreCompatibility.check(.sqlite, at: url, model: model, configuration: "Cloud")
/// print(result.report.summary)
/// ```
public struct StoreCompatibility: Sendable, Hashable, Codable {
    /// How the verdict was reached.
    public enum Basis: String, Sendable, Hashable, Codable {
        /// The stored version hashes equal the model's.
        case versionHashes
        /// The model recovered from the store's model cache was compared with the model.
        case modelCache
        /// The store has no readable model cache: its tables were checked against the model.
        case tableLayout
    }

    /// The store's file or directory.
    public var path: String
    /// The store's backend.
    public var type: StoreType
    /// How the verdict was reached.
    public var basis: Basis
    /// Per entity, what changed and whether it can be inferred.
    public var report: CompatibilityReport

    /// Reads the store at `url` (read-only) and compares it with `model`'s `configuration`.
    public static func check(_ type: StoreType, at url: URL, model: ObjectModel, configuration: String) throws -> StoreCompatibility {
        _ = try model.entities(inConfiguration: configuration)
        let state: (metadata: StoreMetadata, model: ObjectModel?)
        switch type {
        case .sqlite: state = try SQLiteStore.storedState(at: url, configuration: configuration)
        case .lmdb: state = try LMDBStore.storedState(at: url, configuration: configuration)
        case .memory:
            throw CoordinatorError.unsupportedStoreType(.memory, reason: "a memory store has nothing on disk to check")
        case .postgreSQL:
            throw CoordinatorError.unsupportedStoreType(
                .postgreSQL, reason: "a PostgreSQL store is checked when it opens (StoreCoordinator.addStore), not from a file")
        }
        if state.metadata.versionHashes == model.versionHashes {
            let report = state.model.map { ModelDiff.compare(from: $0, to: model, configuration: configuration) }
                ?? ModelDiff.compare(from: model, to: model, configuration: configuration)
            return StoreCompatibility(path: url.path, type: type, basis: .versionHashes, report: report)
        }
        if let stored = state.model {
            return StoreCompatibility(
                path: url.path, type: type, basis: .modelCache,
                report: ModelDiff.compare(from: stored, to: model, configuration: configuration))
        }
        // No cache: the layout decides, as it does when the store opens.
        let identical = ModelDiff.compare(from: model, to: model, configuration: configuration)
        do {
            if type == .lmdb {
                _ = try LMDBStore(url: url, model: model, configuration: configuration, options: .readOnly)
            } else {
                _ = try SQLiteStore(url: url, model: model, configuration: configuration, options: .readOnly)
            }
            return StoreCompatibility(path: url.path, type: type, basis: .tableLayout, report: identical)
        } catch let error as StoreError {
            guard case .schemaMismatch(_, _, let reason) = error else { throw error }
            var report = identical
            report.entities.append(EntityChange(
                name: "(table layout)", oldName: nil, kind: .changed, isInferable: false,
                reason: "the store has no model cache and its tables do not match the model: \(reason)"))
            return StoreCompatibility(path: url.path, type: type, basis: .tableLayout, report: report)
        }
    }
}

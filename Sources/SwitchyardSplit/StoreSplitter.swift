import Foundation
import SwitchyardLMDB
import SwitchyardModel
import SwitchyardSQLite
import SwitchyardStores

// MARK: - StoreSplitter

/// Splits a monolithic store (Switchyard SQLite or LMDB, or a real Core Data SQLite store) into one store per
/// configuration of a target model: plan first, then a streaming copy in batches, then verification, and only
/// then are the outputs renamed into place. The source is opened read-only and never written.
///
/// ```swift
/// let splitter = try StoreSplitter(source: legacyURL, targetModel: model, destinations: [
///     SplitDestination(configuration: "Cloud", url: dir.appendingPathComponent("Cloud.sqlite"), type: .sqlite),
///     SplitDestination(configuration: "Cache", url: dir.appendingPathComponent("Cache.lmdb"), type: .lmdb),
/// ])
/// let plan = try splitter.plan()
/// let report = try splitter.run(plan, options: SplitOptions(verifyContent: true))
/// ```
public final class StoreSplitter {
    /// The monolithic store.
    public let sourceURL: URL
    /// The source's backend.
    public let sourceType: StoreType
    /// The model whose configurations the outputs hold.
    public let targetModel: ObjectModel
    /// The outputs.
    public let destinations: [SplitDestination]
    /// The model the source was read with.
    public let sourceModel: ObjectModel
    /// Where `sourceModel` came from: "--source-model", "model cache" or "target model".
    public let sourceModelOrigin: String
    package let source: PersistentStore

    /// Opens `source` read-only. The source model is `sourceModel`, else the store's model cache, else
    /// `targetModel`.
    public init(
        source url: URL, targetModel: ObjectModel, destinations: [SplitDestination], sourceModel: ObjectModel? = nil
    ) throws {
        let opened = try Self.openReadOnly(url, model: sourceModel, fallback: targetModel)
        self.sourceURL = url
        self.sourceType = opened.store.type
        self.targetModel = targetModel
        self.destinations = destinations
        self.sourceModel = opened.store.model
        self.sourceModelOrigin = sourceModel != nil ? "--source-model" : opened.origin
        self.source = opened.store
    }

    // MARK: - Opening stores

    /// The backend of an existing store: a directory is LMDB, a file SQLite; nil when nothing is there.
    public static func storeType(at url: URL) -> StoreType? {
        if let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" { return .postgreSQL }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return nil }
        return isDirectory.boolValue ? .lmdb : .sqlite
    }

    /// Opens an existing store read-only with `model`, else with the model its cache holds, else with
    /// `fallback`; returns the store and where its model came from.
    public static func openReadOnly(
        _ url: URL, model: ObjectModel?, fallback: ObjectModel? = nil
    ) throws -> (store: PersistentStore, origin: String) {
        guard let type = storeType(at: url) else {
            throw SplitError.source(path: url.path, reason: "no such file or directory")
        }
        let path = StoreDescription.displayLocation(type: type, url: url, configuration: "")
        do {
            // The tools read every row: walk every page of an LMDB file first, whatever its size (an ordinary
            // open walks all of it only up to LMDBPageCheck.fullCheckLimit).
            if type == .lmdb { try LMDBStore.checkFile(at: url) }
            if let model { return (try openAnyConfiguration(type, url, model), "--model") }
            // A store opened with an empty model reads nothing but its metadata and model cache. It is released
            // before the store opens with the cached model: an LMDB environment is shared in the process, and one
            // opened for an empty model has too few database slots for the real one's indexes.
            let cached = try { () throws -> ObjectModel? in try open(type, url, try ObjectModel(entities: [])).storedModel() }()
            if let cached { return (try openAnyConfiguration(type, url, cached), "model cache") }
            if let fallback { return (try openAnyConfiguration(type, url, fallback), "target model") }
            throw SplitError.source(path: path, reason: "the store has no model cache; pass the model it was written with")
        } catch let error as SplitError {
            throw error
        } catch {
            throw SplitError.source(path: path, reason: "\(error)")
        }
    }

    /// Opens with `Default` (every entity); a store that holds one configuration's tables (a split output)
    /// opens with the first configuration whose tables it has; an LMDB store, whose entities share one set of
    /// databases, with the configuration it records it was created for.
    package static func openAnyConfiguration(_ type: StoreType, _ url: URL, _ model: ObjectModel) throws -> PersistentStore {
        do {
            let store = try open(type, url, model)
            if let created = (store as? any ConfigurationRecordingStore)?.createdConfiguration, created != store.configurationName,
                model.configurationNames.contains(created)
            {
                return try open(type, url, model, configuration: created)
            }
            return store
        } catch StoreError.schemaMismatch(let path, let configuration, let reason) {
            for name in model.configurations.map(\.name) {
                if let store = try? open(type, url, model, configuration: name) { return store }
            }
            throw StoreError.schemaMismatch(path: path, configuration: configuration, reason: reason)
        }
    }

    package static func open(
        _ type: StoreType, _ url: URL, _ model: ObjectModel, configuration: String = ConfigurationDescription.defaultName
    ) throws -> PersistentStore {
        switch type {
        case .lmdb: return try LMDBStore(url: url, model: model, configuration: configuration, options: .readOnly)
        case .postgreSQL: return try ServerStoreOpeners.opener(for: type, url: url, configuration: configuration)(url, model, configuration, .readOnly, nil)
        default: return try SQLiteStore(url: url, model: model, configuration: configuration, options: .readOnly)
        }
    }

    /// Creates an empty output store at `url`; an SQLite output names the join tables of `joinTablesNamedBy`'s
    /// ends after them.
    package static func create(
        _ destination: SplitDestination, at url: URL, model: ObjectModel, joinTablesNamedBy: Set<String> = []
    ) throws -> BulkCopyStore {
        switch destination.type {
        case .lmdb: return try LMDBStore(url: url, model: model, configuration: destination.configuration)
        case .postgreSQL:
            let store = try ServerStoreOpeners.opener(for: .postgreSQL, url: url, configuration: destination.configuration)(
                url, model, destination.configuration, .default, nil)
            guard let bulk = store as? BulkCopyStore else {
                throw SplitError.usage("\(destination.displayPath): this store kind cannot receive a split")
            }
            return bulk
        default:
            return try SQLiteStore(
                url: url, model: model, configuration: destination.configuration, joinTablesNamedBy: joinTablesNamedBy)
        }
    }
}

@available(*, unavailable)
extension StoreSplitter: Sendable {}

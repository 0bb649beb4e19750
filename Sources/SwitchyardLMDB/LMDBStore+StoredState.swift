import Foundation
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - Reading a store without a model

extension LMDBStore {
    /// The metadata and the model cache of the store in `url`, read without a model, read-only (for
    /// compatibility reports). The model is nil when the store has no cache or one this library cannot read.
    package static func storedState(at url: URL, configuration: String) throws -> (metadata: StoreMetadata, model: ObjectModel?) {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("data.mdb").path),
            FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw StoreError.openFailed(path: path, configuration: configuration, reason: "no LMDB store (a directory with data.mdb) at this path")
        }
        let environment = try LMDBEnvironment.shared(path: path, configuration: configuration, mapSize: 1 << 20, maxDatabases: 64, readOnly: true)
        return try environment.readKeepingDatabases { txn in
            guard let meta = try LMDBDatabase.open("meta", in: txn),
                let bytes = try txn.get(meta, Array(LMDBStoreDatabases.metadataKey.utf8))
            else {
                throw StoreError.notAStore(path: path, expected: .lmdb, reason: "no Switchyard metadata in this LMDB environment")
            }
            let metadata = try LMDBBootstrap.decodeMetadata(Data(bytes), path: path)
            guard let cache = try LMDBDatabase.open("modelcache", in: txn),
                let blob = try txn.get(cache, Array(LMDBStoreDatabases.modelCacheKey.utf8)), !blob.isEmpty
            else { return (metadata, nil) }
            return (metadata, try? ModelCache.decode(Data(blob), source: "\(path) model cache"))
        }
    }
}

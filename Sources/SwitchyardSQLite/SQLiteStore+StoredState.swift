import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardModelFiles
import SwitchyardStores

// MARK: - Reading a store without a model

extension SQLiteStore {
    /// The metadata and the model cache of the store at `url`, read without a model and without writing
    /// (for compatibility reports). The model is nil when the store has no cache or one this library cannot read.
    package static func storedState(at url: URL, configuration: String) throws -> (metadata: StoreMetadata, model: ObjectModel?) {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.openFailed(path: path, configuration: configuration, reason: "no such file")
        }
        let isWAL = try checkHeader(path: path, configuration: configuration)
        do {
            let queue = try openingReadOnly(path: path, isWAL: isWAL) {
                try DatabaseQueue(path: $0, configuration: databaseConfiguration(readOnly: true))
            }
            defer { try? queue.close() }
            return try queue.read { db in
                guard try db.tableExists("Z_METADATA") else {
                    throw StoreError.notAStore(path: path, expected: .sqlite, reason: "an SQLite database without Core Data's Z_METADATA table")
                }
                let metadata = try readMetadata(db, path: path)
                guard try db.tableExists("Z_MODELCACHE"),
                    let blob = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE WHERE Z_CONTENT IS NOT NULL LIMIT 1"),
                    !blob.isEmpty
                else { return (metadata, nil) }
                return (metadata, try? ModelCache.decode(blob, source: "\(path) model cache"))
            }
        } catch {
            throw mapError(error, path: path, configuration: configuration)
        }
    }
}

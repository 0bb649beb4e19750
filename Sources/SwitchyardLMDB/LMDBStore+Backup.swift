import Foundation
import SwitchyardStores

// MARK: - Backup

extension LMDBStore {
    /// Writes a consistent copy of the store into the new directory `url` (which must not exist): the newest
    /// committed snapshot, taken while other contexts and processes keep writing; compacted with `compact`.
    /// The copy keeps everything, `NSStoreUUID` included.
    package func backup(to url: URL, compact: Bool) throws {
        try checkOpen()
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        } catch {
            throw StoreError.openFailed(path: url.path, configuration: configurationName, reason: "cannot create the copy's directory: \(error.localizedDescription)")
        }
        try environment.copy(to: url.path, compact: compact)
    }
}

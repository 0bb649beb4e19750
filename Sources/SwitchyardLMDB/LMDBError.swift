import Foundation
internal import CLMDB
import SwitchyardStores

// MARK: - Checking return codes

/// The one place an LMDB return code becomes a Swift error, so every failure names the store, the call and
/// LMDB's own explanation (`mdb_strerror`, which also covers `errno` values such as `ENOSPC`).
package enum LMDB {
    /// Throws `StoreError.lmdb` unless `rc` is `MDB_SUCCESS`.
    package static func check(_ rc: Int32, operation: String, path: String, configuration: String) throws {
        guard rc != 0 else { return }
        var text = message(for: rc)
        if rc == EIO || rc == ENOSPC || rc == EFBIG, let cause = DiskDiagnosis.explain(storeDirectory: path) {
            text += " (\(cause))"
        }
        throw StoreError.lmdb(path: path, configuration: configuration, call: operation, code: rc, message: text)
    }

    /// LMDB's text for a return code.
    package static func message(for rc: Int32) -> String {
        guard let text = mdb_strerror(rc) else { return "unknown LMDB error \(rc)" }
        return String(cString: text)
    }

    // MARK: - Codes the store reacts to

    /// `MDB_MAP_FULL`: the map is too small; the write is retried after growing it.
    package static let mapFull: Int32 = MDB_MAP_FULL
    /// `MDB_MAP_RESIZED`: another process grew the map; adopt its size and retry.
    package static let mapResized: Int32 = MDB_MAP_RESIZED
}

extension StoreError {
    /// The LMDB return code when this is an `.lmdb` error.
    package var lmdbCode: Int32? {
        if case .lmdb(_, _, _, let code, _) = self { return code }
        return nil
    }
}

import Foundation

// MARK: - StoreFileSet

/// The one place that decides which files make up a store on disk: an SQLite file with its `-wal`, `-shm` and
/// `-journal` sidecars and its support folder `.<name>_SUPPORT` (external binary data), or an LMDB directory.
/// Moving, copying, quarantining, replacing and destroying a store all go through it.
package enum StoreFileSet {
    /// The sidecar suffixes of an SQLite store file.
    package static let sqliteSidecars = ["-wal", "-shm", "-journal"]

    /// `.<name>_SUPPORT` beside an SQLite store: the support folder Core Data keeps its external binary data in.
    package static func sqliteSupportFolder(of store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(".\(store.deletingPathExtension().lastPathComponent)_SUPPORT")
    }

    /// The store's files and folders that exist, the store file (or directory) first.
    package static func files(of url: URL, type: StoreType) -> [URL] {
        switch type {
        case .sqlite:
            return ([url] + sqliteSidecars.map { URL(fileURLWithPath: url.path + $0) } + [sqliteSupportFolder(of: url)])
                .filter { FileManager.default.fileExists(atPath: $0.path) }
        case .lmdb:
            return FileManager.default.fileExists(atPath: url.path) ? [url] : []
        case .memory, .postgreSQL:
            return []
        }
    }

    /// True when the store itself (the SQLite file or LMDB directory) exists.
    package static func exists(at url: URL, type: StoreType) -> Bool {
        type.isFileBased && FileManager.default.fileExists(atPath: url.path)
    }

    /// Removes every file of the store, ignoring those already gone; a server store's tables, connecting with
    /// `options`.
    package static func remove(at url: URL, type: StoreType, options: StoreOptions = .default) {
        guard type.isFileBased else {
            // A server store: its tables, through the product that registered the kind (nothing when none did).
            try? ServerStoreOpeners.locations(for: type, url: url, configuration: "").remove(url, options)
            return
        }
        for file in files(of: url, type: type).reversed() { try? FileManager.default.removeItem(at: file) }
    }

    /// Whether a store is at `url`: its file or directory, or a server store's tables (which needs the kind's
    /// product registered, else it throws saying which), connecting with `options`.
    package static func storeExists(at url: URL, type: StoreType, options: StoreOptions = .default) throws -> Bool {
        guard type.isFileBased else { return try ServerStoreOpeners.locations(for: type, url: url, configuration: "").exists(url, options) }
        return FileManager.default.fileExists(atPath: url.path)
    }

    /// Where the file `file` of the store at `url` goes when the store moves to `destination`: sidecars keep
    /// their suffix, the support folder takes the new name's.
    package static func counterpart(of file: URL, store url: URL, at destination: URL, type: StoreType) -> URL {
        if type == .sqlite, file == sqliteSupportFolder(of: url) { return sqliteSupportFolder(of: destination) }
        return URL(fileURLWithPath: destination.path + String(file.path.dropFirst(url.path.count)))
    }

    /// Puts a complete store written at `temporary` (closed) in place at `url` where no store exists, with one
    /// `rename(2)` of the store file or directory: the step that makes it appear. An SQLite store's support
    /// folder is linked (or copied) under the new name first and the old folder removed after the rename, so a
    /// kill at any point leaves the store whole at one of the two places, its external data files beside it.
    /// Leftovers at `url` from an interrupted earlier attempt (sidecars, a support folder without a store) are
    /// removed first.
    package static func moveIntoPlace(_ temporary: URL, at url: URL, type: StoreType) throws {
        if type == .sqlite {
            for suffix in sqliteSidecars { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            let from = sqliteSupportFolder(of: temporary), to = sqliteSupportFolder(of: url)
            try? FileManager.default.removeItem(at: to)
            if FileManager.default.fileExists(atPath: from.path) { try linkTree(from, to) }
            for suffix in sqliteSidecars { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        }
        try rename(temporary, url)
        if type == .sqlite { try? FileManager.default.removeItem(at: sqliteSupportFolder(of: temporary)) }
    }

    /// Recreates the folder `from` at `to` with every file hard-linked (copied across file systems).
    package static func linkTree(_ from: URL, _ to: URL) throws {
        try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: from.path) {
            let source = from.appendingPathComponent(name), target = to.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: source.path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                try linkTree(source, target)
            } else if link(source.path, target.path) != 0 {
                try FileManager.default.copyItem(at: source, to: target)
            }
        }
    }

    /// `rename(2)`, or an error naming both paths and the reason.
    package static func rename(_ from: URL, _ to: URL) throws {
        guard Foundation.rename(from.path, to.path) == 0 else {
            let code = errno
            throw StoreFileError(path: from.path, reason: "cannot rename to \(to.path): \(String(cString: strerror(code)))", code: code)
        }
    }
}

/// A failed file operation on a store: the path and the system's reason.
package struct StoreFileError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var code: Int32 = 0
    package var description: String { "\(path): \(reason)" }
}

import Foundation

// MARK: - StoreFileSet

/// The one place that decides which files make up a store on disk: an SQLite file with its `-wal`, `-shm` and
/// `-journal` sidecars and its support folder `.<name>_SUPPORT` (external binary data), or an LMDB directory.
/// Moving, copying, quarantining, replacing and destroying a store all go through it.
enum StoreFileSet {
    /// The sidecar suffixes of an SQLite store file.
    static let sqliteSidecars = ["-wal", "-shm", "-journal"]

    /// The store's files and folders that exist, the store file (or directory) first.
    static func files(of url: URL, type: StoreType) -> [URL] {
        switch type {
        case .sqlite:
            return ([url] + sqliteSidecars.map { URL(fileURLWithPath: url.path + $0) } + [SQLiteExternalData.supportFolder(of: url)])
                .filter { FileManager.default.fileExists(atPath: $0.path) }
        case .lmdb:
            return FileManager.default.fileExists(atPath: url.path) ? [url] : []
        case .memory:
            return []
        }
    }

    /// True when the store itself (the SQLite file or LMDB directory) exists.
    static func exists(at url: URL, type: StoreType) -> Bool {
        type != .memory && FileManager.default.fileExists(atPath: url.path)
    }

    /// Removes every file of the store, ignoring those already gone.
    static func remove(at url: URL, type: StoreType) {
        for file in files(of: url, type: type).reversed() { try? FileManager.default.removeItem(at: file) }
    }

    /// Where the file `file` of the store at `url` goes when the store moves to `destination`: sidecars keep
    /// their suffix, the support folder takes the new name's.
    static func counterpart(of file: URL, store url: URL, at destination: URL, type: StoreType) -> URL {
        if type == .sqlite, file == SQLiteExternalData.supportFolder(of: url) { return SQLiteExternalData.supportFolder(of: destination) }
        return URL(fileURLWithPath: destination.path + String(file.path.dropFirst(url.path.count)))
    }

    /// Puts a complete store written at `temporary` (closed) in place at `url` where no store exists, with one
    /// `rename(2)` of the store file or directory: the step that makes it appear. An SQLite store's support
    /// folder is linked (or copied) under the new name first and the old folder removed after the rename, so a
    /// kill at any point leaves the store whole at one of the two places, its external data files beside it.
    /// Leftovers at `url` from an interrupted earlier attempt (sidecars, a support folder without a store) are
    /// removed first.
    static func moveIntoPlace(_ temporary: URL, at url: URL, type: StoreType) throws {
        if type == .sqlite {
            for suffix in sqliteSidecars { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            let from = SQLiteExternalData.supportFolder(of: temporary), to = SQLiteExternalData.supportFolder(of: url)
            try? FileManager.default.removeItem(at: to)
            if FileManager.default.fileExists(atPath: from.path) { try linkTree(from, to) }
            for suffix in sqliteSidecars { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        }
        try rename(temporary, url)
        if type == .sqlite { try? FileManager.default.removeItem(at: SQLiteExternalData.supportFolder(of: temporary)) }
    }

    /// Recreates the folder `from` at `to` with every file hard-linked (copied across file systems).
    static func linkTree(_ from: URL, _ to: URL) throws {
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
    static func rename(_ from: URL, _ to: URL) throws {
        guard Foundation.rename(from.path, to.path) == 0 else {
            let code = errno
            throw StoreFileError(path: from.path, reason: "cannot rename to \(to.path): \(String(cString: strerror(code)))", code: code)
        }
    }
}

/// A failed file operation on a store: the path and the system's reason.
struct StoreFileError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var code: Int32 = 0
    var description: String { "\(path): \(reason)" }
}

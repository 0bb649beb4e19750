import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - SQLiteExternalData

/// Core Data's external binary data ("Allows External Storage") for one SQLite store: the column of such an
/// attribute holds a marker byte and then either the value (small values) or the name of a file in the store's
/// support folder (large ones).
///
/// The layout, from Core Data's `_PFExternalReferenceData` (`initForExternalLocation:…` and
/// `initWithStoreBytes:length:externalLocation:…`):
/// - `0x01` + the bytes: the value, inline;
/// - `0x02` + the file's name (UTF-8) + `0x00`: the value is the whole file
///   `<store folder>/.<store name without extension>_SUPPORT/_EXTERNAL_DATA/<name>`.
///
/// Switchyard writes values of at least `threshold` bytes as files (named by a new UUID, written and synced
/// before the row's transaction commits) and removes a file once the transaction that replaced or deleted its
/// value has committed. A process killed between a commit and the removal leaves an unreferenced file behind,
/// never a reference without its file.
package struct SQLiteExternalData: Sendable {
    /// Values at least this long (100 KiB, Core Data's documented order of magnitude) are written as files.
    package static let threshold = 100 * 1024

    /// The store file.
    package let store: URL
    /// The store's configuration, for errors.
    package let configuration: String
    /// While a backup copies the store (`pin`), files released by saves are kept until it is done, so the
    /// snapshot it copies never names a file that is gone.
    private let pins = Locked<(count: Int, pending: [String])>((0, []))

    package init(store: URL, configuration: String) {
        self.store = store
        self.configuration = configuration
    }

    /// Defers file removals until the matching `unpin`.
    package func pin() { pins.withLock { $0.count += 1 } }

    /// Ends a `pin`; the last one removes the files released meanwhile.
    package func unpin() {
        let released = pins.withLock { state -> [String] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.pending = [] }
            return state.pending
        }
        for name in released { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    /// `.<name>_SUPPORT` beside the store (`StoreFileSet` decides it).
    package static func supportFolder(of store: URL) -> URL { StoreFileSet.sqliteSupportFolder(of: store) }

    /// The `_EXTERNAL_DATA` folder holding the files.
    package var folder: URL { Self.supportFolder(of: store).appendingPathComponent("_EXTERNAL_DATA") }

    /// The value a column holds: inline bytes, or the referenced file's contents. A damaged marker or a missing
    /// file is `StoreError.invalidValue` naming the store, the row and the file.
    package func decode(_ bytes: Data, entity: String, attribute: String, primaryKey: Int64) throws -> Data {
        guard let marker = bytes.first else { return bytes }
        switch marker {
        case 1:
            return bytes.dropFirst()
        case 2:
            guard let name = Self.fileName(bytes) else {
                throw invalid(entity, attribute, primaryKey, "\"0x02 without a file name\"", expected: "external data reference (0x02, a file name, 0x00)")
            }
            let file = folder.appendingPathComponent(name)
            do {
                return try Data(contentsOf: file)
            } catch {
                throw invalid(entity, attribute, primaryKey, "\"external data file \(name)\"",
                              expected: "external data reference: \(file.path) is missing or unreadable (\(error.localizedDescription))")
            }
        default:
            throw invalid(entity, attribute, primaryKey, "\"marker byte \(marker)\"", expected: "external storage value (marker 0x01 inline or 0x02 file)")
        }
    }

    /// The file name in a `0x02` reference; nil for inline bytes or a damaged reference. Names with a path
    /// separator or `..` are refused, so a hostile store never reads outside its folder.
    package static func fileName(_ bytes: Data) -> String? {
        guard bytes.first == 2, bytes.last == 0, bytes.count > 2,
            let name = String(data: bytes.dropFirst().dropLast(), encoding: .utf8),
            !name.contains("/"), name != "..", name != "."
        else { return nil }
        return name
    }

    /// What the column holds for `data`, writing a new file (returned, so a failed transaction can remove it)
    /// for a value of `threshold` bytes or more.
    package func encode(_ data: Data) throws -> (column: Data, newFile: String?) {
        guard data.count >= Self.threshold else { return (Data([1]) + data, nil) }
        let name = UUID().uuidString
        let file = folder.appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.writeSynced(data, to: file)
        } catch {
            throw StoreError.openFailed(
                path: store.path, configuration: configuration, reason: "cannot write external data file \(file.path): \(error.localizedDescription)")
        }
        return (Data([2]) + Data(name.utf8) + Data([0]), name)
    }

    /// Removes the files named (after the transaction that let go of them committed, or after one that failed).
    package func remove(_ names: [String]) {
        guard !names.isEmpty else { return }
        let deferred = pins.withLock { state -> Bool in
            guard state.count > 0 else { return false }
            state.pending += names
            return true
        }
        if deferred { return }
        for name in names { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    /// Links (or, across file systems, copies) the files `names` into the `_EXTERNAL_DATA` folder of the store
    /// at `destination`.
    package func share(_ names: [String], with destination: URL) throws {
        guard !names.isEmpty else { return }
        let target = Self.supportFolder(of: destination).appendingPathComponent("_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        for name in Set(names).sorted() {
            let from = folder.appendingPathComponent(name), to = target.appendingPathComponent(name)
            if link(from.path, to.path) == 0 { continue }
            if errno == EEXIST { continue }
            try FileManager.default.copyItem(at: from, to: to)
        }
    }

    /// Moves the external data files of the store at `temporary` (a store written to replace `store`) into
    /// `store`'s folder, before the replacing rename: both stores' files are then in place whichever one a
    /// crash leaves. Returns the names moved, for `removeFiles(of:except:)` after the rename.
    package static func adoptFiles(from temporary: URL, into store: URL) throws -> Set<String> {
        let from = supportFolder(of: temporary).appendingPathComponent("_EXTERNAL_DATA")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: from.path)) ?? []
        guard !names.isEmpty else { return [] }
        let to = supportFolder(of: store).appendingPathComponent("_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
        for name in names {
            guard rename(from.appendingPathComponent(name).path, to.appendingPathComponent(name).path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
        try? FileManager.default.removeItem(at: supportFolder(of: temporary))
        return Set(names)
    }

    /// Removes `store`'s external data files other than `keep` (those of a store it replaced).
    package static func removeFiles(of store: URL, except keep: Set<String>) {
        let folder = supportFolder(of: store).appendingPathComponent("_EXTERNAL_DATA")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where !keep.contains(name) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// The number of files in the folder (0 when there is none).
    package func fileCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.count) ?? 0
    }

    private static func writeSynced(_ data: Data, to file: URL) throws {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    unlink(file.path)
                    throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
                }
                offset += written
            }
        }
        guard fsync(fd) == 0 else {
            let code = errno
            unlink(file.path)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    private func invalid(_ entity: String, _ attribute: String, _ primaryKey: Int64, _ value: String, expected: String) -> StoreError {
        StoreError.invalidValue(
            path: store.path, configuration: configuration, entity: entity, attribute: "\(attribute) (row p\(primaryKey))", value: value, expected: expected)
    }
}

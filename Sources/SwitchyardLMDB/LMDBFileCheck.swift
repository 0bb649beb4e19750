import Foundation
import SwitchyardStores

// MARK: - LMDBFileCheck

/// Looks at a store directory before LMDB maps it. LMDB itself rejects a file whose first page is not a meta
/// page (`MDB_INVALID`), but it trusts the meta page's last page number: a truncated `data.mdb` is mapped
/// beyond its end and the first read of a missing page kills the process with `SIGBUS`. So the two meta pages
/// are read here and the file must reach the last page they name; anything else is `StoreError.notAStore`.
package enum LMDBFileCheck {
    /// LMDB's `MDB_MAGIC`.
    package static let magic: UInt32 = 0xBEEF_C0DE
    /// LMDB's `MDB_DATA_VERSION` for the 0.9 series.
    package static let dataVersion: UInt32 = 1
    /// `P_META`, in the page header's flags.
    package static let metaPageFlag: UInt16 = 0x08

    // Offsets in a meta page (64-bit build): a 16-byte page header (pgno 8, pad 2, flags 2, lower/upper 4),
    // then MDB_meta: magic 4, version 4, address 8, mapsize 8, two MDB_db of 48 bytes (the free list's
    // md_pad holds the page size; md_root is the last 8 bytes), last_pg 8, txnid 8.
    private static let flagsOffset = 10
    private static let magicOffset = 16
    private static let versionOffset = 20
    private static let pageSizeOffset = 40
    private static let freeRootOffset = 80
    private static let mainRootOffset = 128
    private static let freeDepthOffset = 46
    private static let freeLeafPagesOffset = 56
    private static let freeOverflowPagesOffset = 64
    private static let mainDepthOffset = 94
    private static let lastPageOffset = 136
    private static let txnOffset = 144
    private static let metaLength = 152
    private static let invalidPage = UInt64.max

    /// Throws `StoreError.notAStore` unless `directory` is a directory whose `data.mdb` is absent, empty (LMDB
    /// initializes it; not when `readOnly`, where LMDB cannot) or a complete LMDB data file.
    ///
    /// The meta pages are read before the file's size is taken: another process may commit meanwhile, and a
    /// commit writes its data pages before its meta page, so a size taken first could be older than the meta
    /// page read after it and a healthy store would look truncated.
    ///
    /// This checks only what must hold before LMDB maps the file (the meta pages, the file's length); the
    /// B-tree pages are walked afterwards under a read transaction (`walk(directory:configuration:snapshot:full:)`),
    /// which keeps a writer in another process from reusing the pages being walked.
    package static func validate(directory: String, configuration: String, readOnly: Bool = false) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw notAStore(directory, "it is a file; an LMDB store is a directory holding data.mdb and lock.mdb")
        }
        let dataPath = (directory as NSString).appendingPathComponent("data.mdb")
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: dataPath) else { return }
        if let type = attributes[.type] as? FileAttributeType, type != .typeRegular {
            throw notAStore(directory, "data.mdb is not a regular file")
        }
        guard let file = FileHandle(forReadingAtPath: dataPath) else {
            throw StoreError.openFailed(path: directory, configuration: configuration, reason: "cannot read \(dataPath)")
        }
        defer { try? file.close() }
        // A writer in another process may commit while the pages are read and reuse pages the walk is on: a
        // fault is only believed when the meta pages have not moved meanwhile.
        var attempt = 0
        while true {
            do {
                _ = try checkMetas(file, directory: directory, configuration: configuration, readOnly: readOnly)
                return
            } catch let error as StoreError {
                attempt += 1
                guard attempt < 3, case .notAStore = error,
                    let before = try? readMetas(file, directory: directory, configuration: configuration), before.0.isEmpty == false
                else { throw error }
                Thread.sleep(forTimeInterval: 0.01)
                guard let after = try? readMetas(file, directory: directory, configuration: configuration), after != before else { throw error }
            }
        }
    }

    /// The first bytes of the two meta pages (empty when unreadable), to tell whether a commit happened.
    private static func readMetas(_ file: FileHandle, directory: String, configuration: String) throws -> ([UInt8], [UInt8]) {
        let first = try read(file, at: 0, count: metaLength, directory: directory, configuration: configuration)
        guard first.count == metaLength else { return ([], []) }
        let pageSize = UInt64(uint32(first, pageSizeOffset))
        return (first, try read(file, at: pageSize, count: metaLength, directory: directory, configuration: configuration))
    }

    /// The meta pages checked against each other and the file's length; nil for an empty file (a writer
    /// initializes it).
    private static func checkMetas(
        _ file: FileHandle, directory: String, configuration: String, readOnly: Bool
    ) throws -> (meta0: Meta, meta1: Meta, size: UInt64)? {
        let first = try read(file, at: 0, count: metaLength, directory: directory, configuration: configuration)
        if first.isEmpty {
            guard readOnly else { return nil }
            throw notAStore(directory, "data.mdb is empty (0 bytes); a read-only open cannot initialize it")
        }
        let meta0 = try parseMeta(first, page: 0, directory: directory)
        let pageSize = UInt64(meta0.pageSize)
        let second = try read(file, at: pageSize, count: metaLength, directory: directory, configuration: configuration)
        let meta1 = try parseMeta(second, page: 1, directory: directory)
        // Only now the size (see above): it can only have grown since the meta pages were read.
        let size = try fileSize(file, directory: directory, configuration: configuration)
        guard size >= 2 * pageSize else {
            throw notAStore(directory, "data.mdb is truncated: \(size) bytes, shorter than its two \(pageSize)-byte meta pages")
        }
        let lastPage = max(meta0.lastPage, meta1.lastPage)
        let pages = lastPage.addingReportingOverflow(1)
        let needed = pages.partialValue.multipliedReportingOverflow(by: pageSize)
        guard !pages.overflow, !needed.overflow else { throw notAStore(directory, "data.mdb names an impossible last page \(lastPage)") }
        // Only the newest meta page is used (LMDB picks the higher transaction id). The other may be
        // inconsistent on purpose: after a failed meta write LMDB writes the new roots back with the old last
        // page and transaction id, so the page cache's copy is never used.
        let (newest, page) = meta1.txn > meta0.txn ? (meta1, 1) : (meta0, 0)
        if size < needed.partialValue {
            // A healthy file may end before its last page: LMDB never writes a page a transaction took from the
            // end of the file and freed again before committing ("loose" pages), yet counts it, and puts it on
            // the free list (LMDB 0.9's own copy stops at the file's end for this reason; py-lmdb's LMDB 0.9.36 left
            // 185 of 2,400 random insert-and-delete commits so). So the file may fall short by at most as many pages as the
            // free list's tree can name: its leaf and overflow pages, 8 bytes a page number. A file cut shorter
            // than that is truncated.
            let missing = (needed.partialValue - size + pageSize - 1) / pageSize
            let freeListPages = newest.freeLeafPages.addingReportingOverflow(newest.freeOverflowPages)
            let nameable = freeListPages.partialValue.multipliedReportingOverflow(by: pageSize / 8)
            guard !freeListPages.overflow, !nameable.overflow, missing <= nameable.partialValue else {
                throw notAStore(
                    directory,
                    "data.mdb is truncated: \(size) bytes, but its meta page needs \(needed.partialValue) (pages 0...\(lastPage) of \(pageSize) bytes)")
            }
        }
        // No store commits 2^63 times; LMDB would wrap the id on the next write, and Swift reads it as a negative
        // size_t.
        guard newest.txn < 1 << 63 else {
            throw notAStore(directory, "data.mdb meta page \(page) holds an impossible transaction id \(newest.txn)")
        }
        for root in [newest.freeRoot, newest.mainRoot] where root != invalidPage && root > newest.lastPage {
            throw notAStore(directory, "data.mdb meta page \(page) names root page \(root) beyond its last page \(newest.lastPage)")
        }
        return (meta0, meta1, size)
    }

    /// Walks the B-trees of the snapshot `snapshot` (a read transaction's id, held by the caller so no writer
    /// reuses its pages): every page when `full`, or when `full` is nil and the file is at most
    /// `LMDBPageCheck.fullCheckLimit`; else the roots. Returns false when neither meta page holds that snapshot
    /// any more (two commits happened since it began): the caller begins a newer one and walks again.
    package static func walk(directory: String, configuration: String, snapshot: UInt64, full: Bool?) throws -> Bool {
        let dataPath = (directory as NSString).appendingPathComponent("data.mdb")
        guard let file = FileHandle(forReadingAtPath: dataPath) else {
            throw StoreError.openFailed(path: directory, configuration: configuration, reason: "cannot read \(dataPath)")
        }
        defer { try? file.close() }
        guard let (meta0, meta1, size) = try checkMetas(file, directory: directory, configuration: configuration, readOnly: false) else {
            return true
        }
        let metas = [meta0, meta1].filter { $0.txn == snapshot }
        guard let pinned = metas.first else { return false }
        var walk = LMDBPageCheck(
            file: file, directory: directory, configuration: configuration, pageSize: Int(meta0.pageSize), lastPage: pinned.lastPage,
            full: full ?? (size <= LMDBPageCheck.fullCheckLimit))
        try walk.check(roots: [
            (pinned.freeRoot, pinned.freeDepth, "free list"), (pinned.mainRoot, pinned.mainDepth, "main"),
        ])
        return true
    }

    // MARK: - Parsing

    private struct Meta {
        var pageSize: UInt32
        var freeRoot: UInt64
        var mainRoot: UInt64
        var lastPage: UInt64
        var freeDepth: Int
        var mainDepth: Int
        var txn: UInt64
        /// The free list tree's leaf and overflow pages (the pages its page-number lists fill).
        var freeLeafPages: UInt64 = 0
        var freeOverflowPages: UInt64 = 0
    }

    private static func parseMeta(_ bytes: [UInt8], page: Int, directory: String) throws -> Meta {
        guard bytes.count == metaLength else {
            throw notAStore(directory, "data.mdb is truncated inside meta page \(page)")
        }
        let flags = UInt16(bytes[flagsOffset]) | UInt16(bytes[flagsOffset + 1]) << 8
        let foundMagic = uint32(bytes, magicOffset)
        guard flags & metaPageFlag != 0, foundMagic == magic else {
            throw notAStore(directory, "data.mdb is not an LMDB data file (page \(page) is not an LMDB meta page)")
        }
        let version = uint32(bytes, versionOffset)
        guard version == dataVersion else {
            throw notAStore(directory, "data.mdb has LMDB data format \(version); this library reads format \(dataVersion)")
        }
        let pageSize = uint32(bytes, pageSizeOffset)
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            throw notAStore(directory, "data.mdb meta page \(page) has an invalid page size \(pageSize)")
        }
        return Meta(
            pageSize: pageSize, freeRoot: uint64(bytes, freeRootOffset), mainRoot: uint64(bytes, mainRootOffset),
            lastPage: uint64(bytes, lastPageOffset), freeDepth: Int(uint16(bytes, freeDepthOffset)),
            mainDepth: Int(uint16(bytes, mainDepthOffset)), txn: uint64(bytes, txnOffset),
            freeLeafPages: uint64(bytes, freeLeafPagesOffset), freeOverflowPages: uint64(bytes, freeOverflowPagesOffset))
    }

    private static func read(_ file: FileHandle, at offset: UInt64, count: Int, directory: String, configuration: String) throws -> [UInt8] {
        do {
            try file.seek(toOffset: offset)
            return Array(try file.read(upToCount: count) ?? Data())
        } catch {
            throw StoreError.openFailed(path: directory, configuration: configuration, reason: "cannot read data.mdb: \(error)")
        }
    }

    private static func fileSize(_ file: FileHandle, directory: String, configuration: String) throws -> UInt64 {
        do {
            return try file.seekToEnd()
        } catch {
            throw StoreError.openFailed(path: directory, configuration: configuration, reason: "cannot read data.mdb: \(error)")
        }
    }

    /// LMDB writes its meta page in the machine's byte order; every platform Swift runs on is little-endian.
    private static func uint32(_ b: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) }
    }

    private static func uint16(_ b: [UInt8], _ at: Int) -> Int {
        Int(b[at]) | Int(b[at + 1]) << 8
    }

    private static func uint64(_ b: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * $1) }
    }

    private static func notAStore(_ directory: String, _ reason: String) -> StoreError {
        StoreError.notAStore(path: directory, expected: .lmdb, reason: reason)
    }
}

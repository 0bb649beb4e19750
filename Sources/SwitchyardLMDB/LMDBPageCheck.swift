import Foundation
import SwitchyardStores

// MARK: - LMDBPageCheck

/// Walks the B-trees of a `data.mdb` with bounds-checked reads before liblmdb trusts them.
///
/// liblmdb does not check the pages it follows: a branch page where a leaf belongs fails an `assert`
/// (abort), a page whose header or node offsets are garbage makes a cursor read outside the map (SIGBUS,
/// SIGSEGV). This walk starts at the newest meta page's free-list and main roots, follows every branch, every
/// named database (`F_SUBDATA`) and every overflow chain (`F_BIGDATA`), and checks on every page: that it
/// lies before the meta page's last page, that it names itself, that its kind is the one the tree needs
/// (branch above, leaf at depth 0), that its header's free-space bounds and every node it lists lie inside
/// the page, and that the tree depth is the one its database records. Each page is read once, so the cost is
/// one read of the file: `LMDBFileCheck` runs it on opening when `data.mdb` is at most `fullCheckLimit`
/// bytes, and only the root pages above that; `LMDBStore.checkFile(at:)` always runs all of it.
///
/// What it cannot see: bytes inside keys and values (the row decoder checks those), key order, and pages
/// that are well-formed but hold other data than they should. README "Known limits" says so.
package struct LMDBPageCheck {
    /// Up to this size an ordinary open walks every page (4 MiB: 1,024 pages of 4 KiB; a 7.7 MB file took
    /// 30 ms in a debug build on a loaded 2-core machine);
    /// above it only the root pages, so opening a large store does not read all of it.
    package static let fullCheckLimit: UInt64 = 4 << 20

    private static let branch: UInt16 = 0x01, leaf: UInt16 = 0x02, overflow: UInt16 = 0x04, leaf2: UInt16 = 0x20
    private static let bigData: UInt16 = 0x01, subData: UInt16 = 0x02, dupData: UInt16 = 0x04
    private static let headerSize = 16
    private static let nodeHeaderSize = 8
    private static let dbRecordSize = 48
    private static let invalidPage = UInt64.max

    let file: FileHandle
    let directory: String
    let pageSize: Int
    let lastPage: UInt64
    /// When false only the root page of each tree is read.
    let full: Bool
    /// The configuration the store was opened for (for errors).
    let configuration: String
    private var visited = Set<UInt64>()
    /// The whole file, read with one call when it is small enough to walk on every open.
    private var preloaded: [UInt8]?

    init(file: FileHandle, directory: String, configuration: String, pageSize: Int, lastPage: UInt64, full: Bool) {
        self.file = file
        self.directory = directory
        self.configuration = configuration
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.full = full
        if full, (lastPage + 1) * UInt64(pageSize) <= Self.fullCheckLimit {
            try? file.seek(toOffset: 0)
            preloaded = (try? file.read(upToCount: Int((lastPage + 1) * UInt64(pageSize)))).map { [UInt8]($0) }
        }
    }

    /// Checks the trees under the two roots of the newest meta page (`invalidPage` for an empty tree), each
    /// with its recorded depth.
    package mutating func check(roots: [(root: UInt64, depth: Int, name: String)]) throws {
        for tree in roots { try checkTree(root: tree.root, depth: tree.depth, name: tree.name) }
    }

    private mutating func checkTree(root: UInt64, depth: Int, name: String) throws {
        guard root != Self.invalidPage else { return }
        guard depth >= 1, depth <= 32 else { throw damaged("database \(name) records an impossible depth \(depth)") }
        try checkPage(root, level: depth - 1, tree: name)
    }

    /// `level` 0 is a leaf; above that, a branch whose children are one level lower.
    private mutating func checkPage(_ number: UInt64, level: Int, tree: String) throws {
        guard number >= 2, number <= lastPage else {
            throw damaged("database \(tree) names page \(number), outside pages 2...\(lastPage)")
        }
        guard visited.insert(number).inserted else {
            throw damaged("database \(tree) reaches page \(number) twice")
        }
        let page = try read(number, count: 1)
        let pgno = uint64(page, 0), flags = uint16(page, 10)
        guard pgno == number else { throw damaged("page \(number) is labelled \(pgno) (database \(tree))") }
        let kind = flags & (Self.branch | Self.leaf | Self.overflow)
        guard kind == (level == 0 ? Self.leaf : Self.branch) else {
            throw damaged("page \(number) of database \(tree) has flags 0x\(String(flags, radix: 16)), not a \(level == 0 ? "leaf" : "branch") page")
        }
        let lower = Int(uint16(page, 12)), upper = Int(uint16(page, 14))
        guard lower >= Self.headerSize, lower <= upper, upper <= pageSize, lower % 2 == 0 else {
            throw damaged("page \(number) of database \(tree) has free space \(lower)..<\(upper) outside the page")
        }
        if flags & Self.leaf2 != 0 { return }   // fixed-size keys of a DUPFIXED sub-database: no nodes
        let count = (lower - Self.headerSize) / 2
        if level > 0, count == 0 { throw damaged("branch page \(number) of database \(tree) is empty") }
        for index in 0..<count {
            let offset = Int(uint16(page, Self.headerSize + 2 * index))
            guard offset >= upper, offset + Self.nodeHeaderSize <= pageSize else {
                throw damaged("page \(number) of database \(tree): node \(index) at \(offset) is outside the page")
            }
            let lo = UInt64(uint16(page, offset)), hi = UInt64(uint16(page, offset + 2))
            let nodeFlags = uint16(page, offset + 4), keySize = Int(uint16(page, offset + 6))
            let keyEnd = offset + Self.nodeHeaderSize + keySize
            guard keyEnd <= pageSize else {
                throw damaged("page \(number) of database \(tree): node \(index)'s key runs past the page")
            }
            if level > 0 {
                let child = lo | hi << 16 | UInt64(nodeFlags) << 32
                if full { try checkPage(child, level: level - 1, tree: tree) }
                continue
            }
            let dataSize = Int(lo | hi << 16)
            if nodeFlags & Self.bigData != 0 {
                guard keyEnd + 8 <= pageSize else { throw damaged("page \(number) of database \(tree): node \(index) is cut off") }
                if full { try checkOverflow(uint64(page, keyEnd), size: dataSize, tree: tree) }
                continue
            }
            guard keyEnd + dataSize <= pageSize else {
                throw damaged("page \(number) of database \(tree): node \(index)'s value runs past the page")
            }
            if nodeFlags & Self.subData != 0 {
                guard dataSize == Self.dbRecordSize else {
                    throw damaged("page \(number) of database \(tree): a database record of \(dataSize) bytes")
                }
                let name = String(decoding: page[(offset + Self.nodeHeaderSize)..<keyEnd], as: UTF8.self)
                let depth = Int(uint16(page, keyEnd + 6))
                if nodeFlags & Self.dupData == 0 || full {
                    try checkTree(root: uint64(page, keyEnd + 40), depth: depth, name: "\(tree)/\(name)")
                }
            }
        }
    }

    private mutating func checkOverflow(_ number: UInt64, size: Int, tree: String) throws {
        let pages = UInt64((Self.headerSize + size + pageSize - 1) / pageSize)
        guard number >= 2, number <= lastPage, number + pages - 1 <= lastPage else {
            throw damaged("database \(tree) names overflow pages \(number)+\(pages), past page \(lastPage)")
        }
        guard visited.insert(number).inserted else { throw damaged("database \(tree) reaches page \(number) twice") }
        let page = try read(number, count: 1)
        guard uint64(page, 0) == number, uint16(page, 10) & Self.overflow != 0, UInt64(uint32(page, 12)) == pages else {
            throw damaged("page \(number) of database \(tree) is not the \(pages)-page overflow value its node names")
        }
    }

    // MARK: - Reading

    private func read(_ number: UInt64, count: Int) throws -> [UInt8] {
        if let preloaded {
            let start = Int(number) * pageSize, end = start + pageSize * count
            guard end <= preloaded.count else { throw damaged("page \(number) is past the end of data.mdb") }
            return Array(preloaded[start..<end])
        }
        let bytes: [UInt8]
        do {
            try file.seek(toOffset: number * UInt64(pageSize))
            bytes = Array(try file.read(upToCount: pageSize * count) ?? Data())
        } catch {
            throw StoreError.openFailed(path: directory, configuration: configuration, reason: "cannot read data.mdb: \(error)")
        }
        guard bytes.count == pageSize * count else { throw damaged("page \(number) is past the end of data.mdb") }
        return bytes
    }

    private func damaged(_ reason: String) -> StoreError {
        StoreError.notAStore(path: directory, expected: .lmdb, reason: "data.mdb is damaged: \(reason)")
    }

    private func uint16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    private func uint32(_ b: [UInt8], _ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) } }
    private func uint64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * $1) } }
}

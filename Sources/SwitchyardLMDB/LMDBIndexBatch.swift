import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - LMDBIndexBatch

/// The index entries of a save's inserted rows, gathered per index database and written in key order once
/// every row is in, through one cursor per database.
///
/// LMDB splits a full leaf page in the middle unless the new key goes after the page's last one, when it
/// leaves the full page as it is and starts the next. Entries arriving in the rows' order (names, dates,
/// anything not rising with the primary key) land all over the index and leave its pages about half full:
/// a million names of the bench entity took 15,389 pages, 60 MB of dirty pages the write transaction keeps
/// on the heap until the commit. In key order they fill about 7,900 (measured with the C API, 1M keys of the
/// same shape). A cursor put in key order also skips the search from the root (LMDB checks the page the
/// cursor is on first), which pays for the sort.
///
/// Memory: each entry's key (a 2-byte length, then the key) in one byte buffer per database and 4 bytes for
/// its place there, about 26 bytes an entry for the bench entity's names, freed once written.
package struct LMDBIndexBatch {
    /// One database's entries.
    private struct Entries {
        let database: LMDBDatabase
        /// Each entry: its length (2 bytes, little-endian; LMDB keys are at most 511 bytes), then its key.
        var bytes: [UInt8] = []
        /// Where each entry starts in `bytes`.
        var starts: [UInt32] = []
    }

    private var lists: [Entries] = []

    package init() {}

    /// Queues the entry `key` for `database`. A buffer that would pass 4 GiB is written out first (`flush`), so
    /// `starts` never overflows; a save of that size writes its entries in several sorted runs.
    package mutating func add(_ key: [UInt8], to database: LMDBDatabase, txn: LMDBTransaction) throws {
        precondition(key.count <= Int(UInt16.max), "LMDBIndexBatch: an index key of \(key.count) bytes")
        if let full = lists.firstIndex(where: { $0.database.handle == database.handle }),
            lists[full].bytes.count + key.count + 2 > Int(UInt32.max)
        {
            try flush(txn: txn)
        }
        let list: Int
        if let found = lists.firstIndex(where: { $0.database.handle == database.handle }) {
            list = found
        } else {
            lists.append(Entries(database: database))
            list = lists.count - 1
        }
        lists[list].starts.append(UInt32(lists[list].bytes.count))
        lists[list].bytes.append(UInt8(truncatingIfNeeded: key.count))
        lists[list].bytes.append(UInt8(truncatingIfNeeded: key.count >> 8))
        lists[list].bytes.append(contentsOf: key)
    }

    /// Writes every queued entry, each database's in ascending key order (LMDB's default order: bytes compared
    /// as unsigned, a prefix first), and forgets them.
    package mutating func flush(txn: LMDBTransaction) throws {
        for index in lists.indices {
            var entries = Entries(database: lists[index].database)
            swap(&entries, &lists[index])
            guard !entries.starts.isEmpty else { continue }
            try entries.bytes.withUnsafeBytes { buffer in
                let base = buffer.baseAddress!
                entries.starts.withUnsafeMutableBufferPointer { starts in
                    starts.sort { Self.precedes(base + Int($0), base + Int($1)) }
                }
                try txn.withCursor(entries.database) { cursor in
                    let empty = UnsafeRawBufferPointer(start: nil, count: 0)
                    for start in entries.starts {
                        let entry = base + Int(start)
                        try cursor.put(key: UnsafeRawBufferPointer(start: entry + 2, count: Self.length(entry)), value: empty)
                    }
                }
            }
        }
        lists.removeAll()
    }

    /// The key length stored at `entry`.
    @inline(__always)
    private static func length(_ entry: UnsafeRawPointer) -> Int {
        Int(entry.load(as: UInt8.self)) | Int(entry.load(fromByteOffset: 1, as: UInt8.self)) << 8
    }

    /// Whether the key at `a` sorts before the key at `b`: their first 8 bytes compared as one big-endian word
    /// (most pairs differ there), then the rest with `memcmp`, then the shorter first.
    @inline(__always)
    private static func precedes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> Bool {
        let la = length(a), lb = length(b)
        let common = min(la, lb)
        var offset = 0
        if common >= 8 {
            let x = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
            let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
            if x != y { return x < y }
            offset = 8
        }
        let order = memcmp(a + 2 + offset, b + 2 + offset, common - offset)
        return order != 0 ? order < 0 : la < lb
    }
}

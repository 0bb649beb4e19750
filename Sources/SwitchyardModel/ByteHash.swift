// MARK: - ByteHash

/// The one hash of raw bytes the package's own hash tables use (`StoreEqualityIndex`, the SQLite store's
/// de-duplication of a driving list, `NameIndex`): the bytes a word at a time, then MurmurHash3's 64-bit finalizer, so the low
/// bits a power-of-two table keeps depend on every byte. Not for anything stored or sent: the value may change
/// between versions.
@usableFromInline package enum ByteHash {
    /// `bytes` eight at a time (multiply by an odd constant and rotate, the length folded in first), then `seed`
    /// (which tells kinds of values apart) XORed in before the finalizer. FNV-1a, a byte at a time with each
    /// multiply waiting on the last, took about 100 cycles for a 24-byte key: a fetched-property prefetch hashes
    /// each of its 10,000 keys twice. Kept in memory only: no file holds these hashes.
    @inlinable
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        @inline(__always) func step(_ hash: UInt64, _ word: UInt64) -> UInt64 {
            let h = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
            return (h << 31) | (h >> 33)
        }
        let count = bytes.count
        var hash = 0xCBF2_9CE4_8422_2325 ^ UInt64(truncatingIfNeeded: count)
        var i = 0
        while i + 8 <= count {
            hash = step(hash, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        if i < count {
            var tail: UInt64 = 0
            if count >= 8 {
                // The last eight bytes, those already hashed shifted out.
                tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) >> UInt64(8 * (i + 8 - count))
            } else {
                for (k, byte) in bytes.enumerated() { tail |= UInt64(byte) << UInt64(8 * k) }
            }
            hash = step(hash, tail)
        }
        return mix(hash ^ seed)
    }

    /// Spreads `x`'s bits over the low ones a table's mask keeps (MurmurHash3's finalizer).
    @inlinable
    package static func mix(_ x: UInt64) -> UInt64 {
        var x = x
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }
}

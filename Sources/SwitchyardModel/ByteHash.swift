// MARK: - ByteHash

/// The one hash of raw bytes the package's own hash tables use (`StoreEqualityIndex`, the SQLite store's
/// de-duplication of a driving list): FNV-1a over the bytes, then MurmurHash3's 64-bit finalizer, so the low
/// bits a power-of-two table keeps depend on every byte. Not for anything stored or sent: the value may change
/// between versions.
@usableFromInline package enum ByteHash {
    /// FNV-1a over `bytes`, then `seed` (which tells kinds of values apart) XORed in before the finalizer.
    @inlinable
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
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

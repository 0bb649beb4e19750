import Foundation
import Testing
@testable import Switchyard

/// The real stores whose `Z_MODELCACHE` the model-cache tests read, and the blob reader.
enum ModelCacheFixtures {
    static let sampleModelV1 = "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"
    static let sampleModelV2 = "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite"
    static let sampleModel2V1 = "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"
    static let moody = "objcio__core-data/Migrations/MigrationsTests/Moody.moody"

    /// Every fixture store with a model cache.
    static let stores = [sampleModelV1, sampleModelV2, sampleModel2V1, moody]

    /// The raw `Z_CONTENT` of a fixture store, read with the sqlite3 shell (read-only) as hex and decoded.
    static func blob(_ relative: String) throws -> Data {
        let hex = try SQLite3.query(Fixtures.url(relative).path, "select hex(Z_CONTENT) from Z_MODELCACHE")
        return try #require(Data(hex: hex), "sqlite3 returned non-hex output for \(relative)")
    }

    /// What errors from decoding a fixture's cache name.
    static func source(_ relative: String) -> String { Fixtures.url(relative).path + " model cache" }
}

extension Data {
    /// Bytes from upper- or lower-case hexadecimal; nil for odd length or a non-hex character.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self.init(bytes)
    }
}

/// A seeded generator (SplitMix64), so "random" test data is the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` bytes from the generator.
    mutating func bytes(_ count: Int) -> Data {
        var data = Data(capacity: count)
        for _ in 0..<count { data.append(UInt8(truncatingIfNeeded: next())) }
        return data
    }
}

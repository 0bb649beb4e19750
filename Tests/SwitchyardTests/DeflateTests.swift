import Foundation
import Testing
@testable import Switchyard

/// Raw DEFLATE over zlib: round trips, every way input can be bad, and Core Data's real model-cache blobs.
@Suite struct DeflateTests {
    // MARK: - Round trips

    @Test func emptyDataRoundTrips() throws {
        let packed = try Deflate.compress(Data())
        #expect(!packed.isEmpty)  // an empty stream still has a final block
        #expect(try Deflate.decompress(packed) == Data())
    }

    @Test func smallDataRoundTrips() throws {
        let text = Data("Switchyard sorts entities onto stores.".utf8)
        #expect(try Deflate.decompress(Deflate.compress(text)) == text)
        #expect(try Deflate.decompress(Deflate.compress(Data([0]))) == Data([0]))
    }

    @Test(arguments: [Int32(0), 1, 6, 9, -1])
    func fiveMegabytesOfRandomAndRepetitiveDataRoundTrip(level: Int32) throws {
        var generator = SeededGenerator(seed: 0x5EED)
        var data = Data()
        // Alternate incompressible and highly compressible runs so both zlib paths are exercised and the
        // output spans many 64 KiB chunks.
        while data.count < 5 << 20 {
            data.append(generator.bytes(100_000))
            data.append(Data(repeating: UInt8(truncatingIfNeeded: data.count), count: 150_000))
        }
        let packed = try Deflate.compress(data, level: level)
        if level != 0 { #expect(packed.count < data.count) }
        #expect(try Deflate.decompress(packed) == data)
    }

    @Test func compressesWithoutAZlibHeader() throws {
        // A zlib stream would start with 0x78; raw DEFLATE of a short text starts with a block header instead.
        let packed = try Deflate.compress(Data("hello hello hello".utf8))
        #expect(packed.first != 0x78)
    }

    // MARK: - Bad input

    @Test func invalidLevelIsAnInitError() {
        let error = #expect(throws: CompressionError.self) { try Deflate.compress(Data([1, 2, 3]), level: 42) }
        #expect(error?.operation == "deflateInit2")
        #expect(error?.codeName == "Z_STREAM_ERROR")
    }

    @Test func garbageThrowsDataError() {
        // 0xFF: final block with the reserved block type 3.
        let error = #expect(throws: CompressionError.self) { try Deflate.decompress(Data(repeating: 0xFF, count: 64)) }
        #expect(error?.operation == "inflate")
        #expect(error?.codeName == "Z_DATA_ERROR")
        #expect(error?.description.contains("invalid block type") == true)
    }

    @Test func emptyInputThrows() {
        let error = #expect(throws: CompressionError.self) { try Deflate.decompress(Data()) }
        #expect(error?.codeName == "Z_BUF_ERROR")
        #expect(error?.message.contains("truncated") == true)
    }

    @Test func everyTruncationThrows() throws {
        var generator = SeededGenerator(seed: 7)
        let data = generator.bytes(3000) + Data(repeating: 0x41, count: 3000)
        let packed = try Deflate.compress(data)
        for length in 0..<packed.count {
            #expect(throws: CompressionError.self, "prefix of \(length) bytes") {
                try Deflate.decompress(packed.prefix(length))
            }
        }
    }

    @Test func trailingBytesThrow() throws {
        let packed = try Deflate.compress(Data("abc".utf8)) + Data([0, 1, 2])
        let error = #expect(throws: CompressionError.self) { try Deflate.decompress(packed) }
        #expect(error?.message.contains("3 bytes follow the end") == true)
    }

    @Test func outputLimitStopsABomb() throws {
        let bomb = try Deflate.compress(Data(repeating: 0, count: 10 << 20))
        #expect(bomb.count < 20_000)
        let error = #expect(throws: CompressionError.self) { try Deflate.decompress(bomb, maxOutput: 1 << 20) }
        #expect(error?.message.contains("exceeds the limit") == true)
        #expect(try Deflate.decompress(bomb, maxOutput: 10 << 20).count == 10 << 20)
    }

    @Test func flippedBytesNeverCrash() throws {
        var generator = SeededGenerator(seed: 99)
        let packed = try Deflate.compress(Data("The quick brown fox jumps over the lazy dog. ".utf8) + generator.bytes(500))
        // Raw DEFLATE has no checksum, so a damaged stream may inflate to other bytes; it must never trap.
        for _ in 0..<500 {
            var damaged = packed
            let index = Int(generator.next() % UInt64(damaged.count))
            damaged[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            _ = try? Deflate.decompress(damaged, maxOutput: 1 << 20)
        }
        for _ in 0..<200 {
            _ = try? Deflate.decompress(generator.bytes(Int(generator.next() % 300)), maxOutput: 1 << 20)
        }
    }

    // MARK: - Core Data's blobs

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: ModelCacheFixtures.stores)
    func inflatesRealModelCaches(_ store: String) throws {
        let inflated = try Deflate.decompress(ModelCacheFixtures.blob(store))
        // Sizes checked with Python's zlib.decompress(blob, -15) on the same files.
        let expected = [
            ModelCacheFixtures.sampleModelV1: 5642, ModelCacheFixtures.sampleModelV2: 5572,
            ModelCacheFixtures.sampleModel2V1: 10976, ModelCacheFixtures.moody: 5929,
        ]
        #expect(inflated.count == expected[store])
        #expect(inflated.prefix(8) == Data("bplist00".utf8))
    }
}

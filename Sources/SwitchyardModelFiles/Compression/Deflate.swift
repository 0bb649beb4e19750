import Foundation
internal import CZlib

// MARK: - Deflate

/// Raw DEFLATE (RFC 1951: no zlib header, no checksum, window bits -15), the format of Core Data's
/// `Z_MODELCACHE.Z_CONTENT`, over the system zlib. Both directions stream through a fixed-size output buffer,
/// so memory is the output plus 64 KiB, and every failure is a `CompressionError`, never a crash.
///
/// ```swift
/// let packed = try Deflate.compress(Data(xml.utf8))
/// let xml = try Deflate.decompress(packed)
/// ```
package enum Deflate {
    /// Output is produced in chunks of this size.
    package static let chunkSize = 64 * 1024
    /// zlib counts input in 32-bit `uInt`; larger inputs are fed in slices of this size.
    package static let maxInputSlice = 1 << 30

    /// Compresses `data` to a raw DEFLATE stream at `level` (0 = store, 1 = fastest ... 9 = smallest;
    /// -1 is zlib's default). A level outside -1...9 is a `CompressionError` from `deflateInit2`.
    public static func compress(_ data: Data, level: Int32 = 6) throws(CompressionError) -> Data {
        let z = try ZStream.make(.deflate, level: level)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        var output = Data()
        try withBytes(of: data) { (input) throws(CompressionError) in
            var offset = 0
            var last = false
            // zpipe.c's pattern: per input slice, call deflate again while it fills the whole output chunk.
            repeat {
                let count = min(maxInputSlice, input.count - offset)
                z.setInput(input.baseAddress.map { $0 + offset }, count: count)
                offset += count
                last = offset == input.count
                var code: Int32
                repeat {
                    z.setOutput(chunk.baseAddress, count: chunk.count)
                    code = try z.deflateStep(finish: last)
                    output.append(contentsOf: chunk[0..<(chunk.count - z.availableOutput)])
                } while z.availableOutput == 0
                if last && code != Z_STREAM_END {
                    // With Z_FINISH and output space left zlib must have ended the stream; report it if not.
                    try z.check(code, operation: "deflate (finish)", accepted: [Z_STREAM_END])
                }
            } while !last
        }
        return output
    }

    /// Inflates a raw DEFLATE stream. Truncated or empty input, corrupt input, bytes after the end of the
    /// stream, and output beyond `maxOutput` bytes (a guard against decompression bombs) are all
    /// `CompressionError`s.
    public static func decompress(_ data: Data, maxOutput: Int = 256 << 20) throws(CompressionError) -> Data {
        let z = try ZStream.make(.inflate)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        var output = Data()
        try withBytes(of: data) { (input) throws(CompressionError) in
            var offset = 0
            while true {
                if z.availableInput == 0 && offset < input.count {
                    let count = min(maxInputSlice, input.count - offset)
                    z.setInput(input.baseAddress.map { $0 + offset }, count: count)
                    offset += count
                }
                z.setOutput(chunk.baseAddress, count: chunk.count)
                let code = try z.inflateStep()
                let produced = chunk.count - z.availableOutput
                guard produced <= maxOutput - output.count else {
                    throw CompressionError(
                        operation: "inflate", code: Z_BUF_ERROR,
                        message: "the inflated data exceeds the limit of \(maxOutput) bytes")
                }
                output.append(contentsOf: chunk[0..<produced])
                let unread = z.availableInput + (input.count - offset)
                if code == Z_STREAM_END {
                    guard unread == 0 else {
                        throw CompressionError(
                            operation: "inflate", code: Z_DATA_ERROR,
                            message: "\(unread) bytes follow the end of the DEFLATE stream")
                    }
                    return
                }
                // Z_BUF_ERROR with output space left means zlib needs input that does not exist.
                if code == Z_BUF_ERROR && unread == 0 {
                    throw CompressionError(
                        operation: "inflate", code: Z_BUF_ERROR,
                        message: "the input (\(input.count) bytes) ends before the DEFLATE stream does: "
                            + "it is truncated or empty")
                }
            }
        }
        return output
    }

    /// Runs `body` over `data`'s bytes, keeping the typed error (Data's own `withUnsafeBytes` only rethrows
    /// untyped errors).
    private static func withBytes(
        of data: Data, _ body: (UnsafeRawBufferPointer) throws(CompressionError) -> Void
    ) throws(CompressionError) {
        let result: Result<Void, CompressionError> = data.withUnsafeBytes { raw in
            do throws(CompressionError) {
                try body(raw)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}

import Foundation
internal import CZlib

// MARK: - ZStream

/// Owns one zlib `z_stream` for raw DEFLATE (RFC 1951, no zlib header or checksum: window bits -15), which is
/// what Core Data writes to `Z_MODELCACHE`.
///
/// A class, not a struct, because zlib keeps a pointer back to the `z_stream` in its private state and rejects
/// a stream that has moved (`deflateStateCheck`); the stream therefore lives in memory allocated once here,
/// and `deinit` releases zlib's state exactly once, whatever path the caller left by.
package final class ZStream {
    /// Compressing or decompressing.
    package enum Mode {
        case deflate
        case inflate
    }

    /// Negative window bits select raw DEFLATE; 15 is the largest (32 KiB) window.
    package static let rawWindowBits: Int32 = -15

    package let mode: Mode
    /// The stream zlib works on; stable for the life of the object.
    let stream: UnsafeMutablePointer<z_stream>
    /// The code `deflateInit2_`/`inflateInit2_` returned; zlib state exists (and must be ended) only when Z_OK.
    private let initCode: Int32

    /// Starts a stream; check `initCode` through `make`, which throws when zlib refused.
    private init(mode: Mode, level: Int32) {
        self.mode = mode
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let size = Int32(MemoryLayout<z_stream>.size)
        switch mode {
        case .deflate:
            // memLevel 8 and the default strategy are zlib's own defaults (what deflateInit uses).
            initCode = deflateInit2_(
                stream, level, Z_DEFLATED, Self.rawWindowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(), size)
        case .inflate:
            initCode = inflateInit2_(stream, Self.rawWindowBits, zlibVersion(), size)
        }
    }

    /// A ready stream, or the error zlib gave for the initialisation (a bad level, no memory, wrong version).
    package static func make(_ mode: Mode, level: Int32 = Z_DEFAULT_COMPRESSION) throws(CompressionError) -> ZStream {
        let z = ZStream(mode: mode, level: level)
        _ = try z.check(z.initCode, operation: mode == .deflate ? "deflateInit2" : "inflateInit2")
        return z
    }

    deinit {
        // The end call's code is not checked: deinit cannot throw, and its only failure (Z_DATA_ERROR, "freed
        // before the end of the stream") follows an error that was already thrown to the caller.
        if initCode == Z_OK {
            switch mode {
            case .deflate: _ = deflateEnd(stream)
            case .inflate: _ = inflateEnd(stream)
            }
        }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    // MARK: - Return codes

    /// Every zlib return code goes through here: a code in `accepted` is returned for the caller to act on,
    /// anything else becomes a `CompressionError` carrying zlib's message (or zlib's text for the code).
    @discardableResult
    func check(_ code: Int32, operation: String, accepted: [Int32] = [Z_OK]) throws(CompressionError) -> Int32 {
        if accepted.contains(code) { return code }
        let message: String
        if let msg = stream.pointee.msg {
            message = String(cString: msg)
        } else if let text = zError(code) {
            message = String(cString: text)
        } else {
            message = "no message"
        }
        throw CompressionError(operation: operation, code: code, message: message)
    }

    // MARK: - Buffers

    /// Points zlib at `count` input bytes starting at `base` (zlib never writes through `next_in`).
    package func setInput(_ base: UnsafeRawPointer?, count: Int) {
        stream.pointee.next_in = base.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self)) }
        stream.pointee.avail_in = uInt(count)
    }

    /// Input bytes zlib has not consumed yet.
    package var availableInput: Int { Int(stream.pointee.avail_in) }

    /// Points zlib at an output buffer of `count` bytes.
    package func setOutput(_ base: UnsafeMutableRawPointer?, count: Int) {
        stream.pointee.next_out = base?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(count)
    }

    /// Output space zlib has not filled yet.
    package var availableOutput: Int { Int(stream.pointee.avail_out) }

    // MARK: - Steps

    /// One `deflate` call; `finish` asks zlib to flush everything and end the stream.
    package func deflateStep(finish: Bool) throws(CompressionError) -> Int32 {
        // Z_BUF_ERROR only means "no progress possible this call" (output full or nothing to do): not fatal.
        try check(deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH), operation: "deflate", accepted: [Z_OK, Z_STREAM_END, Z_BUF_ERROR])
    }

    /// One `inflate` call.
    package func inflateStep() throws(CompressionError) -> Int32 {
        try check(inflate(stream, Z_NO_FLUSH), operation: "inflate", accepted: [Z_OK, Z_STREAM_END, Z_BUF_ERROR])
    }
}

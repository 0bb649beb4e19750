import Foundation

// MARK: - Checking the bytes before XMLParser

extension ModelXMLReader {
    /// Throws `ModelError.malformedXML` at the first byte that is not UTF-8, for a document in UTF-8.
    ///
    /// Foundation's `XMLParser` on Linux hands libxml2's name bytes to Swift strings unchecked, and an invalid
    /// UTF-8 byte in an element name, an attribute name or a processing instruction traps the process
    /// (SIGILL). Model files are UTF-8; a document that declares another encoding, or starts with a UTF-16
    /// byte-order mark, is transcoded by libxml2 itself and is not checked here.
    static func checkEncoding(_ data: Data, source: String) throws {
        let bytes = [UInt8](data)
        if bytes.count >= 2, (bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE) { return }
        if let declared = declaredEncoding(bytes), !["utf-8", "utf8"].contains(declared.lowercased()) { return }
        guard let bad = firstInvalidUTF8(bytes) else { return }
        var line = 1, column = 1
        for byte in bytes[..<bad] {
            if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        throw ModelError.malformedXML(
            file: source, line: line, column: column,
            reason: "invalid UTF-8 byte 0x\(String(bytes[bad], radix: 16, uppercase: true)) at offset \(bad)")
    }

    /// The `encoding` of a leading `<?xml ...?>` declaration, if there is one.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        let prefix = Array("<?xml".utf8)
        guard bytes.starts(with: prefix), let end = bytes.prefix(200).firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let declaration = String(decoding: bytes[..<end], as: UTF8.self)
        guard let range = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// The offset of the first byte that does not start or continue a well-formed UTF-8 sequence (no
    /// overlong forms, no surrogates, nothing above U+10FFFF); nil if all of `bytes` is UTF-8.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard i + length <= n else { return i }
            guard bytes[i + 1] >= low, bytes[i + 1] <= high else { return i }
            for k in 2..<max(2, length) where bytes[i + k] & 0xC0 != 0x80 { return i }
            i += length
        }
        return nil
    }
}

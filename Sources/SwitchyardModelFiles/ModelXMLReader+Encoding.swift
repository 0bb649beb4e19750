import Foundation
import SwitchyardModel

// MARK: - Checking the bytes before XMLParser

extension ModelXMLReader {
    /// Throws `ModelError.malformedXML` at the first byte that is not UTF-8, for a document in UTF-8.
    ///
    /// Foundation's `XMLParser` on Linux hands libxml2's name bytes to Swift strings unchecked, and an invalid
    /// UTF-8 byte in an element name, an attribute name or a processing instruction traps the process
    /// (SIGILL). Model files are UTF-8; a document that declares ISO-8859-1, or starts with a UTF-16
    /// byte-order mark, is transcoded by libxml2 itself and is not checked here.
    package static func checkEncoding(_ data: Data, source: String) throws {
        let bytes = [UInt8](data)
        try checkProcessingInstructions(bytes, source: source)
        if bytes.count >= 2, (bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE) { return }
        // Latin-1 is the one declared encoding whose every byte libxml2 turns into valid UTF-8 by itself; any
        // other declaration (a misspelled "UTF-8" included: found by fuzzing) gets the check.
        if let declared = declaredEncoding(bytes), latin1Names.contains(declared.lowercased()) { return }
        guard let bad = firstInvalidUTF8(bytes) else { return }
        var line = 1, column = 1
        for byte in bytes[..<bad] {
            if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        throw ModelError.malformedXML(
            file: source, line: line, column: column,
            reason: "invalid UTF-8 byte 0x\(String(bytes[bad], radix: 16, uppercase: true)) at offset \(bad)")
    }

    /// Throws `ModelError.malformedXML` for a processing instruction other than a leading `<?xml …?>`
    /// declaration. Model files have none, and FoundationXML on Linux dereferences the NULL that libxml2 passes
    /// for one without data (`<?x?>`: SIGSEGV, found by fuzzing). A `<?` inside a comment or CDATA section is
    /// refused too.
    package static func checkProcessingInstructions(_ bytes: [UInt8], source: String) throws {
        let open: [UInt8] = [UInt8(ascii: "<"), UInt8(ascii: "?")]
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }   // UTF-8 byte-order mark
        let declaration = Array("<?xml".utf8)
        if bytes[start...].starts(with: declaration), bytes.count > start + 5,
            [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[start + 5])
        {
            start += 5
        }
        var i = start
        var line = 1, column = 1
        for (offset, byte) in bytes.enumerated() where offset < start {
            if byte == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        while i + 1 < bytes.count {
            if bytes[i] == open[0], bytes[i + 1] == open[1] {
                throw ModelError.malformedXML(
                    file: source, line: line, column: column,
                    reason: "a processing instruction at offset \(i); model files hold none besides the <?xml?> declaration")
            }
            if bytes[i] == 0x0A { line += 1; column = 1 } else if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
    }

    /// Spellings of ISO-8859-1 libxml2 knows.
    package static let latin1Names: Set<String> = ["iso-8859-1", "iso_8859-1", "latin1", "latin-1", "iso-latin-1", "l1"]

    /// The `encoding` of a leading `<?xml ...?>` declaration, if there is one.
    package static func declaredEncoding(_ bytes: [UInt8]) -> String? {
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
    package static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
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

// MARK: - XMLOutput

/// A small indenting XML builder for the model writer; it escapes every attribute value, so callers pass raw text.
package struct XMLOutput {
    package private(set) var text = ""
    private var depth = 0

    /// Appends a raw line at the current depth.
    package mutating func line(_ raw: String) {
        text += String(repeating: "    ", count: depth) + raw + "\n"
    }

    /// `<name a="v">`; attributes whose value is nil are left out.
    package mutating func open(_ name: String, _ attributes: [(String, String?)]) {
        line("<\(name)\(Self.render(attributes))>")
        depth += 1
    }

    /// `</name>`.
    package mutating func close(_ name: String) {
        depth -= 1
        line("</\(name)>")
    }

    /// `<name a="v"/>`.
    package mutating func empty(_ name: String, _ attributes: [(String, String?)]) {
        line("<\(name)\(Self.render(attributes))/>")
    }

    private static func render(_ attributes: [(String, String?)]) -> String {
        attributes.compactMap { key, value in value.map { " \(key)=\"\(escape($0))\"" } }.joined()
    }

    /// Escapes text for a double-quoted attribute value.
    ///
    /// Tab, newline and carriage return become character references because a parser would otherwise
    /// normalise them to spaces; other C0 controls cannot appear in XML 1.0 at all, even as references, so
    /// they become U+FFFD rather than producing a file no parser accepts.
    package static func escape(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t": result += "&#9;"
            case "\n": result += "&#10;"
            case "\r": result += "&#13;"
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

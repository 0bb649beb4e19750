// MARK: - Tokens

/// One lexical token of the format language, with the 0-based character offset where it starts (what a
/// `QueryError.syntax` reports).
package struct PredicateToken: Equatable {
    package var kind: Kind
    package var position: Int
    /// The unicode-scalar offset just past the token (the lexer's own cursor).
    package var scalarEnd: Int
    /// The source text of the token, for messages and for keywords used as key path components after a dot.
    package var text: String

    package enum Kind: Equatable {
        /// A word that is not a reserved word, or any word escaped with `#`.
        case identifier(String)
        /// A reserved word (upper-cased); see `PredicateKeyword`.
        case keyword(PredicateKeyword)
        /// A number literal's text, sign excluded; converted by the parser (which knows about a leading `-`).
        case number(String)
        /// A quoted string with escapes resolved.
        case string(String)
        /// `$NAME`.
        case variable(String)
        /// `%@`, `%K`, `%d`, … (the letters after `%`).
        case argument(PredicateFormatSpecifier)
        /// `@count` and other collection operators (name without `@`).
        case collectionOperator(String)
        case symbol(PredicateSymbol)
        case end
    }
}

/// Reserved words. NSPredicate reserves more than the parser implements; the unimplemented ones are reserved
/// too so they give a clear "not supported" error instead of being read as key paths.
package enum PredicateKeyword: String, CaseIterable {
    case and = "AND", or = "OR", not = "NOT"
    case between = "BETWEEN", `in` = "IN", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case contains = "CONTAINS", like = "LIKE", matches = "MATCHES"
    case any = "ANY", some = "SOME", all = "ALL", none = "NONE"
    case `nil` = "NIL", null = "NULL", `true` = "TRUE", yes = "YES", `false` = "FALSE", no = "NO"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case `self` = "SELF", cast = "CAST"
    case first = "FIRST", last = "LAST", size = "SIZE", subquery = "SUBQUERY", function = "FUNCTION"
    case anyKey = "ANYKEY", fetch = "FETCH"

    /// Reserved words by upper-cased spelling, for the case-insensitive lookup.
    package static let byName: [String: PredicateKeyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })
}

/// Punctuation and operator symbols.
package enum PredicateSymbol: String, CaseIterable {
    case openParen = "(", closeParen = ")", openBrace = "{", closeBrace = "}"
    case openBracket = "[", closeBracket = "]", comma = ",", dot = "."
    case equal = "==", assign = "=", notEqual = "!=", notEqualAlt = "<>"
    case less = "<", lessOrEqual = "<=", lessOrEqualAlt = "=<"
    case greater = ">", greaterOrEqual = ">=", greaterOrEqualAlt = "=>"
    case andAnd = "&&", orOr = "||", bang = "!", minus = "-", plus = "+"

    /// Longest first, so `==` wins over `=` and `<=` over `<`.
    package static let byLength: [PredicateSymbol] = allCases.sorted { $0.rawValue.count > $1.rawValue.count }
}

/// The `%` conversions the format language accepts.
package enum PredicateFormatSpecifier: Equatable {
    /// `%@`: any value, or a list.
    case object
    /// `%K`: a key path.
    case keyPath
    /// `%d %i %ld %lld %li %lli %u %lu %llu`: an integer.
    case integer
    /// `%f %lf %g %e`: a floating-point number.
    case double
}

// MARK: - Lexer

/// Splits a format string into tokens.
///
/// It scans unicode scalars, so a string literal keeps its exact scalars (a combining mark after a quote
/// would otherwise merge with the quote into one `Character`), but it reports positions in `Character`s,
/// which is what a person counts.
package struct PredicateLexer {
    package let characters: [Unicode.Scalar]
    /// `positions[i]` is the index of the `Character` holding scalar `i`; one extra entry for the end.
    package let positions: [Int]
    package let format: String

    package init(_ format: String) {
        self.format = format
        var scalars: [Unicode.Scalar] = []
        var positions: [Int] = []
        for (index, character) in format.enumerated() {
            for scalar in character.unicodeScalars {
                scalars.append(scalar)
                positions.append(index)
            }
        }
        positions.append(format.count)
        self.characters = scalars
        self.positions = positions
    }

    /// All tokens, ending with `.end` at position `characters.count`.
    package func tokenize() throws(QueryError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        var i = 0
        while true {
            while i < characters.count, Self.isWhitespace(characters[i]) { i += 1 }
            guard i < characters.count else {
                tokens.append(PredicateToken(kind: .end, position: positions[i], scalarEnd: i, text: ""))
                return tokens
            }
            let token = try next(at: i)
            tokens.append(token)
            i = max(i + 1, token.scalarEnd)
        }
    }

    private func error(_ position: Int, _ reason: String) -> QueryError {
        .syntax(format: format, position: positions[min(position, positions.count - 1)], reason: reason)
    }

    private func char(_ i: Int) -> Unicode.Scalar? { i < characters.count ? characters[i] : nil }

    /// The scalars of `range` as a string, encoded straight into the string's UTF-8 storage (appending them to
    /// `unicodeScalars` one by one was half of parsing `name == %@` in callgrind).
    private func text(_ range: Range<Int>) -> String {
        let scalars = characters[range]
        let count = scalars.reduce(0) { $0 + UTF8.width($1) }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var written = 0
            for scalar in scalars {
                UTF8.encode(scalar) { unit in
                    buffer[written] = unit
                    written += 1
                }
            }
            return written
        }
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }

    // ASCII is answered without Unicode's property tables (a lookup per scalar was most of tokenizing); the
    // answers are the tables' own for ASCII.

    private static func isWhitespace(_ c: Unicode.Scalar) -> Bool {
        c.isASCII ? c == " " || ("\t"..."\r").contains(c) : c.properties.isWhitespace
    }

    private static func isLetter(_ c: Unicode.Scalar) -> Bool {
        c.isASCII ? ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "_" : c.properties.isAlphabetic
    }

    private static func isWordPart(_ c: Unicode.Scalar) -> Bool {
        if c.isASCII { return isLetter(c) || isDigit(c) }
        return isLetter(c) || c.properties.numericType != nil || c.properties.generalCategory == .nonspacingMark
    }

    private func token(_ kind: PredicateToken.Kind, _ range: Range<Int>) -> PredicateToken {
        PredicateToken(kind: kind, position: positions[range.lowerBound], scalarEnd: range.upperBound, text: text(range))
    }

    /// The token starting at `start` (not whitespace).
    private func next(at start: Int) throws(QueryError) -> PredicateToken {
        let c = characters[start]
        if c == "\"" || c == "'" { return try string(at: start, quote: c) }
        if Self.isDigit(c) { return try number(at: start) }
        if Self.isLetter(c) {
            let end = wordEnd(from: start)
            let word = text(start..<end)
            if let keyword = PredicateKeyword.byName[word.uppercased()] {
                return token(.keyword(keyword), start..<end)
            }
            return token(.identifier(word), start..<end)
        }
        switch c {
        case "#":
            // `#IN` is the key `IN`: NSPredicate's escape for reserved words.
            let end = wordEnd(from: start + 1)
            guard end > start + 1, isWordStart(characters[start + 1]) else {
                throw error(start, "expected a key name after '#'")
            }
            return token(.identifier(text(start + 1..<end)), start..<end)
        case "$":
            let end = wordEnd(from: start + 1)
            guard end > start + 1, isWordStart(characters[start + 1]) else {
                throw error(start, "expected a variable name after '$'")
            }
            return token(.variable(text(start + 1..<end)), start..<end)
        case "@":
            let end = wordEnd(from: start + 1)
            guard end > start + 1, isWordStart(characters[start + 1]) else {
                throw error(start, "expected a collection operator such as @count after '@'")
            }
            return token(.collectionOperator(text(start + 1..<end)), start..<end)
        case "%":
            return try specifier(at: start)
        default:
            for symbol in PredicateSymbol.byLength where matches(symbol.rawValue, at: start) {
                return token(.symbol(symbol), start..<start + symbol.rawValue.count)
            }
            throw error(start, "unexpected character '\(c)'")
        }
    }

    private func isWordStart(_ c: Unicode.Scalar) -> Bool { Self.isLetter(c) }

    private func wordEnd(from start: Int) -> Int {
        var i = start
        while i < characters.count, Self.isWordPart(characters[i]) { i += 1 }
        return i
    }

    private func matches(_ s: String, at start: Int) -> Bool {
        var i = start
        for c in s.unicodeScalars {
            guard char(i) == c else { return false }
            i += 1
        }
        return true
    }

    // MARK: - Strings

    /// A quoted string. Escapes: `\n \t \r \0 \\ \" \'` and `\uXXXX`; any other escaped character stands for
    /// itself. An unterminated string is reported at its opening quote.
    private func string(at start: Int, quote: Unicode.Scalar) throws(QueryError) -> PredicateToken {
        var value = ""
        var i = start + 1
        while let c = char(i) {
            if c == quote {
                return token(.string(value), start..<i + 1)
            }
            if c == "\\" {
                guard let e = char(i + 1) else { break }
                switch e {
                case "n": value.unicodeScalars.append("\n")
                case "t": value.unicodeScalars.append("\t")
                case "r": value.unicodeScalars.append("\r")
                case "0": value.unicodeScalars.append("\0")
                case "u":
                    let hex = text(min(i + 2, characters.count)..<min(i + 6, characters.count))
                    guard hex.unicodeScalars.count == 4, hex.unicodeScalars.allSatisfy(\.properties.isASCIIHexDigit),
                        let code = UInt32(hex, radix: 16),
                        let scalar = Unicode.Scalar(code)
                    else { throw error(i, "invalid \\u escape: expected four hex digits of a Unicode scalar") }
                    value.unicodeScalars.append(scalar)
                    i += 4
                default: value.unicodeScalars.append(e)
                }
                i += 2
            } else {
                value.unicodeScalars.append(c)
                i += 1
            }
        }
        throw error(start, "unterminated string")
    }

    // MARK: - Numbers

    /// Decimal integers and floats (`12`, `1.5`, `1e-3`, `.5` is not accepted) and `0x`/`0o`/`0b` integers.
    /// A number running into letters (`12ab`) is an error rather than two tokens.
    private func number(at start: Int) throws(QueryError) -> PredicateToken {
        var i = start
        if characters[start] == "0", let p = char(start + 1), "xXoObB".unicodeScalars.contains(p) {
            i = start + 2
            while let c = char(i), c.properties.isASCIIHexDigit { i += 1 }
            guard i > start + 2 else { throw error(start, "expected digits after '\(text(start..<start + 2))'") }
        } else {
            while let c = char(i), Self.isDigit(c) { i += 1 }
            if char(i) == ".", let d = char(i + 1), Self.isDigit(d) {
                i += 1
                while let c = char(i), Self.isDigit(c) { i += 1 }
            }
            if let e = char(i), e == "e" || e == "E" {
                var j = i + 1
                if let s = char(j), s == "+" || s == "-" { j += 1 }
                if let d = char(j), Self.isDigit(d) {
                    i = j
                    while let c = char(i), Self.isDigit(c) { i += 1 }
                }
            }
        }
        if let c = char(i), Self.isWordPart(c) {
            throw error(start, "invalid number '\(text(start..<wordEnd(from: i)))'")
        }
        return token(.number(text(start..<i)), start..<i)
    }

    // MARK: - Format specifiers

    /// `%@ %K %d %i %u %f %g %e` with `l`/`ll`/`h` length modifiers, and `%%` is not a value (rejected).
    private func specifier(at start: Int) throws(QueryError) -> PredicateToken {
        var i = start + 1
        while let c = char(i), c == "l" || c == "h" || c == "q" { i += 1 }
        guard let conversion = char(i), i - start <= 3 else {
            throw error(start, "incomplete format specifier")
        }
        let kind: PredicateFormatSpecifier
        switch conversion {
        case "@" where i == start + 1: kind = .object
        case "K" where i == start + 1: kind = .keyPath
        case "d", "i", "u": kind = .integer
        case "f", "g", "e": kind = .double
        default:
            throw error(start, "unknown format specifier '\(text(start..<i + 1))'")
        }
        return token(.argument(kind), start..<i + 1)
    }
}

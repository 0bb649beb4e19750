import Foundation
import Switchyard
import Testing

/// Which characters of a format string separate tokens and which make up a key, as `NSPredicate` reads them:
/// Unicode's whitespace separates (tab, line feed, vertical tab, form feed, carriage return, space, and beyond
/// ASCII the no-break space and the like); letters, digits and `_` make up a key, in any script; any other
/// control character is a syntax error. Checked for every ASCII character, since the parser answers ASCII
/// without Unicode's tables.
@Suite struct PredicateFormatCharacterTests {
    @Test func everyASCIICharacterSeparatesOrJoinsAsUnicodeSays() throws {
        let reference = try FetchPredicate(format: "a == 1")
        for value in UInt8(0)..<128 {
            let scalar = Unicode.Scalar(value)
            let character = String(Character(scalar))
            if scalar.properties.isWhitespace {
                #expect(try FetchPredicate(format: "a\(character)==\(character)1") == reference, "U+\(String(value, radix: 16)) should separate")
            } else if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" {
                // Inside a key it is part of the key.
                let joined = try FetchPredicate(format: "a\(character)b == 1")
                #expect(joined == (try FetchPredicate(format: "%K == 1", "a\(character)b")), "U+\(String(value, radix: 16)) should join a key")
            } else if value < 32 || value == 127 {
                #expect(throws: QueryError.self, "U+\(String(value, radix: 16)) is no token") { try FetchPredicate(format: "a\(character)== 1") }
            }
        }
        // Beyond ASCII the tables answer: a no-break space separates, a letter of another script joins.
        #expect(try FetchPredicate(format: "a\u{A0}==\u{2003}1") == reference)
        #expect(try FetchPredicate(format: "né == 1") == (try FetchPredicate(format: "%K == 1", "né")))
    }
}

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

    /// Literals and keys of three- and four-byte UTF-8 characters read as written (the lexer encodes token text
    /// itself), and match the stored value on every store.
    @Test(arguments: Backend.everyStore)
    func multiByteLiteralsAndKeysReadAsWritten(_ backend: Backend) throws {
        for text in ["€", "日本語", "🎉", "a𝄞b", "é日🎉x"] {
            #expect(try FetchPredicate(format: "name == '\(text)'") == (try FetchPredicate(format: "name == %@", text)), "\(text)")
            #expect(try FetchPredicate(format: "name == \"\(text)\"") == (try FetchPredicate(format: "name == %@", text)), "\(text)")
        }
        #expect(try FetchPredicate(format: "名前 == 1") == (try FetchPredicate(format: "%K == 1", "名前")))
        #expect(try FetchPredicate(format: "𝑥 == 1") == (try FetchPredicate(format: "%K == 1", "𝑥")))

        let dir = try TempDir()
        let model = try ObjectModel(
            entities: [EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string, isIndexed: true)])],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Tag"])])
        let coordinator = try backend.coordinator(model, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for name in ["日本語", "日本", "🎉", "🎉🎉", "a𝄞b", "plain"] { try context.insert("Tag").set("name", name) }
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        func names(_ format: String) throws -> [String] {
            try fresh.fetch(FetchRequest(entityName: "Tag", predicate: FetchPredicate(format: format), sortKeys: [SortKey("name")]))
                .map { try $0.get("name", as: String.self)! }
        }
        #expect(try names("name == '日本語'") == ["日本語"])
        #expect(try names("name == '🎉'") == ["🎉"])
        #expect(try names("name BEGINSWITH '🎉'") == ["🎉", "🎉🎉"])
        #expect(try names("name == \"a𝄞b\"") == ["a𝄞b"])
        #expect(try names("name IN {'日本', 'plain', '𝄞'}") == ["plain", "日本"])
    }
}

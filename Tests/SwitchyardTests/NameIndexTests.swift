import Foundation
import Testing
@testable import Switchyard

/// `NameIndex` must answer every lookup exactly as the `[String: Int]` it is made from, including names that
/// are equal as Swift strings but not byte for byte.
@Suite struct NameIndexTests {
    /// Random names (ASCII, accented in both normal forms, a Kelvin sign), looked up by themselves, by
    /// canonically equivalent spellings and by names that are not there: the index agrees with the dictionary.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func answersAsTheDictionaryDoes(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let pieces = ["a", "Z", "name", "_", "é", "e\u{301}", "\u{212A}", "K", "ü", "u\u{308}", "日本", "x1", ""]
        func name() -> String { (0..<Int.random(in: 1...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        var positions: [String: Int] = [:]
        for _ in 0..<Int.random(in: 0...40, using: &random) { positions[name()] = positions.count }
        let index = NameIndex(positions)
        for key in positions.keys { #expect(index[name: key] == positions[key], "\(key)") }
        for _ in 0..<500 {
            let key = name()
            #expect(index[name: key] == positions[key], "\(key.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        // Equal as the positions are: one name at another position makes another index.
        if let (key, position) = positions.first {
            var moved = positions
            moved[key] = position + 1_000
            #expect(index != NameIndex(moved))
        }
    }

    @Test func equivalentSpellingsAreFound() {
        let index = NameIndex(["caf\u{E9}": 0, "\u{212A}elvin": 1, "plain": 2, "": 3])
        #expect(index[name: "cafe\u{301}"] == 0, "decomposed key, precomposed name")
        #expect(index[name: "Kelvin"] == 1, "ASCII key, a name with a Kelvin sign")
        #expect(index[name: "plain"] == 2)
        #expect(index[name: ""] == 3)
        #expect(index[name: "plai"] == nil)
        #expect(index[name: "Plain"] == nil)
        let ascii = NameIndex(["count": 0, "name": 1])
        #expect(ascii[name: "count"] == 0 && ascii[name: "name"] == 1 && ascii[name: "note"] == nil)
        #expect(NameIndex([:])[name: "x"] == nil)
    }

    /// The lookup by a string's in-memory words (a literal's small-string words) must agree with the lookup by
    /// bytes whatever the key's representation: small or not, a literal, a copy, storage grown and shrunk
    /// back, a name one byte off, and more names than the words' table keeps apart.
    @Test func everyRepresentationOfANameFindsIt() {
        var positions: [String: Int] = ["name": 0, "createdAt": 1, "aVeryLongAttributeName": 2, "caf\u{E9}": 3, "": 4]
        for i in 0..<200 { positions["generated\(i)"] = positions.count }
        // Long names built at run time: their words point to heap storage, which the index must keep alive.
        for i in 0..<50 { positions["generatedAttributeNumber\(i)"] = positions.count }
        let index = NameIndex(positions)
        // Strings of the same length with other contents, made and freed (their storage may take the
        // addresses of freed temporaries): none is found.
        for i in 0..<2_000 {
            let other = "generatedAttributeNumbe_\(i % 50)"
            #expect(index[name: other] == nil, "\(other)")
        }
        for (name, position) in positions {
            let rebuilt = String(decoding: Array(name.utf8), as: UTF8.self)
            var grown = name
            grown.reserveCapacity(64)
            grown += "tail"
            grown.removeLast(4)
            let fromSubstring = String(("<" + name + ">").dropFirst().dropLast())
            for key in [name, rebuilt, grown, fromSubstring] {
                #expect(index[name: key] == position, "\(name) as \(key.utf8.count) bytes")
            }
            #expect(index[name: name + "x"] == nil)
            if let last = name.utf8.last {
                let offByOne = String(decoding: Array(name.utf8.dropLast()) + [last == 0x61 ? 0x62 : 0x61], as: UTF8.self)
                #expect(index[name: offByOne] == positions[offByOne], "\(offByOne)")
            }
        }
        #expect(index[name: "name"] == 0 && index[name: "createdAt"] == 1 && index[name: "aVeryLongAttributeName"] == 2)
        #expect(index[name: "cafe\u{301}"] == 3, "decomposed key, precomposed name")
    }
}

import Foundation
import SwitchyardModelFiles

// MARK: - Decoding store metadata without Foundation's property list parser

extension PropertyListValue {
    /// Decodes a store's metadata property list (`Z_METADATA.Z_PLIST`, LMDB's `meta` entry) into a
    /// dictionary.
    ///
    /// A binary property list goes through the library's own bounds-checked `BinaryPropertyList`: on Linux,
    /// corelibs-foundation's `PropertyListSerialization` builds objects from a damaged file that crash the
    /// process when Swift bridges them (an NSSet-shaped object: SIGSEGV). An XML property list (which cannot
    /// hold those objects) still goes through Foundation; anything else is refused. Values a store's metadata cannot hold (sets,
    /// archive UIDs, null, dictionaries with non-string keys) are left out, as before; a member left out of an
    /// array or dictionary leaves that whole container out.
    ///
    /// Throws `KeyedArchiveError` for a malformed binary plist, Foundation's error for a malformed other plist,
    /// and returns nil when the top object is not a dictionary.
    package static func decodeMetadataDictionary(_ data: Data, source: String) throws -> [String: PropertyListValue]? {
        // Anything that calls itself binary ("bplist01" too, which Foundation would still parse) goes to the
        // bounds-checked reader; only an XML property list, which has no set type, goes to Foundation.
        if data.starts(with: Data("bplist".utf8)) == false {
            guard Self.looksLikeXMLPropertyList(data) else {
                throw KeyedArchiveError.malformedPropertyList(
                    source: source, offset: 0, reason: "neither a binary (bplist00) nor an XML property list")
            }
            let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            guard let foundation = object as? [String: Any] else { return nil }
            var dictionary: [String: PropertyListValue] = [:]
            for (key, value) in foundation {
                if let value = PropertyListValue(foundation: value) { dictionary[key] = value }
            }
            return dictionary
        }
        let plist = try BinaryPropertyList(data, source: source)
        guard case .dictionary(let keys, let values) = plist.objects[plist.topIndex] else { return nil }
        var dictionary: [String: PropertyListValue] = [:]
        for (key, value) in zip(keys, values) {
            guard case .string(let name) = plist.objects[key] else { continue }
            if let converted = convert(value, in: plist, depth: 0) { dictionary[name] = converted }
        }
        return dictionary
    }

    /// Whether `data` starts (after whitespace and a byte-order mark) with `<?xml` or `<plist`.
    package static func looksLikeXMLPropertyList(_ data: Data) -> Bool {
        var bytes = data.prefix(256)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes, as: UTF8.self).drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return text.hasPrefix("<?xml") || text.hasPrefix("<plist") || text.hasPrefix("<!DOCTYPE plist")
    }

    /// Containers nest at most this deep (a self-referencing container would otherwise recurse forever).
    private static let maximumDepth = 64

    private static func convert(_ index: Int, in plist: BinaryPropertyList, depth: Int) -> PropertyListValue? {
        guard depth < maximumDepth, plist.objects.indices.contains(index) else { return nil }
        switch plist.objects[index] {
        case .null, .uid, .set: return nil
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .date(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .data(let d): return .data(d)
        case .string(let s): return .string(s)
        case .array(let members):
            var items: [PropertyListValue] = []
            for member in members {
                guard let item = convert(member, in: plist, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(items)
        case .dictionary(let keys, let values):
            var items: [String: PropertyListValue] = [:]
            for (key, value) in zip(keys, values) {
                guard case .string(let name) = plist.objects[key], let item = convert(value, in: plist, depth: depth + 1)
                else { return nil }
                items[name] = item
            }
            return .dictionary(items)
        }
    }
}

import Foundation

// MARK: - KeyedArchive

/// Reads an NSKeyedArchiver archive (a `bplist00` property list with `$archiver`, `$top` and `$objects`)
/// without knowing its classes in advance, as Core Data's model cache needs on Linux.
///
/// Values of the Foundation classes below are decoded into `ArchiveValue`s; an object of any other class, known
/// or not (`NSEntityDescription`, an app's `MyApp.Cover`), comes back as `.object(uid:className:)` and its fields
/// are read with `object(_:)`. Unknown classes are therefore never an error. Object graphs may be cyclic
/// (an entity points at its model, which points at the entity), which is why objects are not expanded inline.
///
/// Decoded classes: NSArray / NSMutableArray / NSOrderedSet (`NS.objects`), NSSet / NSMutableSet, NSDictionary /
/// NSMutableDictionary (`NS.keys` + `NS.objects`), `NSKnownKeysDictionary1` (keys from its `searchMapping`,
/// values from `values`), NSString / NSMutableString (`NS.string`), NSData / NSMutableData (`NS.data`), NSUUID
/// (`NS.uuidbytes`), NSDate (`NS.time`), NSNull; NSNumber is a plain plist number.
///
/// ```swift
/// let archive = try KeyedArchive(data, source: "Store.sqlite model cache")
/// guard case .object(let uid, _) = try archive.topValue() else { ... }
/// let model = try archive.object(uid)
/// print(model.className, model["NSEntities"] ?? .null)
/// ```
package struct KeyedArchive: Sendable {
    /// What errors name (for a model cache, the store file).
    package let source: String
    /// The `$archiver` value (`NSKeyedArchiver`).
    package let archiver: String
    /// Names of the `$top` entries (`root` for `archivedData(withRootObject:)`).
    package var topKeys: [String] { top.keys.sorted() }
    /// The number of entries in `$objects` (valid UIDs are 0..<objectCount; 0 is `$null`).
    package var objectCount: Int { table.count }

    private let plist: BinaryPropertyList
    /// `$objects`: UID -> index in `plist.objects`.
    private let table: [Int]
    /// `$top`: key -> plist index of its value (normally a UID).
    private let top: [String: Int]

    /// Nesting of collections inside collections beyond this is treated as hostile input.
    package static let maxDepth = 200
    /// One call decodes at most this many values: collections that share members can describe exponentially
    /// many values in a few bytes, so the expansion is bounded, not the input alone.
    package static let maxValuesPerCall = 100_000

    /// What one decoding call tracks: the collections being expanded (to catch one that contains itself) and
    /// how many more values it may produce.
    private struct DecodeState {
        var visiting = Set<Int>()
        var budget = KeyedArchive.maxValuesPerCall
    }

    /// Parses `data`; throws `KeyedArchiveError` for a malformed property list or a property list that is not
    /// a keyed archive.
    package init(_ data: Data, source: String) throws(KeyedArchiveError) {
        let plist = try BinaryPropertyList(data, source: source)
        self.source = source
        self.plist = plist
        let root = try Self.stringKeyed(plist.topIndex, in: plist, source: source, what: "the top-level object")
        guard let archiverIndex = root["$archiver"], case .string(let archiver) = plist.objects[archiverIndex],
            let objectsIndex = root["$objects"], case .array(let table) = plist.objects[objectsIndex],
            let topIndex = root["$top"]
        else {
            throw KeyedArchiveError.malformedArchive(
                source: source, reason: "the property list has no $archiver string, $objects array or $top "
                    + "dictionary: it is not an NSKeyedArchiver archive")
        }
        self.archiver = archiver
        self.table = table
        self.top = try Self.stringKeyed(topIndex, in: plist, source: source, what: "$top")
    }

    // MARK: - Entry points

    /// The decoded `$top` entry `key` (by default `root`, the archived root object).
    package func topValue(_ key: String = "root") throws(KeyedArchiveError) -> ArchiveValue {
        guard let index = top[key] else {
            throw malformed("$top has no entry '\(key)' (it has: \(topKeys.joined(separator: ", ")))")
        }
        var state = DecodeState()
        return try decode(plistIndex: index, depth: 0, state: &state)
    }

    /// The object with this UID: its class and its fields, decoded (collections expanded, other objects as
    /// references).
    package func object(_ uid: Int) throws(KeyedArchiveError) -> ArchivedObject {
        var state = DecodeState()
        return try object(uid, depth: 0, state: &state)
    }

    /// The value stored under `uid` (UID 0 is nil).
    package func value(uid: Int) throws(KeyedArchiveError) -> ArchiveValue {
        var state = DecodeState()
        return try decode(uid: uid, depth: 0, state: &state)
    }

    // MARK: - Decoding

    private func malformed(_ reason: String) -> KeyedArchiveError {
        .malformedArchive(source: source, reason: reason)
    }

    /// Decodes a value as it appears inside an object or collection: a UID is followed, plist containers are
    /// decoded element by element.
    private func decode(plistIndex: Int, depth: Int, state: inout DecodeState) throws(KeyedArchiveError) -> ArchiveValue {
        guard depth < Self.maxDepth else { throw malformed("values nest deeper than \(Self.maxDepth) levels") }
        state.budget -= 1
        guard state.budget >= 0 else {
            throw malformed("the archive expands to more than \(Self.maxValuesPerCall) values in one object")
        }
        switch plist.objects[plistIndex] {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .date(let t): return .date(Date(timeIntervalSinceReferenceDate: t))
        case .data(let d): return .data(d)
        case .string(let s): return .string(s)
        case .uid(let uid):
            guard uid < UInt64(table.count) else { throw malformed("UID \(uid) points past the \(table.count) objects") }
            return try decode(uid: Int(uid), depth: depth + 1, state: &state)
        case .array(let items):
            var result: [ArchiveValue] = []
            for item in items { result.append(try decode(plistIndex: item, depth: depth + 1, state: &state)) }
            return .array(result)
        case .set(let items):
            var result: [ArchiveValue] = []
            for item in items { result.append(try decode(plistIndex: item, depth: depth + 1, state: &state)) }
            return .set(result)
        case .dictionary(let keys, let values):
            var entries: [ArchiveValue.DictionaryEntry] = []
            for (k, v) in zip(keys, values) {
                entries.append(
                    .init(
                        key: try decode(plistIndex: k, depth: depth + 1, state: &state),
                        value: try decode(plistIndex: v, depth: depth + 1, state: &state)))
            }
            return .dictionary(entries)
        }
    }

    /// Decodes the object with this UID: Foundation value classes become values, everything else a reference.
    private func decode(uid: Int, depth: Int, state: inout DecodeState) throws(KeyedArchiveError) -> ArchiveValue {
        // NSKeyedArchiver always writes "$null" at UID 0 and encodes nil as a reference to it.
        if uid == 0 { return .null }
        guard uid < table.count else { throw malformed("UID \(uid) points past the \(table.count) objects") }
        let index = table[uid]
        guard case .dictionary = plist.objects[index] else {
            // Strings and numbers are stored as themselves.
            return try decode(plistIndex: index, depth: depth, state: &state)
        }
        let fields = try rawFields(uid)
        guard fields["$class"] != nil else {
            return try decode(plistIndex: index, depth: depth, state: &state)
        }
        let (className, hierarchy) = try classInfo(of: uid, fields: fields)
        guard let kind = hierarchy.lazy.compactMap({ ValueClass(rawValue: $0) }).first else {
            return .object(uid: uid, className: className)
        }
        // A collection that (through UIDs) contains itself would expand forever.
        guard state.visiting.insert(uid).inserted else {
            throw malformed("the \(className) with UID \(uid) contains itself")
        }
        defer { state.visiting.remove(uid) }
        return try decodeValue(kind, uid: uid, className: className, fields: fields, depth: depth, state: &state)
    }

    /// The Foundation classes decoded into values, by the name in `$classes`.
    private enum ValueClass: String {
        case knownKeysDictionary = "NSKnownKeysDictionary1"
        case dictionary = "NSDictionary"
        case array = "NSArray"
        case orderedSet = "NSOrderedSet"
        case set = "NSSet"
        case string = "NSString"
        case data = "NSData"
        case uuid = "NSUUID"
        case date = "NSDate"
        case null = "NSNull"
    }

    private func decodeValue(
        _ kind: ValueClass, uid: Int, className: String, fields: [String: Int], depth: Int, state: inout DecodeState
    ) throws(KeyedArchiveError) -> ArchiveValue {
        func field(_ key: String) throws(KeyedArchiveError) -> ArchiveValue {
            guard let index = fields[key] else { throw malformed("the \(className) with UID \(uid) has no \(key)") }
            return try decode(plistIndex: index, depth: depth + 1, state: &state)
        }
        func list(_ key: String) throws(KeyedArchiveError) -> [ArchiveValue] {
            // An empty collection may leave the key out.
            guard fields[key] != nil else { return [] }
            guard let items = try field(key).elements else {
                throw malformed("the \(className) with UID \(uid) has a \(key) that is not an array")
            }
            return items
        }
        switch kind {
        case .knownKeysDictionary:
            // Core Data's NSKnownKeysDictionary1 shares its keys: they live in the `searchMapping` object
            // (an NSKnownKeysMappingStrategy1 with a `keys` array); `values` holds the values in the same order.
            guard let mappingIndex = fields["searchMapping"] else {
                return try decodeValue(.dictionary, uid: uid, className: className, fields: fields, depth: depth, state: &state)
            }
            guard case .object(let mappingUID, _) = try decode(plistIndex: mappingIndex, depth: depth + 1, state: &state) else {
                throw malformed("the \(className) with UID \(uid) has a searchMapping that is not an object")
            }
            let mapping = try object(mappingUID, depth: depth + 1, state: &state)
            guard let keys = mapping["keys"]?.elements else {
                throw malformed("the search mapping (UID \(mappingUID)) of the \(className) with UID \(uid) has no keys array")
            }
            let values = try list("values")
            guard keys.count == values.count else {
                throw malformed("the \(className) with UID \(uid) has \(keys.count) keys but \(values.count) values")
            }
            // A slot holding the empty token has no value.
            let empty = fields["emptyToken"] != nil ? try field("emptyToken") : nil
            return .dictionary(zip(keys, values).filter { $0.1 != empty }.map { .init(key: $0.0, value: $0.1) })
        case .dictionary:
            let keys = try list("NS.keys")
            let values = try list("NS.objects")
            guard keys.count == values.count else {
                throw malformed("the \(className) with UID \(uid) has \(keys.count) keys but \(values.count) objects")
            }
            return .dictionary(zip(keys, values).map { .init(key: $0.0, value: $0.1) })
        case .array, .orderedSet:
            return .array(try list("NS.objects"))
        case .set:
            return .set(try list("NS.objects"))
        case .string:
            let value = try field("NS.string")
            if case .data(let bytes) = value { return .string(String(decoding: bytes, as: UTF8.self)) }
            guard case .string = value else { throw malformed("the \(className) with UID \(uid) has a non-string NS.string") }
            return value
        case .data:
            // Plain NSData is written as a plist data object; the class form carries NS.data.
            guard case .data(let bytes) = try field("NS.data") else {
                throw malformed("the \(className) with UID \(uid) has a non-data NS.data")
            }
            return .data(bytes)
        case .uuid:
            guard case .data(let bytes) = try field("NS.uuidbytes"), let uuid = UUID(bytes: bytes) else {
                throw malformed("the \(className) with UID \(uid) has no 16-byte NS.uuidbytes")
            }
            return .uuid(uuid)
        case .date:
            let time = try field("NS.time")
            guard case .real(let seconds) = time else {
                guard let whole = time.integerValue else {
                    throw malformed("the \(className) with UID \(uid) has a non-numeric NS.time")
                }
                return .date(Date(timeIntervalSinceReferenceDate: Double(whole)))
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .null:
            return .null
        }
    }

    // MARK: - Object records

    /// `object(_:)` inside a decode already under way, so nesting and self-containment stay bounded.
    private func object(_ uid: Int, depth: Int, state: inout DecodeState) throws(KeyedArchiveError) -> ArchivedObject {
        let fields = try rawFields(uid)
        let (className, hierarchy) = try classInfo(of: uid, fields: fields)
        var decoded: [String: ArchiveValue] = [:]
        for (key, index) in fields where key != "$class" {
            decoded[key] = try decode(plistIndex: index, depth: depth + 1, state: &state)
        }
        return ArchivedObject(uid: uid, className: className, classHierarchy: hierarchy, fields: decoded)
    }

    /// The raw fields of the object with this UID (key -> plist index).
    private func rawFields(_ uid: Int) throws(KeyedArchiveError) -> [String: Int] {
        guard uid > 0, uid < table.count else { throw malformed("UID \(uid) is not an object (the archive has \(table.count))") }
        guard case .dictionary = plist.objects[table[uid]] else {
            throw malformed("UID \(uid) is a plain value, not an object with fields")
        }
        return try Self.stringKeyed(table[uid], in: plist, source: source, what: "the object with UID \(uid)")
    }

    /// The class name and hierarchy (most specific first) that an object's `$class` record gives.
    private func classInfo(of uid: Int, fields: [String: Int]) throws(KeyedArchiveError) -> (String, [String]) {
        guard let classIndex = fields["$class"], case .uid(let classUID) = plist.objects[classIndex],
            classUID > 0, classUID < UInt64(table.count)
        else {
            throw malformed("the object with UID \(uid) has no valid $class reference")
        }
        let record = try Self.stringKeyed(table[Int(classUID)], in: plist, source: source, what: "class record \(classUID)")
        guard let nameIndex = record["$classname"], case .string(let name) = plist.objects[nameIndex] else {
            throw malformed("the class record with UID \(classUID) (of UID \(uid)) has no $classname string")
        }
        var hierarchy: [String] = []
        if let classesIndex = record["$classes"], case .array(let items) = plist.objects[classesIndex] {
            for item in items { if case .string(let s) = plist.objects[item] { hierarchy.append(s) } }
        }
        if hierarchy.first != name { hierarchy.insert(name, at: 0) }
        return (name, hierarchy)
    }

    /// A plist dictionary whose keys are all strings, as key -> plist index of the value.
    private static func stringKeyed(
        _ index: Int, in plist: BinaryPropertyList, source: String, what: String
    ) throws(KeyedArchiveError) -> [String: Int] {
        guard case .dictionary(let keys, let values) = plist.objects[index] else {
            throw KeyedArchiveError.malformedArchive(source: source, reason: "\(what) is not a dictionary")
        }
        var result: [String: Int] = [:]
        for (k, v) in zip(keys, values) {
            guard case .string(let key) = plist.objects[k] else {
                throw KeyedArchiveError.malformedArchive(source: source, reason: "\(what) has a key that is not a string")
            }
            result[key] = v
        }
        return result
    }
}

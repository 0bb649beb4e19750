import Foundation
import Testing
@testable import Switchyard

/// A class the reader has never heard of, archived under an app-style name.
final class ArchivedThing: NSObject, NSCoding {
    let name: String
    init(name: String) { self.name = name }
    func encode(with coder: NSCoder) { coder.encode(name as NSString, forKey: "name") }
    init?(coder: NSCoder) { name = (coder.decodeObject(forKey: "name") as? String) ?? "" }
}

/// The binary property list parser and the keyed-archive reader: Foundation's own archives, hand-built ones
/// with Core Data's structures, hostile ones, and the real model caches.
@Suite struct KeyedArchiveTests {
    // MARK: - Foundation's archives

    /// Archives `root` with Foundation's NSKeyedArchiver, which writes real UIDs (and names ArchivedThing
    /// `SwitchyardTests.ArchivedThing`, module-qualified like an app class in a Core Data model).
    private func archive(_ root: Any) throws -> KeyedArchive {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return try KeyedArchive(archiver.encodedData, source: "test archive")
    }

    @Test func readsFoundationValueClasses() throws {
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
        let root: NSDictionary = [
            "ascii": "plain" as NSString,
            "unicode": "héllo ✓ — a string long enough for an extended length" as NSString,
            "mutable": NSMutableString(string: "grows"),
            "int": NSNumber(value: 42), "negative": NSNumber(value: -7), "big": NSNumber(value: Int64.max),
            "double": NSNumber(value: 2.5), "flag": NSNumber(value: true),
            // Not 1: Foundation's writer folds an integer 1 into the `true` already archived for "flag".
            "array": NSArray(array: [NSNumber(value: 3), "two" as NSString, NSNull()]),
            "set": NSSet(array: ["only" as NSString]),
            "data": NSData(data: Data([0, 1, 2, 255])),
            "uuid": uuid as NSUUID, "date": date as NSDate,
            "nested": ["inner": NSArray(array: ["x" as NSString])] as NSDictionary,
        ]
        let archive = try archive(root)
        #expect(archive.archiver == "NSKeyedArchiver")
        #expect(archive.topKeys == ["root"])
        let value = try archive.topValue()
        #expect(value["ascii"] == .string("plain"))
        #expect(value["unicode"] == .string("héllo ✓ — a string long enough for an extended length"))
        #expect(value["mutable"] == .string("grows"))
        #expect(value["int"] == .integer(42))
        #expect(value["negative"] == .integer(-7))
        #expect(value["big"] == .integer(Int64.max))
        #expect(value["double"] == .real(2.5))
        #expect(value["flag"]?.boolValue == true)
        #expect(value["array"] == .array([.integer(3), .string("two"), .null]))
        #expect(value["set"] == .set([.string("only")]))
        #expect(value["data"] == .data(Data([0, 1, 2, 255])))
        #expect(value["uuid"] == .uuid(uuid))
        #expect(value["date"] == .date(date))
        #expect(value["nested"]?["inner"] == .array([.string("x")]))
    }

    @Test func unknownClassesAreOpaqueObjects() throws {
        let archive = try archive(NSArray(array: [ArchivedThing(name: "cover"), ArchivedThing(name: "back")]))
        let items = try #require(try archive.topValue().elements)
        #expect(items.count == 2)
        guard case .object(let uid, let className) = items[0] else {
            Issue.record("expected an object reference, got \(items[0])")
            return
        }
        #expect(className == "SwitchyardTests.ArchivedThing")
        let thing = try archive.object(uid)
        #expect(thing.className == "SwitchyardTests.ArchivedThing")
        #expect(thing["name"] == .string("cover"))
        #expect(thing.isKind(of: "SwitchyardTests.ArchivedThing"))
        #expect(!thing.isKind(of: "NSArray"))
    }

    @Test func sharedObjectsKeepOneUID() throws {
        let shared = ArchivedThing(name: "shared")
        let archive = try archive(NSArray(array: [shared, shared]))
        let items = try #require(try archive.topValue().elements)
        #expect(items[0] == items[1])
        #expect(items[0].objectUID != nil)
    }

    // MARK: - Plain binary property lists

    @Test func parsesEveryPrimitiveFoundationWrites() throws {
        let many = (0..<1000).map { NSNumber(value: $0) }
        let plist: NSDictionary = [
            "ints": [0, 1, 255, 256, 65535, 65536, 4_294_967_295, 4_294_967_296, -1, Int64.min, Int64.max]
                .map { NSNumber(value: $0) } as NSArray,
            "real": NSNumber(value: 0.1), "date": Date(timeIntervalSinceReferenceDate: -1) as NSDate,
            "utf16": "日本語のテキスト" as NSString, "long": String(repeating: "a", count: 300) as NSString,
            "many": many as NSArray, "empty": NSArray(),
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let parsed = try BinaryPropertyList(data, source: "plist")
        guard case .dictionary(let keys, let values) = parsed.objects[parsed.topIndex] else {
            Issue.record("top object is not a dictionary")
            return
        }
        var byKey: [String: BinaryPropertyList.Object] = [:]
        for (k, v) in zip(keys, values) {
            if case .string(let key) = parsed.objects[k] { byKey[key] = parsed.objects[v] }
        }
        func resolve(_ list: [Int]) -> [BinaryPropertyList.Object] { list.map { parsed.objects[$0] } }
        guard case .array(let ints)? = byKey["ints"], case .array(let manyRefs)? = byKey["many"] else {
            Issue.record("arrays missing")
            return
        }
        #expect(
            resolve(ints) == [0, 1, 255, 256, 65535, 65536, 4_294_967_295, 4_294_967_296, -1, Int64.min, Int64.max].map {
                .integer($0)
            })
        #expect(resolve(manyRefs) == (0..<1000).map { .integer(Int64($0)) })
        #expect(byKey["real"] == .real(0.1))
        #expect(byKey["date"] == .date(-1))
        #expect(byKey["utf16"] == .string("日本語のテキスト"))
        #expect(byKey["long"] == .string(String(repeating: "a", count: 300)))
        #expect(byKey["empty"] == .array([]))
    }

    // MARK: - Core Data's structures, hand-built

    /// An `NSKnownKeysDictionary1` as Core Data writes `NSEntities`: keys in the search mapping, values in
    /// `values`, a slot holding the empty token left out.
    @Test func knownKeysDictionaryTakesKeysFromItsSearchMapping() throws {
        let data = BinaryPlistBuilder.keyedArchive(rootUID: 1) { b in
            // $objects: 1 dict, 2 mapping, 3 keys array, 4 "A", 5 "B", 6 "C", 7 NSArray class, 8 mapping class,
            // 9 empty token, 10 values array, 11 "a-value", 12 dict class, 13 "c-value"
            let dict = b.add(.dictionary([
                (b.str("$class"), b.ref(12)), (b.str("searchMapping"), b.ref(2)), (b.str("values"), b.ref(10)), (b.str("emptyToken"), b.ref(9)),
            ]))
            let mapping = b.add(.dictionary([(b.str("$class"), b.ref(8)), (b.str("keys"), b.ref(3)), (b.str("length"), b.add(.integer(3)))]))
            let keys = b.add(.dictionary([(b.str("$class"), b.ref(7)), (b.str("NS.objects"), b.add(.array([b.ref(4), b.ref(5), b.ref(6)])))]))
            let a = b.str("A"), bb = b.str("B"), c = b.str("C")
            let arrayClass = b.add(.dictionary([(b.str("$classname"), b.str("NSArray")), (b.str("$classes"), b.add(.array([b.str("NSArray"), b.str("NSObject")])))]))
            let mappingClass = b.add(.dictionary([(b.str("$classname"), b.str("NSKnownKeysMappingStrategy1")), (b.str("$classes"), b.add(.array([b.str("NSKnownKeysMappingStrategy1"), b.str("NSObject")])))]))
            let token = b.str("__empty_slot_token__")
            let values = b.add(.dictionary([(b.str("$class"), b.ref(7)), (b.str("NS.objects"), b.add(.array([b.ref(11), b.ref(9), b.ref(13)])))]))
            let aValue = b.str("a-value")
            let dictClass = b.add(.dictionary([
                (b.str("$classname"), b.str("NSKnownKeysDictionary1")),
                (b.str("$classes"), b.add(.array([b.str("NSKnownKeysDictionary1"), b.str("NSMutableDictionary"), b.str("NSDictionary"), b.str("NSObject")]))),
            ]))
            let cValue = b.str("c-value")
            return [dict, mapping, keys, a, bb, c, arrayClass, mappingClass, token, values, aValue, dictClass, cValue]
        }
        let archive = try KeyedArchive(data, source: "known keys")
        let value = try archive.topValue()
        #expect(value.entries?.map(\.key) == [.string("A"), .string("C")])
        #expect(value["A"] == .string("a-value"))
        #expect(value["B"] == nil)
        #expect(value["C"] == .string("c-value"))
    }

    // MARK: - Hostile input

    /// `$objects[1]` is an NSArray whose `NS.objects` holds UID 1 itself.
    private func selfContainingArray() -> Data {
        BinaryPlistBuilder.keyedArchive(rootUID: 1) { b in
            let array = b.add(.dictionary([(b.str("$class"), b.add(.uid(2))), (b.str("NS.objects"), b.add(.array([b.add(.uid(1))])))]))
            let arrayClass = b.add(.dictionary([(b.str("$classname"), b.str("NSArray"))]))
            return [array, arrayClass]
        }
    }

    @Test func collectionContainingItselfThrows() throws {
        let archive = try KeyedArchive(selfContainingArray(), source: "cycle.plist")
        let error = #expect(throws: KeyedArchiveError.self) { try archive.topValue() }
        #expect(error?.description.contains("cycle.plist") == true)
        #expect(error?.description.contains("contains itself") == true)
    }

    @Test func deepNestingThrowsInsteadOfOverflowing() throws {
        let data = BinaryPlistBuilder.keyedArchive(rootUID: 1) { b in
            let classKey = b.add(.string("$class")), objectsKey = b.add(.string("NS.objects"))
            let classUID = b.add(.uid(1001))
            var archived: [Int] = []
            for level in 1...1000 {
                let child = b.add(.uid(UInt64(level + 1)))
                let list = level < 1000 ? b.add(.array([child])) : b.add(.array([]))
                archived.append(b.add(.dictionary([(classKey, classUID), (objectsKey, list)])))
            }
            archived.append(b.add(.dictionary([(b.add(.string("$classname")), b.add(.string("NSArray")))])))
            return archived
        }
        let archive = try KeyedArchive(data, source: "deep")
        let error = #expect(throws: KeyedArchiveError.self) { try archive.topValue() }
        #expect(error?.description.contains("deeper") == true)
    }

    /// Forty arrays, each holding the next one twice: a few hundred bytes that expand to 2^40 values.
    @Test func exponentialExpansionIsBounded() throws {
        var builder = KeyedArchiveBuilder()
        var next = builder.string("leaf")
        for _ in 0..<40 { next = builder.array([next, next]) }
        let archive = try KeyedArchive(builder.build(root: next), source: "diamonds")
        let error = #expect(throws: KeyedArchiveError.self) { try archive.topValue() }
        #expect(error?.description.contains("expands to more than") == true)
        // A shallow diamond is fine: sharing is legal, only the total is bounded.
        var small = KeyedArchiveBuilder()
        var item = small.string("leaf")
        for _ in 0..<4 { item = small.array([item, item]) }
        let value = try KeyedArchive(small.build(root: item), source: "small").topValue()
        #expect(value.elements?.count == 2)
    }

    @Test func danglingUIDThrows() throws {
        let data = BinaryPlistBuilder.keyedArchive(rootUID: 99) { _ in [] }
        let archive = try KeyedArchive(data, source: "dangling")
        #expect(throws: KeyedArchiveError.malformedArchive(source: "dangling", reason: "UID 99 points past the 1 objects")) {
            try archive.topValue()
        }
        #expect(throws: KeyedArchiveError.self) { try archive.object(0) }
        #expect(throws: KeyedArchiveError.self) { try archive.object(-1) }
    }

    @Test func propertyListThatIsNotAnArchiveThrows() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: ["a": 1] as NSDictionary, format: .binary, options: 0)
        let error = #expect(throws: KeyedArchiveError.self) { try KeyedArchive(data, source: "plain.plist") }
        guard case .malformedArchive(let source, let reason)? = error else {
            Issue.record("expected malformedArchive, got \(String(describing: error))")
            return
        }
        #expect(source == "plain.plist")
        #expect(reason.contains("not an NSKeyedArchiver archive"))
    }

    @Test(arguments: [
        ("empty", Data()), ("xml", Data("<?xml version=\"1.0\"?><plist/>".utf8)),
        ("short", Data("bplist00".utf8)), ("bplist01", Data("bplist01".utf8) + Data(repeating: 0, count: 40)),
        ("zero trailer", Data("bplist00".utf8) + Data(repeating: 0, count: 40)),
    ])
    func nonBinaryPropertyListsThrow(_ name: String, _ data: Data) {
        let error = #expect(throws: KeyedArchiveError.self) { try KeyedArchive(data, source: name) }
        guard case .malformedPropertyList(let source, _, _)? = error else {
            Issue.record("expected malformedPropertyList, got \(String(describing: error))")
            return
        }
        #expect(source == name)
    }

    @Test func badTrailerValuesThrow() throws {
        let good = try PropertyListSerialization.data(fromPropertyList: ["a": [1, 2]] as NSDictionary, format: .binary, options: 0)
        let trailer = good.count - 32
        // offset size, reference size, object count, top object, offset-table offset: each made impossible.
        let patches: [(Int, [UInt8])] = [
            (trailer + 6, [0]), (trailer + 6, [9]), (trailer + 7, [0]), (trailer + 7, [200]),
            (trailer + 8, [0, 0, 0, 0, 0, 0, 0, 0]), (trailer + 8, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (trailer + 16, [0, 0, 0, 0, 0, 0, 0x10, 0]), (trailer + 24, [0, 0, 0, 0, 0, 0, 0, 1]),
            (trailer + 24, [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ]
        for (offset, bytes) in patches {
            var bad = good
            bad.replaceSubrange(offset..<offset + bytes.count, with: bytes)
            #expect(throws: KeyedArchiveError.self, "patch at \(offset)") { try BinaryPropertyList(bad, source: "bad") }
        }
    }

    /// Walks everything an archive holds, as a model reader would: every UID as a value and as an object.
    private func walk(_ archive: KeyedArchive) {
        _ = try? archive.topValue()
        for uid in 0..<archive.objectCount {
            _ = try? archive.value(uid: uid)
            _ = try? archive.object(uid)
        }
    }

    @Test func everyTruncationOfAnArchiveThrows() throws {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(NSArray(array: ["a" as NSString, NSNumber(value: 1)]), forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let bytes = archiver.encodedData
        for length in 0..<bytes.count {
            #expect(throws: KeyedArchiveError.self, "prefix of \(length) bytes") {
                let archive = try KeyedArchive(bytes.prefix(length), source: "truncated")
                _ = try archive.topValue()
            }
        }
    }

    @Test func flippedBytesNeverCrash() throws {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(
            ["list": NSArray(array: ["a" as NSString, NSNumber(value: 1), NSSet(array: [NSNumber(value: 2)])]),
             "thing": ArchivedThing(name: "x"), "uuid": NSUUID()] as NSDictionary,
            forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let bytes = archiver.encodedData
        var generator = SeededGenerator(seed: 2024)
        for _ in 0..<1500 {
            var damaged = bytes
            for _ in 0..<(1 + generator.next() % 3) {
                let index = Int(generator.next() % UInt64(damaged.count))
                damaged[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            if let archive = try? KeyedArchive(damaged, source: "fuzz") { walk(archive) }
        }
    }

    // MARK: - Real model caches

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func readsSampleModelCache() throws {
        let data = try Deflate.decompress(ModelCacheFixtures.blob(ModelCacheFixtures.sampleModelV1))
        let archive = try KeyedArchive(data, source: "v1")
        guard case .object(let rootUID, "NSManagedObjectModel") = try archive.topValue() else {
            Issue.record("the root is not an NSManagedObjectModel")
            return
        }
        let model = try archive.object(rootUID)
        let entities = try #require(model["NSEntities"]?.entries)
        #expect(entities.map(\.key) == ["Car", "ExpensiveSportCar", "Person", "SportCar"].map { .string($0) })
        #expect(model["NSVersionIdentifiers"] == .set([.string("1")]))
        #expect(model["NSFetchRequestTemplates"] == .null)
        let car = try archive.object(try #require(entities[0].value.objectUID))
        #expect(car.className == "NSEntityDescription")
        #expect(car["NSEntityName"] == .string("Car"))
        #expect(car["NSUniqueTuples"] == .array([.array([.string("numberPlate")])]))
        walk(archive)
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func appClassInRealCacheIsOpaque() throws {
        let data = try Deflate.decompress(ModelCacheFixtures.blob(ModelCacheFixtures.sampleModel2V1))
        let archive = try KeyedArchive(data, source: "sample2")
        var covers: [ArchivedObject] = []
        for uid in 1..<archive.objectCount {
            if case .object(_, "CoreDataPlus_Tests.Cover") = try archive.value(uid: uid) { covers.append(try archive.object(uid)) }
        }
        #expect(covers.count == 1)
        #expect(covers.first?["text"] == .string("default cover"))
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: ModelCacheFixtures.stores)
    func flippedBytesInRealCachesNeverCrash(_ store: String) throws {
        let bytes = try Deflate.decompress(ModelCacheFixtures.blob(store))
        var generator = SeededGenerator(seed: UInt64(bytes.count))
        for _ in 0..<60 {
            var damaged = bytes
            let index = Int(generator.next() % UInt64(damaged.count))
            damaged[index] = UInt8(truncatingIfNeeded: generator.next())
            if let archive = try? KeyedArchive(damaged, source: "fuzz") { walk(archive) }
        }
    }
}

import Foundation
import Testing
@testable import Switchyard

/// A real store's model cache and the `.xcdatamodel` it was written from.
struct CachedModelFixture: Sendable, CustomTestStringConvertible {
    let store: String
    let model: String
    /// Version identifiers the cache holds (they may differ from the XML's; see `moody`).
    let cachedVersionIdentifiers: [String]

    var testDescription: String { (store as NSString).lastPathComponent }

    static let all: [CachedModelFixture] = [
        // SampleModel.xcdatamodeld's current version is v1, SampleModel.xcdatamodel.
        .init(
            store: ModelCacheFixtures.sampleModelV1,
            model: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld",
            cachedVersionIdentifiers: ["1"]),
        .init(
            store: ModelCacheFixtures.sampleModelV2,
            model: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel",
            cachedVersionIdentifiers: ["2"]),
        // The cache says NSVersionIdentifiers = {""}: the store was written before the model was given its
        // identifier "1" (identifiers are not part of the version hashes, so the structure still matches).
        .init(
            store: ModelCacheFixtures.moody, model: "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld",
            cachedVersionIdentifiers: []),
    ]
}

/// `ModelCache`: Core Data's keyed-archive caches rebuilt and compared with the models they came from,
/// Switchyard's own XML cache round trip, and every kind of bad blob.
@Suite struct ModelCacheTests {
    // MARK: - Real caches against their XML

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: CachedModelFixture.all)
    func recoveredModelMatchesItsXML(_ fixture: CachedModelFixture) throws {
        let source = ModelCacheFixtures.source(fixture.store)
        let cached = try ModelCache.decode(ModelCacheFixtures.blob(fixture.store), source: source)
        let xml = try ModelLoader.load(at: Fixtures.url(fixture.model))
        #expect(cached.entities.map(\.name) == xml.entities.map(\.name))
        #expect(Set(cached.entitySources.values) == [source])
        #expect(cached.versionIdentifiers == fixture.cachedVersionIdentifiers)
        #expect(cached.configurations == xml.configurations)
        for expected in xml.entities {
            let entity = try #require(cached.entity(named: expected.name))
            #expect(entity.parentName == expected.parentName)
            #expect(entity.isAbstract == expected.isAbstract)
            #expect(entity.renamingIdentifier == expected.renamingIdentifier)
            #expect(entity.attributes.map(\.name) == expected.attributes.map(\.name))
            for (a, b) in zip(entity.attributes, expected.attributes) {
                #expect(a.type == b.type, "\(entity.name).\(a.name)")
                #expect(a.isOptional == b.isOptional, "\(entity.name).\(a.name)")
                #expect(a.isTransient == b.isTransient, "\(entity.name).\(a.name)")
                #expect(a.defaultValue == b.defaultValue, "\(entity.name).\(a.name)")
                #expect(a.valueTransformerName == b.valueTransformerName, "\(entity.name).\(a.name)")
                #expect(a.isIndexed == b.isIndexed, "\(entity.name).\(a.name)")
            }
            #expect(entity.relationships == expected.relationships)
            #expect(entity.uniquenessConstraints == expected.uniquenessConstraints)
            #expect(entity.indexes == expected.indexes)
            // Equal structure gives equal hashes: both readings hash the same inputs the same way.
            #expect(entity.versionHash == expected.versionHash, "\(entity.name)")
            // Everything else too, but for the class name, which the XML and the cache disagree on legitimately:
            // Moody's store was written by an app whose classes were `MoodyModel.Continent` (the XML names none),
            // and SampleModel_V2's cache has no NSClassNameForEntity at all where its XML says `Car`.
            var (a, b) = (entity, expected)
            a.className = nil
            b.className = nil
            #expect(a == b)
        }
    }

    /// The entity numbers the recovered model assigns are the `Z_ENT`s Core Data wrote in the same store.
    @Test(
        .enabled(if: Fixtures.available, Fixtures.skipMessage),
        arguments: [ModelCacheFixtures.sampleModelV1, ModelCacheFixtures.sampleModel2V1, ModelCacheFixtures.moody])
    func entityNumbersMatchZPrimaryKey(_ store: String) throws {
        let model = try ModelCache.decode(ModelCacheFixtures.blob(store), source: store)
        let rows = try SQLite3.rows(Fixtures.url(store).path, "select Z_ENT, Z_NAME, Z_SUPER from Z_PRIMARYKEY where Z_ENT < 16000")
        #expect(rows.count == model.entities.count)
        for row in rows {
            let entity = try #require(model.entity(number: Int(row[0]) ?? -1))
            #expect(entity.name == row[1])
            #expect((entity.parentName.flatMap { model.entity(named: $0)?.entityNumber } ?? 0) == Int(row[2]))
        }
    }

    // MARK: - A model that exists only in its cache

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func sampleModel2IsRecoveredFromItsCacheAlone() throws {
        let model = try ModelCache.decode(
            ModelCacheFixtures.blob(ModelCacheFixtures.sampleModel2V1), source: "SampleModel2_V1.sqlite model cache")
        #expect(model.entities.map(\.name) == ["Book", "GraphicNovel", "Feedback", "Page", "Writer", "Author"])
        #expect(model.entity(named: "GraphicNovel")?.parentName == "Book")
        #expect(model.entity(named: "Author")?.parentName == "Writer")
        #expect(model.entity(named: "Writer")?.isAbstract == true)
        #expect(model.configurations == [
            ConfigurationDescription(
                name: "SampleConfigurationV1",
                entityNames: ["Author", "Book", "Feedback", "GraphicNovel", "Page", "Writer"]),
        ])
        #expect(model.versionIdentifiers == [])

        func attributes(_ entity: String) -> [String: AttributeDescription] {
            Dictionary(uniqueKeysWithValues: (model.entity(named: entity)?.attributes ?? []).map { ($0.name, $0) })
        }
        // Types as the code that built the model declares them (CoreDataPlus's SampleModel2+V1.swift).
        let book = attributes("Book")
        #expect(book.mapValues(\.type) == [
            "uniqueID": .uuid, "title": .string, "price": .decimal, "cover": .transformable, "publishedAt": .date,
            "pagesCount": .integer64,
        ])
        #expect(book.values.filter(\.isOptional).map(\.name) == ["pagesCount"])
        #expect(book["pagesCount"]?.derivationExpression == "pages.@count")
        #expect(book["cover"]?.valueTransformerName == "CoverTransformer")
        // The default cover is an object of the app class CoreDataPlus_Tests.Cover: skipped, not an error.
        #expect(book["cover"]?.defaultValue == nil)
        #expect(attributes("GraphicNovel").mapValues(\.type) == ["isBlackAndWhite": .boolean])
        #expect(attributes("GraphicNovel")["isBlackAndWhite"]?.defaultValue == .bool(false))
        #expect(attributes("Feedback").mapValues(\.type) == [
            "bookID": .uuid, "authorAlias": .string, "comment": .string, "rating": .double,
        ])
        #expect(attributes("Page").mapValues(\.type) == ["number": .integer32, "isBookmarked": .boolean, "content": .transformable])
        #expect(attributes("Writer").mapValues(\.type) == ["age": .integer16])
        #expect(attributes("Author").mapValues(\.type) == ["alias": .string, "siteURL": .uri])
        #expect(model.entity(named: "Author")?.uniquenessConstraints == [["alias"]])
        #expect(model.entity(named: "Book")?.uniquenessConstraints == [["uniqueID"]])

        let books = try #require(model.entity(named: "Author")?.relationship(named: "books"))
        #expect(books.isToMany && books.maxCount == 0 && books.deleteRule == .cascade && books.inverseName == "author")
        let pages = try #require(model.entity(named: "Book")?.relationship(named: "pages"))
        #expect(pages.isToMany && pages.minCount == 1 && pages.maxCount == 10_000 && pages.deleteRule == .cascade)
        #expect(!pages.isOptional)
        let author = try #require(model.entity(named: "Book")?.relationship(named: "author"))
        #expect(!author.isToMany && author.minCount == 1 && author.deleteRule == .nullify && !author.isOptional)

        let fetched = Dictionary(
            uniqueKeysWithValues: (model.entity(named: "Author")?.fetchedProperties ?? []).map { ($0.name, $0) })
        #expect(fetched["feedbacks"]?.destinationEntityName == "Feedback")
        #expect(fetched["feedbacks"]?.predicateFormat == "authorAlias == $FETCH_SOURCE.alias")
        #expect(
            fetched["favFeedbacks"]?.predicateFormat
                == "authorAlias == $FETCH_SOURCE.alias AND comment CONTAINS[c] $FETCHED_PROPERTY.userInfo.search")
        #expect(fetched["favFeedbacks"]?.userInfo == ["search": "great"])
        // The recovered predicates are ones our parser reads back to the same tree.
        for property in fetched.values {
            let parsed = try FetchPredicate(format: property.predicateFormat)
            #expect(parsed.format == property.predicateFormat)
        }
    }

    /// Every persistent attribute and to-one relationship of the recovered model has the column Core Data
    /// created for it, with the declared type that attribute type gets.
    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func sampleModel2MatchesItsSchema() throws {
        let path = Fixtures.url(ModelCacheFixtures.sampleModel2V1).path
        let model = try ModelCache.decode(ModelCacheFixtures.blob(ModelCacheFixtures.sampleModel2V1), source: path)
        for root in model.entities where root.isRoot {
            let table = "Z" + root.name.uppercased()
            let columns = Dictionary(
                uniqueKeysWithValues: try SQLite3.rows(path, "select name, type from pragma_table_info('\(table)')")
                    .map { ($0[0], $0[1]) })
            #expect(!columns.isEmpty, "\(table) exists")
            for name in root.selfAndDescendantNames {
                let entity = try #require(model.entity(named: name))
                for attribute in entity.persistentAttributes {
                    #expect(columns["Z" + attribute.name.uppercased()] == attribute.type.sqlColumnType, "\(table).\(attribute.name)")
                }
                for relationship in entity.persistentToOneRelationships {
                    #expect(columns["Z" + relationship.name.uppercased()] == "INTEGER", "\(table).\(relationship.name)")
                }
            }
        }
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: ModelCacheFixtures.stores)
    func recoveredModelsSurviveOurOwnCacheFormat(_ store: String) throws {
        let model = try ModelCache.decode(ModelCacheFixtures.blob(store), source: store)
        let again = try ModelCache.decode(ModelCache.encode(model), source: store)
        #expect(again == model)
        #expect(again.versionHashes == model.versionHashes)
    }

    // MARK: - Switchyard's own format

    @Test func messengerRoundTripsThroughTheCache() throws {
        let model = try ModelLoader.load(at: Repository.url("Schemas/Messenger.xcdatamodeld"))
        let blob = try ModelCache.encode(model)
        #expect(try Deflate.decompress(blob).prefix(5) == Data("<?xml".utf8))
        let decoded = try ModelCache.decode(blob, source: "messenger.sqlite model cache")
        #expect(decoded == model)
        #expect(decoded.versionHashes == model.versionHashes)
        #expect(Set(decoded.entitySources.values) == ["messenger.sqlite model cache"])
    }

    @Test func xmlWithByteOrderMarkAndLeadingSpaceIsRead() throws {
        let model = try ObjectModel(entities: [EntityDescription(name: "A", attributes: [AttributeDescription(name: "x", type: .string)])])
        let xml = Data([0xEF, 0xBB, 0xBF]) + Data("\n  ".utf8) + Data(ModelWriter.xml(for: model).utf8)
        #expect(try ModelCache.decode(Deflate.compress(xml), source: "bom") == model)
    }

    // MARK: - Hand-built archives: what no fixture shows

    @Test(arguments: [(Int64(0), DeleteRule.noAction), (1, .nullify), (2, .cascade), (3, .deny)])
    func deleteRules(_ code: Int64, _ rule: DeleteRule) throws {
        let model = try ModelCache.decode(Deflate.compress(SyntheticModel.archive(childrenDeleteRule: code)), source: "synthetic")
        #expect(model.entity(named: "Node")?.relationship(named: "children")?.deleteRule == rule)
        #expect(model.entity(named: "Node")?.relationship(named: "parent")?.deleteRule == .nullify)
    }

    @Test func unknownDeleteRuleIsAnError() throws {
        let blob = try Deflate.compress(SyntheticModel.archive(childrenDeleteRule: 9))
        let error = #expect(throws: ModelCacheError.self) { try ModelCache.decode(blob, source: "synthetic.sqlite") }
        #expect(error?.description.contains("synthetic.sqlite") == true)
        #expect(error?.description.contains("Node.children") == true)
    }

    @Test(arguments: [SyntheticModel.Ordered.byKey, .byPackedFlags, .no])
    func orderedRelationships(_ ordered: SyntheticModel.Ordered) throws {
        let model = try ModelCache.decode(Deflate.compress(SyntheticModel.archive(ordered: ordered)), source: "synthetic")
        let children = try #require(model.entity(named: "Node")?.relationship(named: "children"))
        #expect(children.isOrdered == (ordered != .no))
        #expect(children.isToMany && children.maxCount == 0 && children.inverseName == "parent")
    }

    @Test func syntheticModelResolves() throws {
        let model = try ModelCache.decode(Deflate.compress(SyntheticModel.archive()), source: "synthetic")
        #expect(model.entities.map(\.name) == ["Node", "Leaf"])
        let node = try #require(model.entity(named: "Node"))
        let leaf = try #require(model.entity(named: "Leaf"))
        // Leaf's archive repeats Node's four properties; only `color` is its own.
        #expect(leaf.attributes.map(\.name) == ["color"])
        #expect(leaf.relationships.isEmpty)
        #expect(leaf.allAttributes.map(\.name) == ["title", "weight", "color"])
        #expect(node.attribute(named: "title")?.isOptional == true)
        #expect(node.attribute(named: "weight")?.isOptional == false)
        #expect(node.attribute(named: "weight")?.type == .float)
        #expect(node.attribute(named: "weight")?.defaultValue == .double(1.5))
        #expect(node.attribute(named: "title")?.renamingIdentifier == "caption")
        #expect(node.attribute(named: "title")?.allowsExternalBinaryDataStorage == false)
        #expect(leaf.attribute(named: "color")?.allowsExternalBinaryDataStorage == true)
        #expect(leaf.attribute(named: "color")?.defaultValue == .binary(Data([1, 2, 3])))
        #expect(node.versionHashModifier == "v2")
        #expect(node.userInfo == ["owner": "tests", "count": "3"])
        #expect(model.configurations == [ConfigurationDescription(name: "Cloud", entityNames: ["Leaf", "Node"])])
        #expect(model.versionIdentifiers == ["7"])
    }

    @Test(arguments: [Int64(2100), 42, -1])
    func unknownAttributeTypeIsAnError(_ code: Int64) throws {
        let blob = try Deflate.compress(SyntheticModel.archive(weightType: code))
        #expect(
            throws: ModelError.unknownAttributeType(file: "synthetic", entity: "Node", attribute: "weight", type: "NSAttributeType \(code)")
        ) {
            try ModelCache.decode(blob, source: "synthetic")
        }
    }

    @Test func everyAttributeTypeHasACode() {
        #expect(Set(ArchivedModelReader.attributeTypes.values) == Set(AttributeType.allCases))
        #expect(ArchivedModelReader.attributeTypes.count == AttributeType.allCases.count)
    }

    /// Default values of classes that are objects in an archive: NSDecimalNumber (as Apple writes it) and NSURL.
    @Test func objectDefaultValues() throws {
        var a = KeyedArchiveBuilder()
        func decimal(_ words: [UInt16], exponent: Int64, negative: Bool, byteOrder: Int64 = 1) -> UInt64 {
            var bytes = Data(count: 16)
            for (i, word) in words.enumerated() {
                let (low, high) = (UInt8(word & 0xFF), UInt8(word >> 8))
                bytes[2 * i] = byteOrder == 1 ? low : high
                bytes[2 * i + 1] = byteOrder == 1 ? high : low
            }
            return a.object("NSDecimalNumberPlaceholder", ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"], [
                ("NS.exponent", .int(exponent)), ("NS.length", .int(Int64(words.count))), ("NS.negative", .bool(negative)),
                ("NS.compact", .bool(true)), ("NS.mantissa.bo", .int(byteOrder)), ("NS.mantissa", .ref(a.data(bytes))),
            ])
        }
        let base = a.object("NSURL", ["NSObject"], [("NS.base", .ref(0)), ("NS.relative", .ref(a.string("https://example.com/a/")))])
        let items = [
            decimal([12345], exponent: -3, negative: true),
            decimal([5, 2], exponent: 2, negative: false),  // (2 * 65536 + 5) * 100
            decimal([5, 2], exponent: 2, negative: false, byteOrder: 2),
            decimal([1], exponent: 0, negative: false, byteOrder: 7),  // unknown byte order: no default
            a.object("NSURL", ["NSObject"], [("NS.base", .ref(0)), ("NS.relative", .ref(a.string("https://example.com/x?q=1")))]),
            a.object("NSURL", ["NSObject"], [("NS.base", .ref(base)), ("NS.relative", .ref(a.string("c/d")))]),
        ]
        let root = a.array(items)
        let archive = try KeyedArchive(a.build(root: root), source: "defaults")
        let values = try #require(try archive.topValue().elements)
        let reader = ArchivedModelReader(archive: archive, source: "defaults")
        #expect(reader.defaultValue(values[0], type: .decimal) == .decimal(Decimal(string: "-12.345")!))
        #expect(reader.defaultValue(values[1], type: .decimal) == .decimal(13_107_700))
        #expect(reader.defaultValue(values[2], type: .decimal) == .decimal(13_107_700))
        #expect(reader.defaultValue(values[3], type: .decimal) == nil)
        #expect(reader.defaultValue(values[4], type: .uri) == .uri(URL(string: "https://example.com/x?q=1")!))
        #expect(reader.defaultValue(values[5], type: .uri) == .uri(URL(string: "https://example.com/a/c/d")!))
        // A value of the wrong kind for the type is no default, not an error.
        #expect(reader.defaultValue(values[4], type: .decimal) == nil)
        #expect(reader.defaultValue(.string("x"), type: .integer64) == nil)
        #expect(reader.defaultValue(.integer(1), type: .boolean) == .bool(true))
        #expect(reader.defaultValue(.real(3), type: .integer16) == .integer(3))
    }

    @Test func unconvertiblePredicateKeepsBestEffortText() throws {
        let model = try ModelCache.decode(Deflate.compress(SyntheticModel.archive(predicate: .matches)), source: "synthetic")
        let fetched = try #require(model.entity(named: "Node")?.fetchedProperty(named: "related"))
        #expect(fetched.predicateFormat == "title MATCHES[c] \"a.*\"")
        let converted = try ModelCache.decode(Deflate.compress(SyntheticModel.archive(predicate: .notEqual)), source: "synthetic")
        #expect(converted.entity(named: "Node")?.fetchedProperty(named: "related")?.predicateFormat == "title != \"a.*\"")
        let any = try ModelCache.decode(Deflate.compress(SyntheticModel.archive(predicate: .anyBeginsWith)), source: "synthetic")
        #expect(any.entity(named: "Node")?.fetchedProperty(named: "related")?.predicateFormat == "ANY title BEGINSWITH[cd] \"a.*\"")
        let selfCycle = try ModelCache.decode(Deflate.compress(SyntheticModel.archive(predicate: .cycle)), source: "synthetic")
        // A predicate that contains itself prints as far as the work budget goes, then stops.
        let cyclic = try #require(selfCycle.entity(named: "Node")?.fetchedProperty(named: "related")?.predicateFormat)
        #expect(cyclic.hasPrefix("((("))
        #expect(cyclic.contains("<unreadable predicate>"))
        #expect(cyclic.count < 100_000)
    }

    // MARK: - Bad blobs

    @Test func garbageIsACompressionErrorNamingTheSource() {
        let error = #expect(throws: ModelCacheError.self) {
            try ModelCache.decode(Data(repeating: 0xFF, count: 100), source: "/data/app.sqlite model cache")
        }
        guard case .compression(let source, let underlying)? = error else {
            Issue.record("expected .compression, got \(String(describing: error))")
            return
        }
        #expect(source == "/data/app.sqlite model cache")
        #expect(underlying.codeName == "Z_DATA_ERROR")
        #expect(error?.description.hasPrefix("/data/app.sqlite model cache: ") == true)
    }

    @Test func emptyBlobThrows() {
        #expect(throws: ModelCacheError.self) { try ModelCache.decode(Data(), source: "empty") }
    }

    @Test func zlibAndGzipWrappedStreamsAreNotRawDeflate() throws {
        let raw = try Deflate.compress(Data(ModelWriter.xml(for: ObjectModel(entities: [EntityDescription(name: "A")])).utf8))
        for header in [Data([0x78, 0x9C]), Data([0x1F, 0x8B, 0x08, 0x00])] {
            let error = #expect(throws: ModelCacheError.self) { try ModelCache.decode(header + raw, source: "wrapped") }
            if case .compression(let source, _)? = error { #expect(source == "wrapped") } else { Issue.record("\(String(describing: error))") }
        }
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func truncatedRealBlobThrows() throws {
        let blob = try ModelCacheFixtures.blob(ModelCacheFixtures.sampleModelV1)
        for length in stride(from: 0, to: blob.count, by: 97) {
            #expect(throws: ModelCacheError.self) { try ModelCache.decode(blob.prefix(length), source: "cut") }
        }
    }

    @Test func inflatedTextThatIsNoModelThrows() throws {
        let error = #expect(throws: ModelCacheError.self) {
            try ModelCache.decode(Deflate.compress(Data("hello, world".utf8)), source: "text")
        }
        #expect(error == .unknownFormat(source: "text", prefix: "\"hello, world\""))
        let binary = #expect(throws: ModelCacheError.self) { try ModelCache.decode(Deflate.compress(Data([0, 1, 2])), source: "bin") }
        #expect(binary == .unknownFormat(source: "bin", prefix: "bytes 000102"))
    }

    @Test func plainPropertyListIsNotAnArchive() throws {
        let plist = try PropertyListSerialization.data(fromPropertyList: ["a": 1] as NSDictionary, format: .binary, options: 0)
        let error = #expect(throws: ModelCacheError.self) { try ModelCache.decode(Deflate.compress(plist), source: "plain") }
        guard case .archive(.malformedArchive(let source, _))? = error else {
            Issue.record("expected .archive(.malformedArchive), got \(String(describing: error))")
            return
        }
        #expect(source == "plain")
    }

    @Test func archiveOfSomethingElseIsNotAModel() throws {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(NSArray(array: ["not a model" as NSString]), forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let error = #expect(throws: ModelCacheError.self) {
            try ModelCache.decode(Deflate.compress(archiver.encodedData), source: "array.sqlite")
        }
        #expect(error == .invalidModel(source: "array.sqlite", reason: "the archive's root is an array, not an NSManagedObjectModel"))
    }

    @Test func malformedXMLIsAModelErrorNamingTheSource() throws {
        let error = #expect(throws: ModelError.self) {
            try ModelCache.decode(Deflate.compress(Data("<?xml version=\"1.0\"?><model><entity".utf8)), source: "broken.sqlite model cache")
        }
        #expect(error?.description.hasPrefix("broken.sqlite model cache") == true)
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: ModelCacheFixtures.stores)
    func damagedRealArchivesThrowOrDecodeButNeverCrash(_ store: String) throws {
        let inflated = try Deflate.decompress(ModelCacheFixtures.blob(store))
        var generator = SeededGenerator(seed: UInt64(inflated.count) &* 31)
        for _ in 0..<120 {
            var damaged = inflated
            for _ in 0..<(1 + generator.next() % 4) {
                damaged[Int(generator.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            _ = try? ModelCache.decode(Deflate.compress(damaged), source: "fuzz")
        }
        for length in stride(from: 0, to: inflated.count, by: 53) {
            #expect(throws: (any Error).self) { try ModelCache.decode(Deflate.compress(inflated.prefix(length)), source: "cut") }
        }
    }
}

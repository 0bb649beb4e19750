import Foundation
import Testing
@testable import Switchyard

/// Real Core Data stores opened read-only: every row of every entity compared with what `sqlite3` reports,
/// literal spot checks, and files byte-identical afterwards.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage),
       .enabled(if: SQLite3.available, "the sqlite3 shell (/usr/bin/sqlite3) is needed to read the fixtures independently"))
struct SQLiteFixtureTests {
    /// A fixture store and the model (built in code from its XML, or from its `.schema`) that opens it.
    struct Fixture: Sendable, CustomTestStringConvertible {
        let name: String
        let path: String
        let model: @Sendable () throws -> ObjectModel
        var testDescription: String { name }
        var url: URL { Fixtures.url(path) }
    }

    static let v1 = Fixture(
        name: "SampleModel_V1", path: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
        model: { try FixtureModels.sampleModel(version: 1) })
    static let v2 = Fixture(
        name: "SampleModel_V2", path: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
        model: { try FixtureModels.sampleModel(version: 2) })
    static let model2 = Fixture(
        name: "SampleModel2_V1", path: "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite",
        model: { try FixtureModels.sampleModel2() })
    static let moody = Fixture(
        name: "Moody", path: "objcio__core-data/Migrations/MigrationsTests/Moody.moody", model: { try FixtureModels.moody() })
    static let all = [v1, v2, model2, moody]

    private static func hashes(_ fixture: Fixture) -> [String?] {
        ["", "-wal", "-shm"].map { fileSHA256(fixture.url.path + $0) }
    }

    private static func open(_ fixture: Fixture) throws -> SQLiteStore {
        try SQLiteStore(url: fixture.url, model: try fixture.model(), configuration: "Default", options: .readOnly)
    }

    // MARK: - Every row, every value

    @Test(arguments: all)
    func everyRowMatchesSQLite3AndFilesAreUntouched(fixture: Fixture) throws {
        let before = Self.hashes(fixture)
        do {
            let store = try Self.open(fixture)
            let path = fixture.url.path
            var numbers: [String: Int] = [:]
            for row in try SQLite3.rows(path, "SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY") { numbers[row[0]] = Int(row[1]) }
            func number(_ entity: EntityDescription) -> Int? {
                numbers[entity.name] ?? entity.renamingIdentifier.flatMap { numbers[$0] }
            }
            for entity in store.entities {
                let n = try #require(number(entity), "\(entity.name) in Z_PRIMARYKEY")
                let table = "Z" + entity.rootName.uppercased()
                let expectedCount = try SQLite3.query(path, "SELECT count(*) FROM \(table) WHERE Z_ENT = \(n)")
                #expect(try store.count(StoreFetchRequest(entityName: entity.name, includesSubentities: false)) == Int(expectedCount))
                let family = entity.selfAndDescendantNames.compactMap { store.model.entity(named: $0) }.compactMap(number)
                let familyCount = try SQLite3.query(
                    path, "SELECT count(*) FROM \(table) WHERE Z_ENT IN (\(family.map(String.init).joined(separator: ",")))")
                #expect(try store.count(StoreFetchRequest(entityName: entity.name)) == Int(familyCount))

                // The same columns rendered by sqlite3 and from the fetched values.
                let attributes = entity.persistentAttributes
                let relationships = entity.persistentToOneRelationships
                var columns = ["Z_PK", "Z_OPT"] + attributes.map { Self.renderSQL("Z" + $0.name.uppercased(), $0.type) }
                for relationship in relationships {
                    columns.append("ifnull(Z\(relationship.name.uppercased()), '')")
                    if let destination = store.model.entity(named: relationship.destinationEntityName),
                        !destination.subentityNames.isEmpty, let d = number(destination)
                    {
                        columns.append("ifnull(Z\(d)_\(relationship.name.uppercased()), '')")
                    }
                }
                let expected = try SQLite3.rows(
                    path, "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE Z_ENT = \(n) ORDER BY Z_PK")
                let rows = try store.fetch(StoreFetchRequest(entityName: entity.name, includesSubentities: false))
                let actual = rows.map { row -> [String] in
                    #expect(row.entityName == entity.name)
                    var fields = [String(row.primaryKey), String(row.version)]
                    fields += attributes.map { Self.render(row[$0.name]) }
                    for relationship in relationships {
                        let reference = row.toOne[relationship.name]
                        fields.append(reference.map { String($0.primaryKey) } ?? "")
                        if let destination = store.model.entity(named: relationship.destinationEntityName),
                            !destination.subentityNames.isEmpty
                        {
                            let referenced = reference.flatMap { store.model.entity(named: $0.entityName) }.flatMap(number)
                            fields.append(referenced.map(String.init) ?? "")
                        }
                    }
                    return fields
                }
                #expect(actual == expected, "entity \(entity.name)")
            }
        }
        #expect(Self.hashes(fixture) == before, "the fixture's files changed")
    }

    /// sqlite3's rendering of a column: REALs with 6 decimals (dates, doubles, decimals), blobs in hex.
    private static func renderSQL(_ column: String, _ type: AttributeType) -> String {
        switch type {
        case .date, .double, .float, .decimal: return "CASE WHEN \(column) IS NULL THEN '' ELSE printf('%.6f', \(column)) END"
        case .binary, .transformable, .uuid: return "hex(\(column))"
        default: return "ifnull(\(column), '')"
        }
    }

    private static func render(_ value: AttributeValue) -> String {
        switch value {
        case .null: return ""
        case .integer(let i): return String(i)
        case .bool(let b): return b ? "1" : "0"
        case .double(let d): return String(format: "%.6f", d)
        case .decimal(let d): return String(format: "%.6f", Double(d.description) ?? .nan)
        case .date(let d): return String(format: "%.6f", d.timeIntervalSinceReferenceDate)
        case .string(let s): return s
        case .uri(let u): return u.absoluteString
        case .binary(let d): return d.map { String(format: "%02X", $0) }.joined()
        case .uuid(let u): return u.bytes.map { String(format: "%02X", $0) }.joined()
        }
    }

    // MARK: - Spot checks with literal values

    @Test func sampleModelV1Values() throws {
        let store = try Self.open(Self.v1)
        let person = try #require(try store.rows(for: [RowReference(entityName: "Person", primaryKey: 1)]).first)
        #expect(person["firstName"] == "Victoria")
        #expect(person["lastName"] == "Coster")
        #expect(person["id"] == .uuid(UUID(uuidString: "FEFE4176-912D-429F-9C83-662FFF641115")!))
        let updatedAt = try #require(person["updatedAt"].numericValue)
        #expect(abs(updatedAt - 639_503_569.638733) < 1e-6)
        let car = try #require(try store.rows(for: [RowReference(entityName: "Car", primaryKey: 87)]).first)
        #expect(car.entityName == "ExpensiveSportCar")
        #expect(car["isLimitedEdition"] == .bool(true))
        #expect(car["maker"] == "BMW")
        #expect(car.toOne["owner"] == RowReference(entityName: "Person", primaryKey: 9))
        let plain = try #require(try store.rows(for: [RowReference(entityName: "Car", primaryKey: 14)]).first)
        #expect(plain["isLimitedEdition"] == .bool(false))
        #expect(plain.toOne["owner"] == nil)
        #expect(try store.count(StoreFetchRequest(entityName: "Car")) == 125)
        #expect(try store.count(StoreFetchRequest(entityName: "SportCar")) == 10)
        let plates = FetchPredicate.comparison(Comparison(.keyPath(["numberPlate"]), .beginsWith, .constant("20")))
        #expect(try store.count(StoreFetchRequest(entityName: "Car", predicate: plates)) == 5)
        let byOwner = FetchPredicate.comparison(Comparison(.keyPath(["owner", "firstName"]), .equal, .constant("Victoria")))
        #expect(try store.count(StoreFetchRequest(entityName: "Car", predicate: byOwner))
            == Int(try SQLite3.query(Self.v1.url.path, "SELECT count(*) FROM ZCAR JOIN ZPERSON p ON p.Z_PK = ZCAR.ZOWNER WHERE p.ZFIRSTNAME = 'Victoria'")))
        let metadata = try store.metadata()
        #expect(metadata.uuid.uuidString == (try SQLite3.query(Self.v1.url.path, "SELECT Z_UUID FROM Z_METADATA")))
        #expect(metadata.versionIdentifiers == ["1"])
        #expect(metadata.additional["NSPersistenceFrameworkVersion"] == .integer(1044))
        #expect(throws: StoreError.readOnly(path: Self.v1.url.path, configuration: store.configurationName, operation: "save")) {
            try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Car", primaryKey: 14, expectedVersion: 1)]))
        }
    }

    @Test func sampleModelV2FindsTheRenamedEntityByItsRenamingIdentifier() throws {
        let store = try Self.open(Self.v2)
        // Z_PRIMARYKEY still says ExpensiveSportCar (3); the model calls it LuxuryCar with that elementID.
        let luxury = try store.fetch(StoreFetchRequest(entityName: "LuxuryCar"))
        #expect(luxury.count == 5)
        #expect(luxury.allSatisfy { $0.entityName == "LuxuryCar" })
        #expect(try store.fetch(StoreFetchRequest(entityName: "SportCar")).map(\.entityName).filter { $0 == "SportCar" }.count == 5)
    }

    @Test func sampleModel2Values() throws {
        let store = try Self.open(Self.model2)
        let novel = try #require(try store.rows(for: [RowReference(entityName: "Book", primaryKey: 11)]).first)
        #expect(novel.entityName == "GraphicNovel")
        #expect(novel["isBlackAndWhite"] == .bool(true))
        #expect(novel["price"] == .decimal(Decimal(string: "3.3333333333")!))
        #expect(novel["title"] == "title graphic novel - author 1")
        let book = try #require(try store.rows(for: [RowReference(entityName: "Book", primaryKey: 1)]).first)
        #expect(book["price"] == .decimal(Decimal(string: "10.11")!))
        #expect(book["uniqueID"] == .uuid(UUID(uuidString: "C4637490-BD7F-4428-B093-63A1720E17D2")!))
        #expect(book["pagesCount"] == 99)
        #expect(book.toOne["author"] == RowReference(entityName: "Author", primaryKey: 1))
        // Z1_BOOK says which pages belong to the graphic novel.
        let pages = try store.fetch(StoreFetchRequest(entityName: "Page"))
        #expect(pages.count == 4970)
        #expect(pages.filter { $0.toOne["book"]?.entityName == "GraphicNovel" }.count == 19)
        // (isBlackAndWhite is GraphicNovel's, so not a key path of Page.book, whose destination is Book.)
        let aboutNovels = FetchPredicate.comparison(Comparison(.keyPath(["book", "title"]), .beginsWith, .constant("title graphic novel")))
        #expect(try store.count(StoreFetchRequest(entityName: "Page", predicate: aboutNovels)) == 19)
        let feedback = try #require(try store.rows(for: [RowReference(entityName: "Feedback", primaryKey: 1)]).first)
        #expect(feedback["rating"] == .double(5.8))
        #expect(feedback["bookID"] == .uuid(UUID(uuidString: "7E2E4EF6-BEB6-4DF6-A36E-C40353C1A06C")!))
        #expect(try store.fetch(StoreFetchRequest(entityName: "Writer")).map { $0["alias"] } == ["Andrea", "Alessandro"])
        let bigBooks = FetchPredicate.comparison(Comparison(.keyPath(["pages", "@count"]), .greater, .constant(100)))
        #expect(try store.count(StoreFetchRequest(entityName: "Book", predicate: bigBooks))
            == Int(try SQLite3.query(Self.model2.url.path, "SELECT count(*) FROM ZBOOK b WHERE (SELECT count(*) FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK) > 100")))
    }

    @Test func moodyValuesAndMetadata() throws {
        let store = try Self.open(Self.moody)
        let mood = try #require(try store.rows(for: [RowReference(entityName: "Mood", primaryKey: 39)]).first)
        #expect(mood["latitude"] == .double(-26))
        #expect(mood["longitude"] == .double(28))
        #expect(mood["markedForRemoteDeletion"] == .bool(false))
        #expect(mood["creatorID"] == "__defaultOwner__")
        #expect(mood["remoteIdentifier"] == "47300BAD-DE7D-4B54-B94C-04A3EE4CD0C5")
        #expect(mood.toOne["country"] == RowReference(entityName: "Country", primaryKey: 21))
        let continent = try #require(try store.rows(for: [RowReference(entityName: "GeographicRegion", primaryKey: 1)]).first)
        #expect(continent.entityName == "Continent")
        #expect(continent["numberOfCountries"] == 6)
        #expect(continent.version == 2)
        let metadata = try store.metadata()
        #expect(metadata.additional["io.objc.Moody.CloudKitUserID"] == .string("_62a0ed0ad3b375fc9ec7fdf66dfd9c63"))
        #expect(metadata.uuid == UUID(uuidString: "374C5961-3E41-43E5-915C-383EA914074C"))
        #expect(try store.count(StoreFetchRequest(entityName: "GeographicRegion")) == 5)
    }

    // MARK: - Models from their XML

    /// The fixtures opened with the models ModelLoader reads from their `.xcdatamodel(d)`: the same rows as with
    /// the models built in code.
    @Test(arguments: [
        (v1, "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"),
        (v2, "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"),
        (moody, "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"),
    ])
    func loadedModelsOpenTheirStores(fixture: Fixture, model: String) throws {
        let loaded = try ModelLoader.load(at: Fixtures.url(model))
        let store = try SQLiteStore(url: fixture.url, model: loaded, configuration: "Default", options: .readOnly)
        let reference = try Self.open(fixture)
        for entity in reference.entities {
            let request = StoreFetchRequest(entityName: entity.name, includesSubentities: false)
            #expect(try store.fetch(request) == (try reference.fetch(request)), "entity \(entity.name)")
        }
    }

    @Test func theFirstKilobyteOfARealStoreIsNotAStore() throws {
        let dir = TemporaryDirectory()
        let truncated = dir.file("truncated.sqlite")
        try Data(try Data(contentsOf: Self.v2.url).prefix(1000)).write(to: truncated)
        for options in [StoreOptions.default, .readOnly] {
            #expect {
                try SQLiteStore(url: truncated, model: try Self.v2.model(), configuration: "Default", options: options)
            } throws: { error in
                guard case StoreError.notAStore(let path, .sqlite, let reason)? = error as? StoreError else { return false }
                return path == truncated.path && reason.contains("SQLITE_CORRUPT")
            }
        }
    }

    // MARK: - Writing to copies

    @Test func aCopyOfMoodyContinuesAboveZMax() throws {
        let dir = TemporaryDirectory()
        let copy = dir.file("Moody.moody")
        try FileManager.default.copyItem(at: Self.moody.url, to: copy)
        let store = try SQLiteStore(url: copy, model: try Self.moody.model(), configuration: "Default")
        // Z_MAX (36) is above the highest key in use: it is the next key's floor, not max(Z_PK).
        let key = try store.allocatePrimaryKeys(for: "Country", count: 1)
        #expect(key == 37...37)
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Country", primaryKey: 37, values: [
            "numericISO3166Code": 999, "uniquenessDummy": 0, "numberOfMoods": 0, "updatedAt": .date(Date()),
        ], toOne: ["continent": RowReference(entityName: "Continent", primaryKey: 1)])]))
        #expect(try SQLite3.query(copy.path, "SELECT Z_ENT, ZCONTINENT FROM ZGEOGRAPHICREGION WHERE Z_PK = 37") == "3|1")
        #expect(try SQLite3.query(copy.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'GeographicRegion'") == "37")
        // The legacy table-level UNIQUE constraint is enforced and named.
        #expect {
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Country", primaryKey: 38, values: [
                "numericISO3166Code": 999, "uniquenessDummy": 0, "numberOfMoods": 0, "updatedAt": .date(Date()),
            ])]))
        } throws: { error in
            guard case StoreError.uniquenessViolation(_, _, "Country", let properties, _)? = error as? StoreError else { return false }
            return properties == ["numericISO3166Code", "uniquenessDummy"]
        }
    }

    @Test func aCopyOfSampleModel2RunsCoreDatasDerivedAttributeTriggers() throws {
        let dir = TemporaryDirectory()
        let copy = dir.file("SampleModel2_V1.sqlite")
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: Self.model2.url.path + suffix, toPath: copy.path + suffix)
        }
        let store = try SQLiteStore(url: copy, model: try Self.model2.model(), configuration: "Default")
        let before = try #require(try store.rows(for: [RowReference(entityName: "Book", primaryKey: 11)]).first)
        let key = try store.allocatePrimaryKeys(for: "Page", count: 1).lowerBound
        #expect(key == 4971)
        try store.save(StoreChangeSet(inserts: [StoreRow(
            entityName: "Page", primaryKey: key, values: ["number": 1000, "isBookmarked": false],
            toOne: ["book": RowReference(entityName: "GraphicNovel", primaryKey: 11)])]))
        let after = try #require(try store.rows(for: [RowReference(entityName: "Book", primaryKey: 11)]).first)
        #expect(after["pagesCount"] == .integer((before["pagesCount"].integerValue ?? 0) + 1))
        #expect(try SQLite3.query(copy.path, "SELECT ZBOOK, Z1_BOOK FROM ZPAGE WHERE Z_PK = \(key)") == "11|2")
    }
}

// MARK: - Fixture models

/// The fixtures' models, built in code: SampleModel v1/v2 and Moody from their `contents` XML, SampleModel2
/// (which has no XML) from its store's `.schema`.
enum FixtureModels {
    static func sampleModel(version: Int) throws -> ObjectModel {
        var carAttributes = [
            AttributeDescription(name: "maker", type: .string),
            AttributeDescription(name: "markedForDeletionAsOf", type: .date),
            AttributeDescription(name: "model", type: .string),
            AttributeDescription(name: "numberPlate", type: .string, isOptional: false),
        ]
        var personAttributes = [
            AttributeDescription(name: "firstName", type: .string),
            AttributeDescription(name: "lastName", type: .string),
            AttributeDescription(name: "updatedAt", type: .date, isOptional: false),
        ]
        if version == 1 {
            carAttributes.insert(AttributeDescription(name: "color", type: .transformable, valueTransformerName: "ColorTransformer"), at: 0)
            carAttributes.insert(AttributeDescription(name: "currentDrivingSpeed", type: .integer64, isTransient: true), at: 1)
            personAttributes.insert(AttributeDescription(name: "id", type: .uuid, isOptional: false), at: 1)
            personAttributes.insert(AttributeDescription(name: "isDriving", type: .boolean, isTransient: true), at: 2)
        }
        let car = EntityDescription(
            name: "Car", attributes: carAttributes,
            relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")],
            uniquenessConstraints: [["numberPlate"]],
            indexes: version == 2 ? [IndexDescription(name: "byMakerAndNumberPlate", properties: ["maker", "numberPlate"])] : [])
        let luxury = EntityDescription(
            name: version == 1 ? "ExpensiveSportCar" : "LuxuryCar", parent: "SportCar",
            attributes: [AttributeDescription(name: "isLimitedEdition", type: .boolean, defaultValue: .bool(false))],
            renamingIdentifier: version == 1 ? nil : "ExpensiveSportCar")
        let person = EntityDescription(
            name: "Person", attributes: personAttributes,
            relationships: [RelationshipDescription(name: "cars", destination: "Car", inverse: "owner", isToMany: true)],
            uniquenessConstraints: [["firstName", "lastName"]])
        let sport = EntityDescription(name: "SportCar", parent: "Car")
        return try ObjectModel(entities: [car, luxury, person, sport], versionIdentifiers: ["\(version)"], source: "SampleModel v\(version)")
    }

    static func sampleModel2() throws -> ObjectModel {
        let book = EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription(name: "pagesCount", type: .integer64, derivationExpression: "pages.@count"),
                AttributeDescription(name: "publishedAt", type: .date),
                AttributeDescription(name: "price", type: .decimal),
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "uniqueID", type: .uuid),
                AttributeDescription(name: "cover", type: .binary),
            ],
            relationships: [
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true),
            ],
            uniquenessConstraints: [["uniqueID"]])
        let novel = EntityDescription(
            name: "GraphicNovel", parent: "Book", attributes: [AttributeDescription(name: "isBlackAndWhite", type: .boolean)])
        let feedback = EntityDescription(
            name: "Feedback",
            attributes: [
                AttributeDescription(name: "rating", type: .double),
                AttributeDescription(name: "authorAlias", type: .string),
                AttributeDescription(name: "comment", type: .string),
                AttributeDescription(name: "bookID", type: .uuid),
            ])
        let page = EntityDescription(
            name: "Page",
            attributes: [
                AttributeDescription(name: "isBookmarked", type: .boolean),
                AttributeDescription(name: "number", type: .integer64),
                AttributeDescription(name: "content", type: .binary),
            ],
            relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "pages")])
        let writer = EntityDescription(name: "Writer", attributes: [AttributeDescription(name: "age", type: .integer16)])
        let author = EntityDescription(
            name: "Author", parent: "Writer",
            attributes: [
                AttributeDescription(name: "alias", type: .string),
                AttributeDescription(name: "siteURL", type: .uri),
            ],
            relationships: [RelationshipDescription(name: "books", destination: "Book", inverse: "author", isToMany: true)],
            uniquenessConstraints: [["alias"]])
        return try ObjectModel(entities: [book, novel, feedback, page, writer, author], source: "SampleModel2 (from .schema)")
    }

    static func moody() throws -> ObjectModel {
        let region = EntityDescription(
            name: "GeographicRegion", isAbstract: true,
            attributes: [
                AttributeDescription(name: "markedForDeletionDate", type: .date),
                AttributeDescription(name: "numberOfMoods", type: .integer64, isOptional: false, defaultValue: 0),
                AttributeDescription(name: "numericISO3166Code", type: .integer16, isOptional: false, defaultValue: 0),
                AttributeDescription(name: "uniquenessDummy", type: .integer16, isOptional: false, defaultValue: 0),
                AttributeDescription(name: "updatedAt", type: .date, isOptional: false),
            ],
            uniquenessConstraints: [["numericISO3166Code", "uniquenessDummy"]],
            indexes: [IndexDescription(name: "compound_1", properties: ["markedForDeletionDate", "updatedAt"])])
        let continent = EntityDescription(
            name: "Continent", parent: "GeographicRegion",
            attributes: [AttributeDescription(name: "numberOfCountries", type: .integer64, isOptional: false, defaultValue: 0)],
            relationships: [RelationshipDescription(name: "countries", destination: "Country", inverse: "continent", isToMany: true)])
        let country = EntityDescription(
            name: "Country", parent: "GeographicRegion",
            relationships: [
                RelationshipDescription(name: "continent", destination: "Continent", inverse: "countries"),
                RelationshipDescription(name: "moods", destination: "Mood", inverse: "country", isToMany: true),
            ])
        let mood = EntityDescription(
            name: "Mood",
            attributes: [
                AttributeDescription(name: "colors", type: .transformable),
                AttributeDescription(name: "creatorID", type: .string),
                AttributeDescription(name: "date", type: .date, isOptional: false),
                AttributeDescription(name: "latitude", type: .double),
                AttributeDescription(name: "longitude", type: .double),
                AttributeDescription(name: "markedForDeletionDate", type: .date, isIndexed: true),
                AttributeDescription(name: "markedForRemoteDeletion", type: .boolean, isOptional: false),
                AttributeDescription(name: "remoteIdentifier", type: .string, isIndexed: true),
            ],
            relationships: [RelationshipDescription(name: "country", destination: "Country", inverse: "moods")],
            indexes: [IndexDescription(name: "compound_1", properties: ["markedForRemoteDeletion", "markedForDeletionDate", "date"])])
        return try ObjectModel(entities: [region, continent, country, mood], versionIdentifiers: [""], source: "Moody")
    }
}

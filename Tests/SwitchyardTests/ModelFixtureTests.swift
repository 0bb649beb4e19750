import Foundation
import Testing
@testable import Switchyard

/// What one real model file declares, counted from its XML.
struct FixtureModelCounts: Sendable, CustomTestStringConvertible {
    /// Path under the fixtures folder: an `.xcdatamodeld` bundle or one `.xcdatamodel` version.
    let path: String
    /// The `contents` file the path resolves to (relative to the fixtures folder), or the `elements` file of a
    /// pre-Xcode-4 model.
    let contents: String
    let entities: Int
    /// Own attributes, summed over entities (inherited ones not counted again).
    let attributes: Int
    let relationships: Int
    let fetchedProperties: Int
    let configurations: Int

    var testDescription: String { path }

    /// Counted with Python's ElementTree over each `contents` file —
    /// `len(root.findall('entity'))`, `sum(len(e.findall('attribute')) for e in entities)`, likewise
    /// `relationship` and `fetchedProperty`, and `len(root.findall('configuration'))` — and cross-checked with
    /// `grep -c '<entity '` (etc.) on the same files.
    static let all: [FixtureModelCounts] = [
        .init(
            path: "JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld",
            contents: "JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld/Model.xcdatamodel/contents",
            entities: 2, attributes: 16, relationships: 4, fetchedProperties: 0, configurations: 2),
        // .xccurrentversion names the OLDER version, SampleModel.xcdatamodel (v1).
        .init(
            path: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld",
            contents: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel/contents",
            entities: 4, attributes: 12, relationships: 2, fetchedProperties: 0, configurations: 0),
        .init(
            path: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel",
            contents: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel/contents",
            entities: 4, attributes: 8, relationships: 2, fetchedProperties: 0, configurations: 0),
        // No .xccurrentversion; one version.
        .init(
            path: "fatbobman__ShareData_Demo_For_CoreDataWithCloudKit/ShareDataViaCloudKitAndCoreData/Model.xcdatamodeld",
            contents: "fatbobman__ShareData_Demo_For_CoreDataWithCloudKit/ShareDataViaCloudKitAndCoreData/Model.xcdatamodeld/Model.xcdatamodel/contents",
            entities: 2, attributes: 4, relationships: 2, fetchedProperties: 0, configurations: 1),
        .init(
            path: "magicalpanda__MagicalRecord/Tests/Fixtures/TestModel.xcdatamodeld",
            contents: "magicalpanda__MagicalRecord/Tests/Fixtures/TestModel.xcdatamodeld/TestModel.xcdatamodel/contents",
            entities: 12, attributes: 29, relationships: 9, fetchedProperties: 0, configurations: 0),
        // A path with spaces.
        .init(
            path: "marcshearer__Shortcut-Menu/Shortcut Menu Shared/Shortcut_Menu.xcdatamodeld",
            contents: "marcshearer__Shortcut-Menu/Shortcut Menu Shared/Shortcut_Menu.xcdatamodeld/Shortcut_Menu.xcdatamodel/contents",
            entities: 5, attributes: 58, relationships: 0, fetchedProperties: 0, configurations: 2),
        .init(
            path: "mihaelamj__cupertino-sample-code/coredata-linking-data-between-two-core-data-stores/CoreDataFetchedProperty/CoreDataFetchedProperty.xcdatamodeld",
            contents: "mihaelamj__cupertino-sample-code/coredata-linking-data-between-two-core-data-stores/CoreDataFetchedProperty/CoreDataFetchedProperty.xcdatamodeld/CoreDataFetchedProperty.xcdatamodel/contents",
            entities: 2, attributes: 5, relationships: 0, fetchedProperties: 1, configurations: 2),
        .init(
            path: "mihaelamj__cupertino-sample-code/coredata-showcase-app-data-in-spotlight/Tags/CoreDataStack/Tags.xcdatamodeld",
            contents: "mihaelamj__cupertino-sample-code/coredata-showcase-app-data-in-spotlight/Tags/CoreDataStack/Tags.xcdatamodeld/Tags.xcdatamodel/contents",
            entities: 4, attributes: 6, relationships: 6, fetchedProperties: 0, configurations: 0),
        .init(
            path: "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld",
            contents: "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld/Moody.xcdatamodel/contents",
            entities: 4, attributes: 14, relationships: 4, fetchedProperties: 0, configurations: 0),
        // Added with issue #12's fixtures; a path to a version folder is a version the bundle does not select.
        // Pre-Xcode-4 binary format (elements keyed archive, no contents), counted with plistlib: Tweet has 6
        // attributes and `user`, User 3 attributes and `status`.
        .init(
            path: "RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel",
            contents: "RestKit__RestKit/Examples/RKTwitterCoreData/Resources/RKTwitterCoreData.xcdatamodel/elements",
            entities: 2, attributes: 9, relationships: 2, fetchedProperties: 0, configurations: 0),
        .init(
            path: "3lvis__Sync/Tests/PropertyMapper/Models/Model.xcdatamodeld",
            contents: "3lvis__Sync/Tests/PropertyMapper/Models/Model.xcdatamodeld/Model.xcdatamodel/contents",
            entities: 12, attributes: 54, relationships: 12, fetchedProperties: 0, configurations: 0),
        .init(
            path: "3lvis__Sync/Tests/Sync/Models/151-ordered-many-to-many.xcdatamodeld",
            contents: "3lvis__Sync/Tests/Sync/Models/151-ordered-many-to-many.xcdatamodeld/151-many-to-many.xcdatamodel/contents",
            entities: 2, attributes: 4, relationships: 2, fetchedProperties: 0, configurations: 0),
        .init(
            path: "Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld",
            contents: "Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld/CartStorage.xcdatamodel/contents",
            entities: 3, attributes: 26, relationships: 4, fetchedProperties: 0, configurations: 0),
        .init(
            path: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel 2.xcdatamodel",
            contents: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel 2.xcdatamodel/contents",
            entities: 2, attributes: 4, relationships: 0, fetchedProperties: 0, configurations: 0),
        .init(
            path: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel 3.xcdatamodel",
            contents: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel 3.xcdatamodel/contents",
            entities: 2, attributes: 5, relationships: 0, fetchedProperties: 0, configurations: 0),
        .init(
            path: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld",
            contents: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel 4.xcdatamodel/contents",
            entities: 2, attributes: 4, relationships: 0, fetchedProperties: 0, configurations: 0),
        .init(
            path: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel.xcdatamodel",
            contents: "RestKit__RestKit/Tests/Models/VersionedModel.xcdatamodeld/VersionedModel.xcdatamodel/contents",
            entities: 2, attributes: 3, relationships: 0, fetchedProperties: 0, configurations: 0),
        .init(
            path: "bignerdranch__CoreDataStack/CoreDataStackTests/TestModel.xcdatamodeld",
            contents: "bignerdranch__CoreDataStack/CoreDataStackTests/TestModel.xcdatamodeld/TestModel 2.xcdatamodel/contents",
            entities: 3, attributes: 4, relationships: 4, fetchedProperties: 0, configurations: 0),
        .init(
            path: "bignerdranch__CoreDataStack/CoreDataStackTests/TestModel.xcdatamodeld/TestModel.xcdatamodel",
            contents: "bignerdranch__CoreDataStack/CoreDataStackTests/TestModel.xcdatamodeld/TestModel.xcdatamodel/contents",
            entities: 2, attributes: 3, relationships: 2, fetchedProperties: 0, configurations: 0),
        .init(
            path: "contentful__contentful-persistence.swift/Tests/ContentfulPersistenceTests/Test.xcdatamodeld",
            contents: "contentful__contentful-persistence.swift/Tests/ContentfulPersistenceTests/Test.xcdatamodeld/Test.xcdatamodel/contents",
            entities: 5, attributes: 36, relationships: 10, fetchedProperties: 0, configurations: 0),
        .init(
            path: "drewmccormack__ensembles/Examples/Idiomatic/Shared/Model.xcdatamodeld/Model_0.xcdatamodel",
            contents: "drewmccormack__ensembles/Examples/Idiomatic/Shared/Model.xcdatamodeld/Model_0.xcdatamodel/contents",
            entities: 2, attributes: 4, relationships: 2, fetchedProperties: 0, configurations: 0),
        .init(
            path: "drewmccormack__ensembles/Examples/Idiomatic/Shared/Model.xcdatamodeld",
            contents: "drewmccormack__ensembles/Examples/Idiomatic/Shared/Model.xcdatamodeld/Model_1.xcdatamodel/contents",
            entities: 3, attributes: 6, relationships: 3, fetchedProperties: 0, configurations: 0),
        .init(
            path: "drewmccormack__ensembles/Framework/Resources/CDEEventStoreModel.xcdatamodeld/CDEEventStoreModel_0.xcdatamodel",
            contents: "drewmccormack__ensembles/Framework/Resources/CDEEventStoreModel.xcdatamodeld/CDEEventStoreModel_0.xcdatamodel/contents",
            entities: 4, attributes: 12, relationships: 8, fetchedProperties: 0, configurations: 0),
        .init(
            path: "drewmccormack__ensembles/Framework/Resources/CDEEventStoreModel.xcdatamodeld/CDEEventStoreModel_1.xcdatamodel",
            contents: "drewmccormack__ensembles/Framework/Resources/CDEEventStoreModel.xcdatamodeld/CDEEventStoreModel_1.xcdatamodel/contents",
            entities: 4, attributes: 13, relationships: 8, fetchedProperties: 0, configurations: 0),
        .init(
            path: "drewmccormack__ensembles/Framework/Resources/CDEEventStoreModel.xcdatamodeld",
            contents: "drewmccormack__ensembles/Framework/Resources/CDEEventStoreModel.xcdatamodeld/CDEEventStoreModel_2.xcdatamodel/contents",
            entities: 5, attributes: 14, relationships: 10, fetchedProperties: 0, configurations: 0),
        .init(
            path: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData.xcdatamodel",
            contents: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData.xcdatamodel/contents",
            entities: 23, attributes: 128, relationships: 106, fetchedProperties: 0, configurations: 0),
        .init(
            path: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.1.0.xcdatamodel",
            contents: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.1.0.xcdatamodel/contents",
            entities: 23, attributes: 132, relationships: 106, fetchedProperties: 0, configurations: 0),
        .init(
            path: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.2.0.xcdatamodel",
            contents: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData1.2.0.xcdatamodel/contents",
            entities: 23, attributes: 137, relationships: 106, fetchedProperties: 0, configurations: 0),
        .init(
            path: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.0.xcdatamodel",
            contents: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.0.xcdatamodel/contents",
            entities: 23, attributes: 161, relationships: 106, fetchedProperties: 0, configurations: 0),
        .init(
            path: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.1.xcdatamodel",
            contents: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.1.xcdatamodel/contents",
            entities: 23, attributes: 162, relationships: 106, fetchedProperties: 0, configurations: 0),
        .init(
            path: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld",
            contents: "richardpiazza__XCServerCoreData/Resources/XCServerCoreData.xcdatamodeld/XCServerCoreData2.0.2.xcdatamodel/contents",
            entities: 23, attributes: 165, relationships: 106, fetchedProperties: 0, configurations: 0),
    ]
}

/// Every real Core Data model under `../shared/fixtures/coredata` loads, with exactly what its XML declares.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage))
struct ModelFixtureTests {
    @Test(arguments: FixtureModelCounts.all)
    func loadsWithExactCounts(_ fixture: FixtureModelCounts) throws {
        let model = try ModelLoader.load(at: Fixtures.url(fixture.path))
        #expect(model.entities.count == fixture.entities)
        #expect(model.entities.map(\.attributes.count).reduce(0, +) == fixture.attributes)
        #expect(model.entities.map(\.relationships.count).reduce(0, +) == fixture.relationships)
        #expect(model.entities.map(\.fetchedProperties.count).reduce(0, +) == fixture.fetchedProperties)
        #expect(model.configurations.count == fixture.configurations)
        // The bundle resolved to the version the table says, and errors would name that file.
        #expect(Set(model.entitySources.values) == [Fixtures.url(fixture.contents).path])
        for entity in model.entities {
            #expect(entity.versionHash.count == 32)
        }
    }

    /// The table above covers every model file in the fixtures folder, so a new fixture cannot go untested.
    @Test func tableCoversEveryFixtureModel() throws {
        let enumerator = try #require(FileManager.default.enumerator(atPath: Fixtures.root.path))
        var found: Set<String> = []
        while let relative = enumerator.nextObject() as? String {
            if ["contents", "elements"].contains((relative as NSString).lastPathComponent), relative.contains(".xcdatamodel/") {
                found.insert(relative)
            }
        }
        #expect(found == Set(FixtureModelCounts.all.map(\.contents)))
    }

    // MARK: - Particular models

    @Test func sampleModelBundleLoadsTheOlderCurrentVersion() throws {
        let model = try ModelLoader.load(
            at: Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"))
        #expect(model.entity(named: "ExpensiveSportCar") != nil)
        #expect(model.entity(named: "LuxuryCar") == nil)
        #expect(model.versionIdentifiers == ["1"])
        let car = try #require(model.entity(named: "Car"))
        #expect(car.descendantNames == ["SportCar", "ExpensiveSportCar"])
        #expect(car.attribute(named: "color")?.type == .transformable)
        #expect(car.attribute(named: "color")?.valueTransformerName == "ColorTransformer")
        #expect(car.attribute(named: "currentDrivingSpeed")?.isTransient == true)
        #expect(car.uniquenessConstraints == [["numberPlate"]])
        let person = try #require(model.entity(named: "Person"))
        #expect(person.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(person.attribute(named: "isDriving")?.defaultValue == .bool(false))
    }

    @Test func sampleModelVersion2LoadedDirectly() throws {
        let model = try ModelLoader.load(
            at: Fixtures.url(
                "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"))
        let luxury = try #require(model.entity(named: "LuxuryCar"))
        #expect(luxury.renamingIdentifier == "ExpensiveSportCar")
        #expect(luxury.parentName == "SportCar")
        #expect(luxury.rootName == "Car")
        #expect(model.entity(named: "ExpensiveSportCar") == nil)
        #expect(model.versionIdentifiers == ["2"])
        #expect(model.entities.map(\.name) == ["Car", "SportCar", "LuxuryCar", "Person"])
        #expect(
            model.entity(named: "Car")?.indexes
                == [IndexDescription(name: "byMakerAndNumberPlate", properties: ["maker", "numberPlate"])])
    }

    @Test func bundleWithoutCurrentVersionUsesItsOnlyVersion() throws {
        let bundle = Fixtures.url(
            "fatbobman__ShareData_Demo_For_CoreDataWithCloudKit/ShareDataViaCloudKitAndCoreData/Model.xcdatamodeld")
        #expect(!FileManager.default.fileExists(atPath: bundle.appendingPathComponent(".xccurrentversion").path))
        let model = try ModelLoader.load(at: bundle)
        #expect(model.configurations == [ConfigurationDescription(name: "Private", entityNames: ["Memo", "Note"])])
        #expect(try model.entities(inConfiguration: "Private").map(\.name) == ["Memo", "Note"])
        let memos = try #require(model.entity(named: "Note")?.relationship(named: "memos"))
        #expect(memos.isToMany && memos.inverseName == "note" && memos.destinationEntityName == "Memo")
    }

    @Test func pathWithSpaces() throws {
        let model = try ModelLoader.load(
            at: Fixtures.url("marcshearer__Shortcut-Menu/Shortcut Menu Shared/Shortcut_Menu.xcdatamodeld"))
        #expect(model.entitySources["Shortcut"]?.contains("Shortcut Menu Shared") == true)
        #expect(
            model.configurations == [
                ConfigurationDescription(
                    name: "Cloud", entityNames: ["CloudSection", "CloudShortcut", "Replacement"],
                    userInfo: ["usedWithCloudKit": "YES"]),
                ConfigurationDescription(name: "Local", entityNames: ["Shortcut", "Section"]),
            ])
        let sequence = try #require(model.entity(named: "CloudShortcut")?.attribute(named: "sequence64"))
        #expect(sequence.type == .integer64 && !sequence.isOptional && sequence.defaultValue == .integer(0))
        #expect(model.entity(named: "Replacement")?.attribute(named: "expiry")?.defaultValue == .double(0))
    }

    @Test func applesFetchedPropertySample() throws {
        let model = try ModelLoader.load(
            at: Fixtures.url(
                "mihaelamj__cupertino-sample-code/coredata-linking-data-between-two-core-data-stores/CoreDataFetchedProperty/CoreDataFetchedProperty.xcdatamodeld"))
        let feedbackList = try #require(model.entity(named: "Book")?.fetchedProperty(named: "feedbackList"))
        #expect(feedbackList.destinationEntityName == "Feedback")
        #expect(feedbackList.predicateFormat == "bookUUID == $FETCH_SOURCE.uuid")
        #expect(model.configurations.map(\.name) == ["Book", "Feedback"])
        #expect(try model.entities(inConfiguration: "Book").map(\.name) == ["Book"])
        #expect(try model.entities(inConfiguration: "Feedback").map(\.name) == ["Feedback"])
        let uuid = try #require(model.entity(named: "Book")?.attribute(named: "uuid"))
        #expect(uuid.type == .uuid && !uuid.isOptional)
        #expect(model.entity(named: "Feedback")?.attribute(named: "rating")?.defaultValue == .integer(0))
    }

    @Test func tagsSampleHasManyToManyAndDerivedAttribute() throws {
        let model = try ModelLoader.load(
            at: Fixtures.url(
                "mihaelamj__cupertino-sample-code/coredata-showcase-app-data-in-spotlight/Tags/CoreDataStack/Tags.xcdatamodeld"))
        let tags = try #require(model.entity(named: "Photo")?.relationship(named: "tags"))
        let photos = try #require(model.entity(named: "Tag")?.relationship(named: "photos"))
        #expect(tags.isToMany && photos.isToMany && tags.inverseName == "photos" && photos.inverseName == "tags")
        #expect(model.entity(named: "Tag")?.attribute(named: "photoCount")?.derivationExpression == "photos.@count")
        #expect(model.entity(named: "PhotoData")?.attribute(named: "data")?.allowsExternalBinaryDataStorage == true)
        #expect(model.entity(named: "Tag")?.uniquenessConstraints == [["name"]])
    }

    @Test func moodyHasAbstractParentAndCompoundIndexes() throws {
        let model = try ModelLoader.load(at: Fixtures.url("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"))
        let region = try #require(model.entity(named: "GeographicRegion"))
        #expect(region.isAbstract)
        #expect(region.subentityNames == ["Continent", "Country"])
        #expect(region.indexes == [IndexDescription(name: "compound_1", properties: ["markedForDeletionDate", "updatedAt"])])
        #expect(region.uniquenessConstraints == [["numericISO3166Code", "uniquenessDummy"]])
        let country = try #require(model.entity(named: "Country"))
        #expect(country.allAttributes.count == 5 && country.attributes.isEmpty)
        #expect(country.allUniquenessConstraints == [["numericISO3166Code", "uniquenessDummy"]])
        let mood = try #require(model.entity(named: "Mood"))
        #expect(
            mood.indexes
                == [IndexDescription(name: "compound_1", properties: ["markedForRemoteDeletion", "markedForDeletionDate", "date"])])
        #expect(mood.attribute(named: "remoteIdentifier")?.isIndexed == true)
        #expect(mood.attribute(named: "colors")?.valueTransformerName == "ColorsTransformer")
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test func coreStoreModelHasSelfReferencesInTwoConfigurations() throws {
        let model = try ModelLoader.load(at: Fixtures.url("JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld"))
        let first = try #require(model.entity(named: "TestEntity1AAA"))
        #expect(first.className == ".TestEntity1")
        #expect(first.relationship(named: "testToOne")?.destinationEntityName == "TestEntity1AAA")
        #expect(model.entity(named: "TestEntity2")?.relationship(named: "testToManyOrdered")?.isOrdered == true)
        #expect(first.attribute(named: "testDecimal")?.type == .decimal)
        #expect(model.configurations.map(\.name) == ["Config1", "Config2"])
    }

    @Test func magicalRecordModelKeepsUserInfoAndDefaults() throws {
        let model = try ModelLoader.load(at: Fixtures.url("magicalpanda__MagicalRecord/Tests/Fixtures/TestModel.xcdatamodeld"))
        let mapped = try #require(model.entity(named: "MappedEntity"))
        #expect(mapped.userInfo == ["relatedByAttribute": "mapped"])
        #expect(mapped.attribute(named: "testMappedEntityID")?.userInfo == ["mappedKeyName": "id"])
        let secondary = try #require(model.entity(named: "SingleEntityRelatedToMappedEntityWithSecondaryMappings"))
        #expect(secondary.attribute(named: "notImportedAttribute")?.defaultValue == .bool(true))
        #expect(secondary.attribute(named: "secondaryMappedAttribute")?.userInfo.count == 3)
        let relationship = try #require(secondary.relationship(named: "mappedRelationship"))
        #expect(relationship.inverseName == nil && relationship.minCount == 1 && relationship.maxCount == 1)
        #expect(relationship.deleteRule == .cascade && relationship.userInfo.count == 3)
        let plain = try #require(model.entity(named: "SingleEntityWithNoRelationships"))
        #expect(plain.attribute(named: "nullTestAttribute")?.defaultValue == .integer(100))
        #expect(plain.attribute(named: "decimalTestAttribute")?.defaultValue == .decimal(0))
        #expect(
            plain.attribute(named: "notInJsonAttribute")?.defaultValue == .string("Set From Core Data Model Editor"))
        #expect(model.entity(named: "ConcreteRelatedEntity")?.rootName == "AbstractRelatedEntity")
    }
}

/// The project's own schema, `Schemas/Messenger.xcdatamodeld`, that the demo, tests and benchmarks use.
@Suite struct MessengerSchemaTests {
    static let url = Repository.url("Schemas/Messenger.xcdatamodeld")

    @Test func loadsWithItsThreeConfigurations() throws {
        let model = try ModelLoader.load(at: Self.url)
        #expect(model.entities.map(\.name) == ["Account", "Avatar", "Chat", "Draft", "LinkPreview", "Message", "Setting"])
        // Xcode writes configurations sorted by name.
        #expect(model.configurationNames == ["Default", "Cache", "Cloud", "Local"])
        #expect(try model.entities(inConfiguration: "Cloud").map(\.name) == ["Account", "Chat", "Message"])
        #expect(try model.entities(inConfiguration: "Local").map(\.name) == ["Draft", "Setting"])
        #expect(try model.entities(inConfiguration: "Cache").map(\.name) == ["Avatar", "LinkPreview"])
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test func everyEntityIsInExactlyOneConfiguration() throws {
        let model = try ModelLoader.load(at: Self.url)
        for entity in model.entities {
            #expect(model.configurations(containing: entity.name).count == 1, "\(entity.name)")
        }
    }

    @Test func fetchedPropertiesCrossConfigurations() throws {
        let model = try ModelLoader.load(at: Self.url)
        let expected: [(entity: String, property: String, destination: String, predicate: String)] = [
            ("Account", "avatar", "Avatar", "accountID == $FETCH_SOURCE.accountID"),
            ("Account", "drafts", "Draft", "accountID == $FETCH_SOURCE.accountID"),
            ("Message", "preview", "LinkPreview", "url == $FETCH_SOURCE.link"),
        ]
        for item in expected {
            let fetched = try #require(model.entity(named: item.entity)?.fetchedProperty(named: item.property))
            #expect(fetched.destinationEntityName == item.destination)
            #expect(fetched.predicateFormat == item.predicate)
            #expect(
                model.configurations(containing: item.entity) != model.configurations(containing: item.destination),
                "\(item.entity).\(item.property) should cross stores")
        }
    }

    @Test func relationshipsStayInsideCloud() throws {
        let model = try ModelLoader.load(at: Self.url)
        for entity in model.entities {
            for relationship in entity.relationships {
                #expect(
                    model.configurations(containing: entity.name)
                        == model.configurations(containing: relationship.destinationEntityName))
            }
        }
        let chats = try #require(model.entity(named: "Account")?.relationship(named: "chats"))
        #expect(chats.isToMany && chats.deleteRule == .cascade && chats.inverseName == "owner")
        let messages = try #require(model.entity(named: "Chat")?.relationship(named: "messages"))
        #expect(messages.isToMany && !messages.isOrdered && messages.deleteRule == .cascade)
        let chat = try #require(model.entity(named: "Message")?.relationship(named: "chat"))
        #expect(!chat.isToMany && chat.deleteRule == .nullify && chat.inverseName == "messages")
    }

    @Test func attributesAndIndexes() throws {
        let model = try ModelLoader.load(at: Self.url)
        let message = try #require(model.entity(named: "Message"))
        #expect(message.attribute(named: "messageID")?.isOptional == false)
        #expect(message.attribute(named: "isRead")?.defaultValue == .bool(false))
        #expect(message.attribute(named: "priority")?.type == .integer16)
        #expect(message.attribute(named: "priority")?.defaultValue == .integer(0))
        #expect(message.attribute(named: "sequence")?.type == .integer64)
        #expect(message.attribute(named: "senderID")?.type == .uuid)
        #expect(message.attribute(named: "attachment")?.type == .binary)
        #expect(message.indexes.map(\.name) == ["byMessageID", "bySentAt"])
        #expect(model.entity(named: "Account")?.attribute(named: "isActive")?.defaultValue == .bool(true))
        #expect(model.entity(named: "Account")?.uniquenessConstraints == [["accountID"]])
        #expect(model.entity(named: "Setting")?.uniquenessConstraints == [["key"]])
        #expect(model.entity(named: "LinkPreview")?.attribute(named: "imageURL")?.type == .uri)
        #expect(model.entity(named: "LinkPreview")?.attribute(named: "price")?.type == .decimal)
        #expect(model.entity(named: "LinkPreview")?.indexes.map(\.name) == ["byURL"])
        #expect(model.entity(named: "Account")?.entityNumber == 1)
        #expect(model.entity(named: "Setting")?.entityNumber == 7)
    }
}

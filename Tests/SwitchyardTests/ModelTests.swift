import Foundation
import Testing
@testable import Switchyard

// MARK: - Numbering and inheritance

/// Models built in code: numbering, inheritance, configurations and merging.
@Suite struct ModelTests {
    @Test func entitiesAreNumberedAsCoreDataNumbersThem() throws {
        // Declared out of order on purpose: numbering depends on names and the tree only.
        let model = try ObjectModel(entities: [
            EntityDescription(name: "Vehicle"),
            EntityDescription(name: "Parrot", parent: "Bird"),
            EntityDescription(name: "Cat", parent: "Animal"),
            EntityDescription(name: "Bike", parent: "Vehicle"),
            EntityDescription(name: "Bird", parent: "Animal"),
            EntityDescription(name: "Animal", isAbstract: true),
        ])
        // Roots by name, each followed by its descendants depth-first, siblings by name.
        #expect(model.entities.map(\.name) == ["Animal", "Bird", "Parrot", "Cat", "Vehicle", "Bike"])
        #expect(model.entities.map(\.entityNumber) == [1, 2, 3, 4, 5, 6])
        #expect(model.entity(number: 3)?.name == "Parrot")
        #expect(model.entity(number: 0) == nil && model.entity(number: 7) == nil)
        let animal = try #require(model.entity(named: "Animal"))
        #expect(animal.subentityNames == ["Bird", "Cat"])
        #expect(animal.descendantNames == ["Bird", "Parrot", "Cat"])
        #expect(model.entity(named: "Parrot")?.rootName == "Animal")
        #expect(model.entity("Parrot", isKindOf: "Animal") && !model.entity("Parrot", isKindOf: "Vehicle"))
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage), arguments: [
        // Z_PRIMARYKEY of SampleModel_V1.sqlite says the same: Car 1, SportCar 2, ExpensiveSportCar 3, Person 4.
        ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld",
         ["Car", "SportCar", "ExpensiveSportCar", "Person"]),
        ("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld", ["GeographicRegion", "Continent", "Country", "Mood"]),
    ])
    func realModelsAreNumberedAsCoreDataNumberedThem(path: String, expected: [String]) throws {
        let model = try ModelLoader.load(at: Fixtures.url(path))
        #expect(model.entities.map(\.name) == expected)
        for (index, name) in expected.enumerated() {
            #expect(model.entity(named: name)?.entityNumber == index + 1)
        }
    }

    @Test func inheritanceIsFlattened() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Car",
                attributes: [AttributeDescription(name: "plate", type: .string, isOptional: false)],
                relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")],
                uniquenessConstraints: [["plate"]]),
            EntityDescription(
                name: "SportCar", parent: "Car", attributes: [AttributeDescription(name: "topSpeed", type: .double)]),
            EntityDescription(
                name: "ExpensiveSportCar", parent: "SportCar",
                attributes: [AttributeDescription(name: "isLimitedEdition", type: .boolean)],
                fetchedProperties: [
                    FetchedPropertyDescription(name: "twins", destination: "Car", predicate: "plate == $FETCH_SOURCE.plate")
                ]),
            EntityDescription(
                name: "Person",
                relationships: [
                    RelationshipDescription(name: "cars", destination: "Car", inverse: "owner", isToMany: true)
                ]),
        ])
        let expensive = try #require(model.entity(named: "ExpensiveSportCar"))
        #expect(expensive.attributes.map(\.name) == ["isLimitedEdition"])
        #expect(expensive.allAttributes.map(\.name) == ["plate", "topSpeed", "isLimitedEdition"])
        #expect(expensive.allRelationships.map(\.name) == ["owner"])
        #expect(expensive.allUniquenessConstraints == [["plate"]])
        #expect(expensive.persistentToOneRelationships.map(\.name) == ["owner"])
        #expect(expensive.rootName == "Car")
        #expect(model.ancestors(of: expensive).map(\.name) == ["SportCar", "Car"])
        #expect(model.entity(named: "Car")?.selfAndDescendantNames == ["Car", "SportCar", "ExpensiveSportCar"])
        #expect(model.entity(named: "SportCar")?.fetchedProperty(named: "twins") == nil)
        #expect(expensive.fetchedProperty(named: "twins")?.destinationEntityName == "Car")
    }

    @Test func redeclaringAnInheritedPropertyIsAnError() throws {
        #expect(throws: ModelError.duplicateProperty(file: "model built in code", entity: "B", property: "x")) {
            try ObjectModel(entities: [
                EntityDescription(name: "A", attributes: [AttributeDescription(name: "x", type: .string)]),
                EntityDescription(name: "B", parent: "A", attributes: [AttributeDescription(name: "x", type: .string)]),
            ])
        }
    }

    @Test func missingParentAndCyclesAreErrors() throws {
        #expect(throws: ModelError.missingParentEntity(file: "m", entity: "A", parent: "Ghost")) {
            try ObjectModel(entities: [EntityDescription(name: "A", parent: "Ghost")], source: "m")
        }
        #expect(throws: ModelError.self) {
            try ObjectModel(entities: [EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A")])
        }
    }

    // MARK: - Merge

    @Test func mergesTwoModels() throws {
        let first = try ObjectModel(
            entities: [
                EntityDescription(name: "Chat"),
                EntityDescription(name: "Account"),
            ],
            configurations: [ConfigurationDescription(name: "Cloud", entityNames: ["Account", "Chat"])],
            versionIdentifiers: ["app"], source: "App.xcdatamodel")
        let second = try ObjectModel(
            entities: [EntityDescription(name: "Profile"), EntityDescription(name: "Avatar")],
            configurations: [
                ConfigurationDescription(name: "Cache", entityNames: ["Avatar"]),
                ConfigurationDescription(name: "Cloud", entityNames: ["Profile"]),
            ],
            versionIdentifiers: ["plugin"], source: "Plugin.xcdatamodel")
        let merged = try ObjectModel.merged([first, second])
        // Numbers are assigned afresh over the whole merged model.
        #expect(merged.entities.map(\.name) == ["Account", "Avatar", "Chat", "Profile"])
        #expect(merged.entities.map(\.entityNumber) == [1, 2, 3, 4])
        // Configurations of the same name are united.
        #expect(
            merged.configurations == [
                ConfigurationDescription(name: "Cloud", entityNames: ["Account", "Chat", "Profile"]),
                ConfigurationDescription(name: "Cache", entityNames: ["Avatar"]),
            ])
        #expect(merged.versionIdentifiers == ["app", "plugin"])
        #expect(
            merged.entitySources == [
                "Account": "App.xcdatamodel", "Chat": "App.xcdatamodel", "Avatar": "Plugin.xcdatamodel",
                "Profile": "Plugin.xcdatamodel",
            ])
        // Merging does not change an entity's hash: it depends on the entity alone.
        #expect(merged.entity(named: "Avatar")?.versionHash == second.entity(named: "Avatar")?.versionHash)
    }

    @Test func duplicateEntityNamesBothSources() throws {
        let first = try ObjectModel(entities: [EntityDescription(name: "Account")], source: "/models/App.xcdatamodel/contents")
        let second = try ObjectModel(
            entities: [EntityDescription(name: "Account")], source: "/models/Plugin.xcdatamodel/contents")
        let expected = ModelError.duplicateEntity(
            name: "Account", firstSource: "/models/App.xcdatamodel/contents",
            secondSource: "/models/Plugin.xcdatamodel/contents")
        #expect(throws: expected) { try ObjectModel.merged([first, second]) }
        #expect(expected.description.contains("/models/App.xcdatamodel/contents"))
        #expect(expected.description.contains("/models/Plugin.xcdatamodel/contents"))
    }

    // MARK: - Configurations

    @Test func relationshipAcrossConfigurationsIsAnError() throws {
        let entities = [
            EntityDescription(
                name: "Account",
                relationships: [RelationshipDescription(name: "avatar", destination: "Avatar", inverse: "account")]),
            EntityDescription(
                name: "Avatar",
                relationships: [RelationshipDescription(name: "account", destination: "Account", inverse: "avatar")]),
        ]
        let configurations = [
            ConfigurationDescription(name: "Cloud", entityNames: ["Account"]),
            ConfigurationDescription(name: "Cache", entityNames: ["Avatar"]),
        ]
        do {
            _ = try ObjectModel(entities: entities, configurations: configurations, source: "Messenger.xcdatamodel")
            Issue.record("a relationship between Cloud and Cache must be rejected")
        } catch let error as ModelError {
            #expect(
                error
                    == .crossConfigurationRelationship(
                        file: "Messenger.xcdatamodel", entity: "Account", relationship: "avatar",
                        entityConfigurations: ["Cloud"], destination: "Avatar", destinationConfigurations: ["Cache"]))
            let text = error.description
            for part in ["Account.avatar", "Avatar", "Cloud", "Cache", "fetched property", "Messenger.xcdatamodel"] {
                #expect(text.contains(part), "description should mention \(part): \(text)")
            }
        }
    }

    @Test func relationshipIsFineWhenSomeConfigurationHoldsBothEnds() throws {
        // An entity may be in several configurations; one shared store is enough.
        let model = try ObjectModel(
            entities: [
                EntityDescription(name: "A", relationships: [RelationshipDescription(name: "b", destination: "B")]),
                EntityDescription(name: "B"),
            ],
            configurations: [
                ConfigurationDescription(name: "One", entityNames: ["A", "B"]),
                ConfigurationDescription(name: "Two", entityNames: ["A"]),
            ])
        #expect(model.configurations(containing: "A") == ["One", "Two"])
        #expect(try model.entities(inConfiguration: "Two").map(\.name) == ["A"])
    }

    @Test func fetchedPropertyAcrossConfigurationsIsFine() throws {
        let model = try ObjectModel(
            entities: [
                EntityDescription(
                    name: "Account",
                    attributes: [AttributeDescription(name: "accountID", type: .string)],
                    fetchedProperties: [
                        FetchedPropertyDescription(
                            name: "avatar", destination: "Avatar", predicate: "accountID == $FETCH_SOURCE.accountID")
                    ]),
                EntityDescription(name: "Avatar", attributes: [AttributeDescription(name: "accountID", type: .string)]),
            ],
            configurations: [
                ConfigurationDescription(name: "Cloud", entityNames: ["Account"]),
                ConfigurationDescription(name: "Cache", entityNames: ["Avatar"]),
            ])
        #expect(model.configurationNames == ["Default", "Cloud", "Cache"])
        #expect(try model.entities(inConfiguration: "Default").count == 2)
    }

    @Test func unknownConfiguration() throws {
        let model = try ObjectModel(
            entities: [EntityDescription(name: "A")],
            configurations: [ConfigurationDescription(name: "Cloud", entityNames: ["A"])])
        let expected = ModelError.unknownConfiguration(name: "Clud", available: ["Default", "Cloud"])
        #expect(throws: expected) { try model.entities(inConfiguration: "Clud") }
        #expect(expected.description.contains("Clud") && expected.description.contains("Cloud"))
    }

    @Test func configurationNamingAnUnknownEntity() throws {
        #expect(throws: ModelError.unknownConfigurationEntity(file: "m", configuration: "Cloud", entity: "Ghost")) {
            try ObjectModel(
                entities: [EntityDescription(name: "A")],
                configurations: [ConfigurationDescription(name: "Cloud", entityNames: ["A", "Ghost"])], source: "m")
        }
    }
}

// MARK: - Version hashes

/// One change to the `Person` entity of `VersionHashTests.baseEntities`.
struct HashChange: Sendable, CustomTestStringConvertible {
    let label: String
    /// The changed entity's name afterwards (a rename changes it).
    var entity = "Person"
    let apply: @Sendable (inout [String: EntityDescription]) -> Void

    var testDescription: String { label }

    static func person(_ label: String, _ change: @escaping @Sendable (inout EntityDescription) -> Void) -> HashChange {
        HashChange(label: label) { entities in change(&entities["Person"]!) }
    }
}

@Suite struct VersionHashTests {
    /// Person has no incoming relationships, so it can be renamed without touching other entities.
    static func baseEntities() -> [String: EntityDescription] {
        let person = EntityDescription(
            name: "Person", className: "PersonMO",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "age", type: .integer16, defaultValue: .integer(0)),
            ],
            relationships: [
                RelationshipDescription(name: "favorite", destination: "Car"),
                RelationshipDescription(name: "visits", destination: "Garage", isToMany: true),
            ])
        return [
            "Person": person,
            "Car": EntityDescription(name: "Car", attributes: [AttributeDescription(name: "plate", type: .string)]),
            "Garage": EntityDescription(name: "Garage", attributes: [AttributeDescription(name: "city", type: .string)]),
            "Being": EntityDescription(name: "Being", isAbstract: true),
        ]
    }

    static func hash(of name: String, in entities: [String: EntityDescription]) throws -> Data {
        let model = try ObjectModel(entities: Array(entities.values))
        return try #require(model.entity(named: name)?.versionHash)
    }

    @Test func hashIs32BytesAndStable() throws {
        let first = try ObjectModel(entities: Array(Self.baseEntities().values))
        let second = try ObjectModel(entities: Array(Self.baseEntities().values).reversed())
        for entity in first.entities {
            #expect(entity.versionHash.count == 32)
            #expect(second.entity(named: entity.name)?.versionHash == entity.versionHash)
        }
        #expect(Set(first.entities.map(\.versionHash)).count == first.entities.count)
        // Pinned: stores record these hashes, so an accidental change to the algorithm would make every
        // existing store look incompatible. Change this value only together with a deliberate migration story.
        let car = try #require(first.entity(named: "Car"))
        #expect(car.versionHash.hexString == Self.pinnedCarHash)
    }

    /// Recomputed independently with Python's hashlib from DESIGN.md's inputs:
    /// sha256("entity\0Car\0" + "\0abstract=0\0" + sha256("attribute\0plate\0optional=1\0transient=0\0modifier=\0type=String")
    /// + "\0modifier=").
    static let pinnedCarHash = "e972af643159f83dbf182a28f92e2c53e8a78066a15f701eca7d2ccbaec44611"

    static let changing: [HashChange] = [
        HashChange(label: "entity name", entity: "Human") { entities in
            var person = entities.removeValue(forKey: "Person")!
            person.name = "Human"
            entities["Human"] = person
        },
        .person("entity parent") { $0.parentName = "Being" },
        .person("entity abstract") { $0.isAbstract = true },
        .person("entity version hash modifier") { $0.versionHashModifier = "2" },
        .person("attribute name") { $0.attributes[0].name = "fullName" },
        .person("attribute type") { $0.attributes[1].type = .integer32 },
        .person("attribute optional") { $0.attributes[0].isOptional = true },
        .person("attribute transient") { $0.attributes[1].isTransient = true },
        .person("attribute version hash modifier") { $0.attributes[1].versionHashModifier = "2" },
        .person("attribute added") { $0.attributes.append(AttributeDescription(name: "email", type: .string)) },
        .person("attribute removed") { $0.attributes.removeLast() },
        .person("relationship name") { $0.relationships[0].name = "preferred" },
        .person("relationship destination") { $0.relationships[0].destinationEntityName = "Garage" },
        .person("relationship to-many") {
            $0.relationships[0].isToMany = true
            $0.relationships[0].maxCount = 0
        },
        .person("relationship ordered") { $0.relationships[1].isOrdered = true },
        .person("relationship optional") { $0.relationships[0].isOptional = false },
        .person("relationship transient") { $0.relationships[0].isTransient = true },
        .person("relationship min count") { $0.relationships[1].minCount = 1 },
        .person("relationship max count") { $0.relationships[1].maxCount = 5 },
        .person("relationship version hash modifier") { $0.relationships[1].versionHashModifier = "2" },
        HashChange(label: "relationship inverse") { entities in
            entities["Person"]!.relationships[1].inverseName = "visitor"
            entities["Garage"]!.relationships.append(
                RelationshipDescription(name: "visitor", destination: "Person", inverse: "visits"))
        },
    ]

    static let neutral: [HashChange] = [
        .person("attribute default value") { $0.attributes[1].defaultValue = .integer(42) },
        .person("attribute default removed") { $0.attributes[1].defaultValue = nil },
        .person("attribute renaming identifier") { $0.attributes[0].renamingIdentifier = "fullName" },
        .person("attribute userInfo") { $0.attributes[0].userInfo = ["storesplit.key": "name"] },
        .person("entity renaming identifier") { $0.renamingIdentifier = "Human" },
        .person("entity userInfo") { $0.userInfo = ["k": "v"] },
        .person("entity class name") { $0.className = "OtherMO" },
        .person("relationship delete rule") { $0.relationships[0].deleteRule = .cascade },
        .person("relationship renaming identifier") { $0.relationships[0].renamingIdentifier = "pick" },
        .person("relationship userInfo") { $0.relationships[0].userInfo = ["k": "v"] },
        .person("fetched property added") {
            $0.fetchedProperties.append(
                FetchedPropertyDescription(name: "garages", destination: "Garage", predicate: "city == $FETCH_SOURCE.name"))
        },
        .person("declaration order") { $0.attributes.reverse() },
    ]

    @Test(arguments: changing)
    func hashChangesWith(_ change: HashChange) throws {
        var entities = Self.baseEntities()
        let before = try Self.hash(of: "Person", in: entities)
        change.apply(&entities)
        #expect(try Self.hash(of: change.entity, in: entities) != before)
    }

    @Test(arguments: neutral)
    func hashDoesNotChangeWith(_ change: HashChange) throws {
        var entities = Self.baseEntities()
        let before = try Self.hash(of: "Person", in: entities)
        change.apply(&entities)
        #expect(try Self.hash(of: change.entity, in: entities) == before)
    }

    @Test func childHashFollowsParentHash() throws {
        var entities = Self.baseEntities()
        entities["Student"] = EntityDescription(name: "Student", parent: "Person")
        let before = try Self.hash(of: "Student", in: entities)
        entities["Person"]!.attributes[0].type = .uri
        #expect(try Self.hash(of: "Student", in: entities) != before)
    }
}

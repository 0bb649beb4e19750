import Foundation
import Testing
@testable import Switchyard

/// The structural comparison behind compatibility reports, on models built in code and on real Core Data stores.
@Suite struct ModelDiffTests {
    static let sampleModelDirectory = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"

    static func sampleModel(version: Int) throws -> ObjectModel {
        let name = version == 1 ? "SampleModel.xcdatamodel" : "SampleModel2.xcdatamodel"
        return try ModelLoader.load(at: Fixtures.url("\(sampleModelDirectory)/SampleModel.xcdatamodeld/\(name)"))
    }

    static func sampleStore(_ name: String) -> URL {
        Fixtures.url("\(sampleModelDirectory)/Fixtures/\(name)")
    }

    @Test func identicalModelsReportIdentical() throws {
        let model = try MigrationFixtures.model()
        let report = ModelDiff.compare(from: model, to: model, configuration: "Default")
        #expect(report.verdict == .identical)
        #expect(report.entities.map(\.kind) == [.unchanged, .unchanged, .unchanged])
    }

    @Test func eachChangeIsClassified() throws {
        let old = try MigrationFixtures.model()
        let new = try MigrationFixtures.model { e in
            e["Item"]!.attributes = [
                AttributeDescription(name: "heading", type: .string, renamingIdentifier: "title"),
                AttributeDescription(name: "count", type: .integer64, isOptional: false),
                AttributeDescription(name: "score", type: .double, isOptional: false, defaultValue: .double(0)),
            ]
            var label = e.removeValue(forKey: "Tag")!
            label.name = "Label"
            label.renamingIdentifier = "Tag"
            e["Label"] = label
            e["Owner"]!.attributes[0].isOptional = false
            e["Owner"]!.attributes[0].defaultValue = "?"
            e["Badge"] = EntityDescription(name: "Badge")
        }
        let report = ModelDiff.compare(from: old, to: new, configuration: "Default")
        let byName = Dictionary(uniqueKeysWithValues: report.entities.map { ($0.name, $0) })
        #expect(byName["Badge"]?.kind == .added)
        #expect(byName["Label"]?.kind == .renamed && byName["Label"]?.oldName == "Tag")
        let item = try #require(byName["Item"])
        let kinds = Dictionary(uniqueKeysWithValues: item.properties.map { ("\($0.name):\($0.kind.rawValue)", $0.isInferable) })
        #expect(kinds["heading:renamed"] == true)
        #expect(kinds["count:becameRequired"] == false)   // no default
        #expect(kinds["score:added"] == true)
        #expect(kinds["note:removed"] == true)
        #expect(byName["Owner"]?.properties.map(\.kind) == [.becameRequired])
        #expect(byName["Owner"]?.verdict == .migratable)
        #expect(report.verdict == .incompatible)
        #expect(report.blockingReasons == ["Item.count: became required without a default value for rows that have none"])
    }

    @Test func typeChangesAndRelationshipChanges() throws {
        let old = try MigrationFixtures.model()
        let widened = try MigrationFixtures.model { e in
            e["Item"]!.attributes[1].type = .integer64   // count is already Integer 64: same
            e["Tag"]!.attributes.append(AttributeDescription(name: "blob", type: .binary))
        }
        let narrowed = try MigrationFixtures.model { e in e["Item"]!.attributes[1].type = .integer16 }
        #expect(ModelDiff.compare(from: old, to: narrowed, configuration: "Default").verdict == .incompatible)
        #expect(ModelDiff.compare(from: narrowed, to: old, configuration: "Default").entities
            .first { $0.name == "Item" }?.properties.first?.kind == .typeWidened)
        #expect(ModelDiff.compare(from: old, to: widened, configuration: "Default").verdict == .migratable)
        let retargeted = try MigrationFixtures.model { e in
            e["Item"]!.relationships = [RelationshipDescription(name: "owner", destination: "Tag")]
            e["Owner"]!.relationships = []
        }
        let report = ModelDiff.compare(from: old, to: retargeted, configuration: "Default")
        #expect(report.entities.first { $0.name == "Item" }?.properties.map(\.kind) == [.destinationChanged])
        #expect(report.verdict == .incompatible)
    }

    /// Ordering changes rewrite stored positions (migratable, not merely compatible); a to-one becoming
    /// to-many is inferable (also when that makes a many-to-many), a many-to-many end becoming to-one is not.
    @Test func orderingAndManyToManyChanges() throws {
        let old = try MigrationFixtures.model()
        let ordered = try MigrationFixtures.model { e in e["Owner"]!.relationships[0].isOrdered = true }
        let orderedReport = ModelDiff.compare(from: old, to: ordered, configuration: "Default")
        #expect(orderedReport.entities.first { $0.name == "Owner" }?.properties.map(\.kind) == [.orderingChanged])
        #expect(orderedReport.verdict == .migratable)
        #expect(ModelDiff.compare(from: ordered, to: old, configuration: "Default").verdict == .migratable)

        let oneToOne = try MigrationFixtures.model { e in e["Owner"]!.relationships[0].isToMany = false }
        #expect(ModelDiff.compare(from: oneToOne, to: old, configuration: "Default").verdict == .migratable)

        // Item.owner made to-many turns Owner.items <->> Item.owner into a many-to-many: inferable one way only.
        let manyToMany = try MigrationFixtures.model { e in e["Item"]!.relationships[0].isToMany = true }
        let report = ModelDiff.compare(from: old, to: manyToMany, configuration: "Default")
        #expect(report.verdict == .migratable)
        #expect(report.entities.first { $0.name == "Item" }?.properties.first?.detail.contains("many-to-many") == true)
        let back = ModelDiff.compare(from: manyToMany, to: old, configuration: "Default")
        #expect(back.verdict == .incompatible)
        #expect(back.blockingReasons.count == 1 && back.blockingReasons[0].hasPrefix("Item.owner: many-to-many -> to-one"))
    }

    @Test func reportRoundTripsThroughJSON() throws {
        let new = try MigrationFixtures.model { e in e["Tag"] = nil }
        let report = ModelDiff.compare(from: try MigrationFixtures.model(), to: new, configuration: "Default")
        let data = try JSONEncoder().encode(report)
        #expect(try JSONDecoder().decode(CompatibilityReport.self, from: data) == report)
        #expect(String(decoding: data, as: UTF8.self).contains("\"kind\":\"removed\""))
    }

    // MARK: - Real Core Data stores

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func aCoreDataStoreOpenedWithItsOwnModelIsIdentical() throws {
        let store = try SQLiteStore(url: Self.sampleStore("SampleModel_V1.sqlite"), model: try Self.sampleModel(version: 1), configuration: "Default", options: .readOnly)
        let stored = try #require(try store.storedModel())
        // Core Data's hashes are not ours, so only the structure can say the store is unchanged.
        #expect(try store.metadata().versionHashes != store.model.versionHashes)
        let report = ModelDiff.compare(from: stored, to: store.model, configuration: "Default")
        #expect(report.verdict <= .compatible, "\(report.summary)")
    }

    @Test(.enabled(if: Fixtures.available, Fixtures.skipMessage))
    func aCopyOfSampleModelV1MigratesToV2KeepingEveryRow() throws {
        let dir = TemporaryDirectory()
        let copy = dir.file("SampleModel_V1.sqlite")
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: Self.sampleStore("SampleModel_V1.sqlite").path + suffix, toPath: copy.path + suffix)
        }
        let v1 = try Self.sampleModel(version: 1), v2 = try Self.sampleModel(version: 2)
        var before: [String: [StoreRow]] = [:]
        do {
            let original = try SQLiteStore(url: copy, model: v1, configuration: "Default")
            let report = ModelDiff.compare(from: try #require(try original.storedModel()), to: v2, configuration: "Default")
            #expect(report.verdict == .migratable, "\(report.summary)")
            #expect(report.entities.first { $0.name == "LuxuryCar" }?.kind == .renamed)
            for entity in ["Car", "SportCar", "ExpensiveSportCar", "Person"] {
                before[entity] = try original.fetch(StoreFetchRequest(entityName: entity, includesSubentities: false))
            }
        }
        let events = Locked<[MigrationProgress]>([])
        let migrated = try SQLiteStore(url: copy, model: v2, configuration: "Default", migrationProgress: { e in events.withLock { $0.append(e) } })
        for (old, new) in [("Car", "Car"), ("SportCar", "SportCar"), ("ExpensiveSportCar", "LuxuryCar"), ("Person", "Person")] {
            let rows = try migrated.fetch(StoreFetchRequest(entityName: new, includesSubentities: false))
            let expected = before[old]!
            #expect(rows.count == expected.count, "\(new)")
            #expect(rows.map(\.primaryKey) == expected.map(\.primaryKey))
            let kept = Set(v2.entity(named: new)!.persistentAttributes.map(\.name))
            #expect(zip(rows, expected).allSatisfy { row, old in
                row.values.dictionary == old.values.dictionary.filter { kept.contains($0.key) } && row.toOne.mapValues(\.primaryKey) == old.toOne.mapValues(\.primaryKey)
            }, "\(new)")
        }
        #expect(before.values.map(\.count).reduce(0, +) == 145)
        #expect(try migrated.metadata().versionHashes == v2.versionHashes)
        #expect(try migrated.storedModel() == v2)
        #expect(try SQLite3.query(copy.path, "SELECT Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT = 3") == "LuxuryCar")
        #expect(try SQLite3.query(copy.path, "SELECT COUNT(*) FROM pragma_table_info('ZPERSON') WHERE name = 'ZID'") == "0")
    }
}

import Foundation
import Testing
@testable import Switchyard

/// The real Core Data stores opened read-only through a coordinator, with the model from their XML or, for
/// SampleModel2 (which has none), recovered from the store's own `Z_MODELCACHE`: every to-many relationship
/// with a to-one inverse is traversed from every source object, and its counts equal the SQL join's.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipMessage))
struct FixtureRelationshipTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let store: String
        let model: @Sendable () throws -> ObjectModel
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "SampleModel_V1", store: ModelCacheFixtures.sampleModelV1) {
            try ModelLoader.load(at: Fixtures.url("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"))
        },
        Case(name: "SampleModel2_V1 (model from its cache)", store: ModelCacheFixtures.sampleModel2V1) {
            try ModelCache.decode(try ModelCacheFixtures.blob(ModelCacheFixtures.sampleModel2V1), source: "SampleModel2_V1 cache")
        },
        Case(name: "Moody", store: ModelCacheFixtures.moody) {
            try ModelLoader.load(at: Fixtures.url("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"))
        },
    ]

    @Test(arguments: cases)
    func toManyCountsMatchTheSQLJoin(fixture: Case) throws {
        let path = Fixtures.url(fixture.store).path
        let model = try fixture.model()
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Default", at: Fixtures.url(fixture.store), options: .readOnly)
        let context = ObjectContext(coordinator: coordinator)
        var checked = 0
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let inverse = relationship.inverseName,
                    let destination = model.entity(named: relationship.destinationEntityName),
                    destination.relationship(named: inverse)?.isToMany == false
                else { continue }
                let table = "Z" + destination.rootName.uppercased()
                let column = "Z" + inverse.uppercased()
                var expected: [Int64: Int] = [:]
                for row in try SQLite3.rows(path, "SELECT \(column), COUNT(*) FROM \(table) WHERE \(column) IS NOT NULL GROUP BY \(column)") {
                    expected[Int64(row[0])!] = Int(row[1])!
                }
                for source in try context.fetch(FetchRequest(entityName: entity.name)) {
                    let members = try source.relatedObjects(forKey: relationship.name)
                    #expect(members.count == expected[source.objectID.primaryKey!] ?? 0,
                            "\(fixture.name): \(entity.name) p\(source.objectID.primaryKey!).\(relationship.name)")
                    // And back: every member's to-one points at the source.
                    for member in members.prefix(3) {
                        #expect(try member.relatedObject(forKey: inverse) === source)
                    }
                    checked += members.count
                }
            }
        }
        #expect(checked > 0, "\(fixture.name) has relationships to traverse")
    }
}

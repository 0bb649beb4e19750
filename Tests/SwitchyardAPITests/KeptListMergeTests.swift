import Foundation
import Switchyard
import Testing

/// An unsaved change to a many-to-many kept over another context's save of the same relationship: Core Data
/// re-applies the kept change to the refreshed members (`mergeChanges(fromContextDidSave:)` under
/// NSMergeByPropertyObjectTrumpMergePolicy, `refresh(_:mergeChanges: true)`), so the context shows both contexts'
/// changes before it saves. Until 2026-12-02 the context kept its whole list: the other context's additions
/// stayed hidden and its removals still showed, until the next save (which wrote both sides' changes).
@Suite struct KeptListMergeTests {
    typealias Shared = MultipleContextsTests

    enum Way: String, CaseIterable, CustomTestStringConvertible {
        case mergeContextWins, refreshMergingChanges
        var testDescription: String { rawValue }
    }

    /// Brings `reader` up to date with the other context's save: merged from its notification under `.contextWins`,
    /// or each of `objects` refreshed keeping its changes.
    static func merge(_ way: Way, into reader: ObjectContext, from collector: Shared.Collector, refreshing objects: [ManagedObject]) throws {
        switch way {
        case .mergeContextWins:
            for note in collector.take() { try reader.mergeChanges(from: note, policy: .contextWins) }
        case .refreshMergingChanges:
            for object in objects { try reader.refresh(object, mergeChanges: true) }
        }
    }

    /// O1.tags is [T0]; this context adds T1 (unsaved) while another removes T0 and adds T2 and saves.
    @Test(arguments: Backend.everyStore, Way.allCases)
    func aKeptListShowsTheOtherContextsChanges(_ backend: Backend, _ way: Way) throws {
        let dir = try TempDir()
        let coordinator = try Shared.seeded(backend, in: dir)
        let collector = Shared.Collector(coordinator)
        let reader = ObjectContext(coordinator: coordinator)
        let o1 = try Shared.order(reader, "O1")
        try o1.addRelatedObject(Shared.tag(reader, "T1"), forKey: "tags")
        #expect(try Shared.labels(o1.relatedObjects(forKey: "tags")) == ["T0", "T1"])

        let writer = ObjectContext(coordinator: coordinator)
        let w1 = try Shared.order(writer, "O1")
        try w1.removeRelatedObject(Shared.tag(writer, "T0"), forKey: "tags")
        try w1.addRelatedObject(Shared.tag(writer, "T2"), forKey: "tags")
        try writer.save()
        try Self.merge(way, into: reader, from: collector, refreshing: [o1])

        #expect(try Shared.labels(o1.relatedObjects(forKey: "tags")) == ["T1", "T2"], "before the save")
        #expect(o1.hasChanges, "the added T1 is still unsaved")
        try reader.save()
        #expect(try Shared.labels(o1.relatedObjects(forKey: "tags")) == ["T1", "T2"], "after the save")
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Shared.labels(Shared.order(fresh, "O1").relatedObjects(forKey: "tags")) == ["T1", "T2"])
        #expect(try Shared.codes(Shared.tag(fresh, "T0").relatedObjects(forKey: "orders")) == [])
        #expect(try Shared.codes(Shared.tag(fresh, "T1").relatedObjects(forKey: "orders")) == ["O1"])
    }

    /// A member this context removed stays removed, one the other context added too is listed once.
    @Test(arguments: Backend.everyStore, Way.allCases)
    func aKeptRemovalAndACommonAdditionSurviveTheMerge(_ backend: Backend, _ way: Way) throws {
        let dir = try TempDir()
        let coordinator = try Shared.seeded(backend, in: dir)
        let collector = Shared.Collector(coordinator)
        let reader = ObjectContext(coordinator: coordinator)
        let o1 = try Shared.order(reader, "O1")
        try o1.removeRelatedObject(Shared.tag(reader, "T0"), forKey: "tags")
        let t2 = try Shared.tag(reader, "T2")
        try o1.addRelatedObject(t2, forKey: "tags")

        let writer = ObjectContext(coordinator: coordinator)
        let w1 = try Shared.order(writer, "O1")
        try w1.addRelatedObject(Shared.tag(writer, "T1"), forKey: "tags")
        try w1.addRelatedObject(Shared.tag(writer, "T2"), forKey: "tags")
        try writer.save()
        // T2 changed on both sides (each end of a many-to-many is changed): it is refreshed too, else its save
        // conflicts under the default merge policy, as in Core Data.
        try Self.merge(way, into: reader, from: collector, refreshing: [o1, t2])

        #expect(try Shared.labels(o1.relatedObjects(forKey: "tags")) == ["T1", "T2"], "before the save")
        try reader.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Shared.labels(Shared.order(fresh, "O1").relatedObjects(forKey: "tags")) == ["T1", "T2"])
        #expect(try Shared.codes(Shared.tag(fresh, "T0").relatedObjects(forKey: "orders")) == [])
    }
}

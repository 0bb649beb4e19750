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

    /// Seeds the shop (O1.tags is [T0]); `local` changes O1 in one context and returns the objects to refresh,
    /// `other` changes O1 in another context, which saves; then the first is brought up to date `way`.
    static func scenario(
        _ backend: Backend, _ way: Way, in dir: TempDir,
        local: (ObjectContext, ManagedObject) throws -> [ManagedObject], other: (ObjectContext, ManagedObject) throws -> Void
    ) throws -> (coordinator: StoreCoordinator, reader: ObjectContext, o1: ManagedObject) {
        let coordinator = try Shared.seeded(backend, in: dir)
        let collector = Shared.Collector(coordinator)
        let reader = ObjectContext(coordinator: coordinator)
        let o1 = try Shared.order(reader, "O1")
        let refreshed = try local(reader, o1)
        let writer = ObjectContext(coordinator: coordinator)
        try other(writer, try Shared.order(writer, "O1"))
        try writer.save()
        try merge(way, into: reader, from: collector, refreshing: refreshed)
        return (coordinator, reader, o1)
    }

    /// This context adds T1 (unsaved) while another removes T0 and adds T2 and saves.
    @Test(arguments: Backend.everyStore, Way.allCases)
    func aKeptListShowsTheOtherContextsChanges(_ backend: Backend, _ way: Way) throws {
        let dir = try TempDir()
        let (coordinator, reader, o1) = try Self.scenario(backend, way, in: dir, local: { reader, o1 in
            try o1.addRelatedObject(Shared.tag(reader, "T1"), forKey: "tags")
            #expect(try Shared.labels(o1.relatedObjects(forKey: "tags")) == ["T0", "T1"])
            return [o1]
        }, other: { writer, o1 in
            try o1.removeRelatedObject(Shared.tag(writer, "T0"), forKey: "tags")
            try o1.addRelatedObject(Shared.tag(writer, "T2"), forKey: "tags")
        })

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
        let (coordinator, reader, o1) = try Self.scenario(backend, way, in: dir, local: { reader, o1 in
            try o1.removeRelatedObject(Shared.tag(reader, "T0"), forKey: "tags")
            let t2 = try Shared.tag(reader, "T2")
            try o1.addRelatedObject(t2, forKey: "tags")
            // T2 changes on both sides (each end of a many-to-many does): it is refreshed too, else its save
            // conflicts under the default merge policy, as in Core Data.
            return [o1, t2]
        }, other: { writer, o1 in
            try o1.addRelatedObject(Shared.tag(writer, "T1"), forKey: "tags")
            try o1.addRelatedObject(Shared.tag(writer, "T2"), forKey: "tags")
        })

        #expect(try Shared.labels(o1.relatedObjects(forKey: "tags")) == ["T1", "T2"], "before the save")
        try reader.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Shared.labels(Shared.order(fresh, "O1").relatedObjects(forKey: "tags")) == ["T1", "T2"])
        #expect(try Shared.codes(Shared.tag(fresh, "T0").relatedObjects(forKey: "orders")) == [])
    }
}

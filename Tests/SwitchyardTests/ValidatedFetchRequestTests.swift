import Foundation
import Testing
@testable import Switchyard

/// A context checks a fetch's key paths against the coordinator's model once, and the coordinator marks the
/// request so the store does not check it again (`StoreFetchRequest.validatedAgainst`). The mark must be
/// trusted only by a store with that very model, and must not outlive a change to what it vouches for.
@Suite struct ValidatedFetchRequestTests {
    let dir = TemporaryDirectory()

    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [EntityDescription(name: "Item", attributes: [AttributeDescription(name: "name", type: .string)])])
    }

    @Test func copiesShareAnIdentityAndEqualModelsDoNot() throws {
        let model = try Self.model(), equal = try Self.model()
        let copy = model
        #expect(model == equal, "identity is not part of equality")
        #expect(model.hashValue == equal.hashValue)
        #expect(copy.identity === model.identity)
        #expect(equal.identity !== model.identity)
    }

    @Test func theMarkSkipsTheCheckOnlyForItsModelAndIsClearedByAnEdit() throws {
        let model = try Self.model(), equal = try Self.model()
        let store = UUID()
        var request = StoreFetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "nosuch == 1"))
        #expect(throws: QueryError.self, "unmarked: checked") { try request.prepared(forStore: store, model: model) }
        request.validatedAgainst = model.identity
        #expect(throws: QueryError.self, "marked for another, equal model: checked") { try request.prepared(forStore: store, model: equal) }
        // Marked for this very model: trusted (here wrongly, which shows the check was skipped).
        #expect(try request.prepared(forStore: store, model: model).predicate == request.predicate)
        #expect(request == StoreFetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "nosuch == 1")), "the mark is not part of equality")
        #expect(!"\(request)".contains("validatedAgainst"), "nor of the description")

        for edit in ["entityName", "predicate", "sortKeys"] {
            var edited = request
            switch edit {
            case "entityName": edited.entityName = "Item"
            case "predicate": edited.predicate = try FetchPredicate(format: "name == 'x'")
            default: edited.sortKeys = [SortKey("nosuch")]
            }
            #expect(edited.validatedAgainst == nil, "changing \(edit) clears the mark")
        }
        var limited = request
        limited.fetchLimit = 3
        #expect(limited.validatedAgainst === model.identity, "a limit changes no key path")
    }

    /// Every backend: a store opened with another, equal model refuses an unknown key path in a request marked
    /// as checked against the first model.
    @Test(arguments: Backend.everyStore)
    func aStoreWithAnotherModelStillChecks(_ backend: Backend) throws {
        let model = try Self.model(), equal = try Self.model()
        let store = try backend.open(equal, configuration: "Default", in: dir)
        var request = StoreFetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "nosuch == 1"))
        request.validatedAgainst = model.identity
        #expect(throws: QueryError.self) { try store.fetch(request) }
        #expect(throws: QueryError.self) { try store.fetch(request) { _ in } }
        #expect(throws: QueryError.self) { try store.count(request) }
    }
}

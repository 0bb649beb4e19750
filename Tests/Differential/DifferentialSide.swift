import Foundation
import Switchyard

/// One backend under test: its coordinator, context, and the objects it created, by uid.
final class DifferentialSide {
    let name: String
    let coordinator: StoreCoordinator
    let context: ObjectContext
    var objects: [Int64: ManagedObject] = [:]

    init(name: String, coordinator: StoreCoordinator) {
        self.name = name
        self.coordinator = coordinator
        self.context = ObjectContext(coordinator: coordinator)
    }

    func uids(_ objects: [ManagedObject]) throws -> [Int64] {
        try objects.map { try $0.get("uid", as: Int64.self) ?? -1 }
    }

    func request(_ spec: FetchSpec) throws -> FetchRequest? {
        var arguments: [PredicateArgument] = []
        for (uids, isList) in spec.predicate?.objectArguments ?? [] {
            var ids: [ObjectID] = []
            for uid in uids {
                guard let object = objects[uid] else { return nil }
                ids.append(object.objectID)
            }
            arguments.append(isList ? .objects(ids) : .object(ids[0]))
        }
        let predicate = try spec.predicate.map { try FetchPredicate(format: $0.format, arguments: arguments) }
        return FetchRequest(
            entityName: spec.entity, predicate: predicate, sortKeys: spec.sort.map { SortKey($0.key, ascending: $0.ascending) },
            fetchLimit: spec.limit, fetchOffset: spec.offset, includesSubentities: spec.includesSubentities)
    }
}

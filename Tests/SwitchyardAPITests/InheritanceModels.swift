import Foundation
import Switchyard
import Testing

/// Models for `InheritanceBehaviourTests`. A zoo with an inheritance tree: abstract Animal (name, legs) <-
/// abstract Mammal (fur) <- Cat (tag, indexed; owner -> Keeper) and Dog (tag, not indexed); Bird (wingspan) <- Animal. Keeper -> animals (to-many to the
/// abstract parent, Cascade), favorite (to-one to the parent, inverse fans), cats (to-many to Cat). Toy belongs
/// to an Animal (Animal.toys Cascade).
enum Zoo {
    static func model(birdTagType: AttributeType? = nil) throws -> ObjectModel {
        let keeper = EntityDescription(
            name: "Keeper", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [
                RelationshipDescription(name: "animals", destination: "Animal", inverse: "keeper", isToMany: true, deleteRule: .cascade),
                RelationshipDescription(name: "favorite", destination: "Animal", inverse: "fans"),
                RelationshipDescription(name: "cats", destination: "Cat", inverse: "owner", isToMany: true),
            ])
        let animal = EntityDescription(
            name: "Animal", isAbstract: true,
            attributes: [
                AttributeDescription(name: "name", type: .string, isIndexed: true),
                AttributeDescription(name: "legs", type: .integer64),
            ],
            relationships: [
                RelationshipDescription(name: "keeper", destination: "Keeper", inverse: "animals"),
                RelationshipDescription(name: "fans", destination: "Keeper", inverse: "favorite", isToMany: true),
                RelationshipDescription(name: "toys", destination: "Toy", inverse: "animal", isToMany: true, deleteRule: .cascade),
            ])
        let mammal = EntityDescription(
            name: "Mammal", parent: "Animal", isAbstract: true, attributes: [AttributeDescription(name: "fur", type: .string)])
        let cat = EntityDescription(
            name: "Cat", parent: "Mammal", attributes: [AttributeDescription(name: "tag", type: .string, isIndexed: true)],
            relationships: [RelationshipDescription(name: "owner", destination: "Keeper", inverse: "cats")])
        let dog = EntityDescription(name: "Dog", parent: "Mammal", attributes: [AttributeDescription(name: "tag", type: .string)])
        var birdAttributes = [AttributeDescription(name: "wingspan", type: .double)]
        if let birdTagType { birdAttributes.append(AttributeDescription(name: "tag", type: birdTagType)) }
        let bird = EntityDescription(name: "Bird", parent: "Animal", attributes: birdAttributes)
        let toy = EntityDescription(
            name: "Toy", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "animal", destination: "Animal", inverse: "toys")])
        let entities = [keeper, animal, mammal, cat, dog, bird, toy]
        return try ObjectModel(
            entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    @discardableResult
    static func add(_ context: ObjectContext, _ entity: String, _ name: String, legs: Int64? = nil, keeper: ManagedObject? = nil) throws -> ManagedObject {
        let object = try context.insert(entity)
        try object.set("name", name)
        if let legs { try object.set("legs", legs) }
        if let keeper { try object.setRelatedObject(keeper, forKey: "keeper") }
        return object
    }

    static func request(
        _ entity: String, _ format: String? = nil, _ args: [any PredicateArgumentConvertible] = [], sort: [SortKey] = [],
        limit: Int? = nil, offset: Int = 0, subentities: Bool = true
    ) throws -> FetchRequest {
        FetchRequest(
            entityName: entity,
            predicate: try format.map { try FetchPredicate(format: $0, arguments: args.map(\.predicateArgument)) },
            sortKeys: sort, fetchLimit: limit, fetchOffset: offset, includesSubentities: subentities)
    }

    /// "Entity:name" of each object, in order.
    static func labels(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { "\($0.entity.name):\(try $0.get("name", as: String.self) ?? "nil")" }
    }

    static func fetch(
        _ context: ObjectContext, _ entity: String, _ format: String? = nil, _ args: [any PredicateArgumentConvertible] = [],
        sort: [SortKey] = [], limit: Int? = nil, offset: Int = 0, subentities: Bool = true
    ) throws -> [String] {
        try labels(context.fetch(request(entity, format, args, sort: sort, limit: limit, offset: offset, subentities: subentities)))
    }

    static func count(
        _ context: ObjectContext, _ entity: String, _ format: String? = nil, _ args: [any PredicateArgumentConvertible] = [],
        subentities: Bool = true
    ) throws -> Int {
        try context.count(request(entity, format, args, subentities: subentities))
    }

    static func reopen(_ backend: Backend, _ coordinator: StoreCoordinator, in dir: TempDir, model: ObjectModel? = nil) throws -> StoreCoordinator {
        guard backend != .memory else { return coordinator }
        for store in coordinator.stores { try coordinator.removeStore(store) }
        return try backend.coordinator(model ?? Zoo.model(), in: dir)
    }

    /// Ann keeps Tom (Cat, 4), Rex (Dog, 4) and Polly (Bird, 2); Bob keeps Kit (Cat) and Tweety (Bird).
    /// A context on `coordinator` that populated the zoo and saved it.
    static func populated(_ coordinator: StoreCoordinator) throws -> ObjectContext {
        let context = ObjectContext(coordinator: coordinator)
        try populate(context)
        try context.save()
        return context
    }

    static func populate(_ context: ObjectContext) throws {
        let ann = try context.insert("Keeper")
        try ann.set("name", "Ann")
        let bob = try context.insert("Keeper")
        try bob.set("name", "Bob")
        let tom = try add(context, "Cat", "Tom", legs: 4, keeper: ann)
        try tom.set("fur", "grey")
        try tom.set("tag", "t1")
        let rex = try add(context, "Dog", "Rex", legs: 4, keeper: ann)
        try rex.set("fur", "brown")
        try rex.set("tag", "t1")
        try add(context, "Bird", "Polly", legs: 2, keeper: ann)
        let kit = try add(context, "Cat", "Kit", legs: 3, keeper: bob)
        try kit.set("fur", "black")
        try kit.set("tag", "t2")
        try add(context, "Bird", "Tweety", legs: 2, keeper: bob)
    }

    static func keeper(_ context: ObjectContext, _ name: String) throws -> ManagedObject {
        try #require(try context.fetch(request("Keeper", "name == %@", [name])).first)
    }

    static func animal(_ context: ObjectContext, _ name: String) throws -> ManagedObject {
        try #require(try context.fetch(request("Animal", "name == %@", [name])).first)
    }
}

/// A fleet with a concrete parent: Vehicle (name, wheels default 4; tow -> Vehicle / towedBy; drivers n-n
/// Driver; queuedBy -> Driver) <- Car (seats; home -> Garage) and Truck (load; home -> Depot), each sibling's
/// `home` to another destination. Driver.queue is an ordered to-many to Vehicle.
enum Fleet {
    static func model() throws -> ObjectModel {
        let vehicle = EntityDescription(
            name: "Vehicle",
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "wheels", type: .integer64, defaultValue: .integer(4)),
            ],
            relationships: [
                RelationshipDescription(name: "tow", destination: "Vehicle", inverse: "towedBy"),
                RelationshipDescription(name: "towedBy", destination: "Vehicle", inverse: "tow", isToMany: true),
                RelationshipDescription(name: "drivers", destination: "Driver", inverse: "vehicles", isToMany: true),
                RelationshipDescription(name: "queuedBy", destination: "Driver", inverse: "queue"),
            ])
        let car = EntityDescription(
            name: "Car", parent: "Vehicle", attributes: [AttributeDescription(name: "seats", type: .integer64)],
            relationships: [RelationshipDescription(name: "home", destination: "Garage", inverse: "car")])
        let truck = EntityDescription(
            name: "Truck", parent: "Vehicle", attributes: [AttributeDescription(name: "load", type: .double)],
            relationships: [RelationshipDescription(name: "home", destination: "Depot", inverse: "truck")])
        let garage = EntityDescription(
            name: "Garage", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "car", destination: "Car", inverse: "home")])
        let depot = EntityDescription(
            name: "Depot", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "truck", destination: "Truck", inverse: "home")])
        let driver = EntityDescription(
            name: "Driver", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [
                RelationshipDescription(name: "vehicles", destination: "Vehicle", inverse: "drivers", isToMany: true),
                RelationshipDescription(name: "queue", destination: "Vehicle", inverse: "queuedBy", isToMany: true, isOrdered: true),
            ])
        let entities = [vehicle, car, truck, garage, depot, driver]
        return try ObjectModel(
            entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    @discardableResult
    static func add(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        let object = try context.insert(entity)
        try object.set("name", name)
        return object
    }

    static func named(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        try #require(try context.fetch(Zoo.request(entity, "name == %@", [name])).first)
    }
}

import Foundation
import Switchyard
import Testing

/// A catalogue with inheritance, defaults and a required attribute, built as a user would:
/// abstract `Item` (name required, price, stock default 5, label default "new") with `Book` (pages) and its
/// `EBook` (sizeMB), and `Album` (tracks). One configuration `Main`.
enum Catalogue {
    static func model() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item", isAbstract: true,
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "price", type: .double),
                AttributeDescription(name: "stock", type: .integer32, defaultValue: .integer(5)),
                AttributeDescription(name: "label", type: .string, defaultValue: .string("new")),
            ])
        let book = EntityDescription(name: "Book", parent: "Item", attributes: [AttributeDescription(name: "pages", type: .integer32)])
        let ebook = EntityDescription(name: "EBook", parent: "Book", attributes: [AttributeDescription(name: "sizeMB", type: .double)])
        let album = EntityDescription(name: "Album", parent: "Item", attributes: [AttributeDescription(name: "tracks", type: .integer16)])
        return try ObjectModel(
            entities: [item, book, ebook, album],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item", "Book", "EBook", "Album"])])
    }

    static func coordinator(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        try backend.coordinator(model(), in: dir)
    }

    /// Inserts `entity` named `name` priced `price`.
    @discardableResult
    static func item(_ context: ObjectContext, _ entity: String, _ name: String, price: Double) throws -> ManagedObject {
        let object = try context.insert(entity)
        try object.set("name", name)
        try object.set("price", price)
        return object
    }

    /// A saved catalogue: Book b1 (3.0), b2 (1.0); EBook e1 (2.0), e2 (5.0); Album a1 (4.0).
    static func seeded(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        let coordinator = try coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        for (entity, name, price) in [("Book", "b1", 3.0), ("Book", "b2", 1.0), ("EBook", "e1", 2.0), ("EBook", "e2", 5.0), ("Album", "a1", 4.0)] {
            try item(context, entity, name, price: price)
        }
        try context.save()
        return coordinator
    }
}

/// Every relationship kind and delete rule, one configuration `Main`:
/// - Person 1-1 Passport (`passport` / `holder`), Person 1-n Pet (`pets`, Cascade / `owner`, Nullify)
/// - Team 1-n Member (`members`, Deny / `team`), Folder 1-n Note (`notes`, Nullify / `folder`)
/// - Student n-n Course (`courses` / `students`), Playlist 1-n ordered Song (`songs` / `playlist`)
/// - Car 1-n Wheel (`wheels`, 1...4 / `car`, required)
enum Relations {
    static func model() throws -> ObjectModel {
        func named(_ entity: String, _ attribute: String, _ relationships: [RelationshipDescription]) -> EntityDescription {
            EntityDescription(name: entity, attributes: [AttributeDescription(name: attribute, type: .string)], relationships: relationships)
        }
        let entities = [
            named("Person", "name", [
                RelationshipDescription(name: "passport", destination: "Passport", inverse: "holder"),
                RelationshipDescription(name: "pets", destination: "Pet", inverse: "owner", isToMany: true, deleteRule: .cascade),
            ]),
            named("Passport", "name", [RelationshipDescription(name: "holder", destination: "Person", inverse: "passport")]),
            named("Pet", "name", [RelationshipDescription(name: "owner", destination: "Person", inverse: "pets")]),
            named("Team", "name", [RelationshipDescription(name: "members", destination: "Member", inverse: "team", isToMany: true, deleteRule: .deny)]),
            named("Member", "name", [RelationshipDescription(name: "team", destination: "Team", inverse: "members")]),
            named("Folder", "name", [RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, deleteRule: .nullify)]),
            named("Note", "name", [RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes")]),
            named("Student", "name", [RelationshipDescription(name: "courses", destination: "Course", inverse: "students", isToMany: true)]),
            named("Course", "name", [RelationshipDescription(name: "students", destination: "Student", inverse: "courses", isToMany: true)]),
            named("Playlist", "name", [RelationshipDescription(name: "songs", destination: "Song", inverse: "playlist", isToMany: true, isOrdered: true)]),
            named("Song", "name", [RelationshipDescription(name: "playlist", destination: "Playlist", inverse: "songs")]),
            named("Car", "name", [RelationshipDescription(name: "wheels", destination: "Wheel", inverse: "car", isToMany: true, minCount: 1, maxCount: 4)]),
            named("Wheel", "name", [RelationshipDescription(name: "car", destination: "Car", inverse: "wheels", isOptional: false)]),
        ]
        return try ObjectModel(entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }

    static func coordinator(_ backend: Backend, in dir: TempDir) throws -> StoreCoordinator {
        try backend.coordinator(model(), in: dir)
    }

    /// Inserts `entity` with `name`.
    @discardableResult
    static func insert(_ context: ObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        let object = try context.insert(entity)
        try object.set("name", name)
        return object
    }

    /// The one object of `entity` whose `key` is `name`, in `context`.
    static func object(_ context: ObjectContext, _ entity: String, _ name: String, key: String = "name") throws -> ManagedObject {
        let found = try context.fetch(FetchRequest(entityName: entity, predicate: try FetchPredicate(format: "%K == %@", key, name)))
        try #require(found.count == 1, "\(entity) \(name): \(found.count) objects")
        return found[0]
    }

    /// The names of `objects`, in order.
    static func names(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.get("name", as: String.self) ?? "?" }
    }

    /// The names of the members of `key`, sorted (for unordered relationships).
    static func memberNames(_ object: ManagedObject, _ key: String) throws -> [String] {
        try names(object.relatedObjects(forKey: key)).sorted()
    }

    /// The names of every saved object of `entity`, as a fresh context sees them, sorted.
    static func savedNames(_ coordinator: StoreCoordinator, _ entity: String) throws -> [String] {
        try names(ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: entity))).sorted()
    }
}

/// Two configurations whose entities are joined only by a fetched property, as in Apple's "Linking data
/// between two Core Data stores": `Catalog` holds Product (sku, name) with fetched property `reviews`
/// (`Review` where `sku == $FETCH_SOURCE.sku`); `Reviews` holds Review (sku, stars).
enum TwoStores {
    static func model() throws -> ObjectModel {
        let product = EntityDescription(
            name: "Product",
            attributes: [AttributeDescription(name: "sku", type: .string), AttributeDescription(name: "name", type: .string)],
            fetchedProperties: [FetchedPropertyDescription(name: "reviews", destination: "Review", predicate: "sku == $FETCH_SOURCE.sku")])
        let review = EntityDescription(
            name: "Review",
            attributes: [AttributeDescription(name: "sku", type: .string, isIndexed: true), AttributeDescription(name: "stars", type: .integer16)])
        return try ObjectModel(
            entities: [product, review],
            configurations: [
                ConfigurationDescription(name: "Catalog", entityNames: ["Product"]),
                ConfigurationDescription(name: "Reviews", entityNames: ["Review"]),
            ])
    }

    /// A coordinator over both configurations, each a store of `backend` in `dir`.
    static func coordinator(_ backend: Backend, in dir: URL) throws -> StoreCoordinator {
        let coordinator = StoreCoordinator(model: try model())
        try backend.add(to: coordinator, configuration: "Catalog", in: dir)
        try backend.add(to: coordinator, configuration: "Reviews", in: dir)
        return coordinator
    }
}

/// Runs `body` and checks it throws a `CoordinatorError` that `matches` accepts.
func expectCoordinatorError(
    _ what: String, _ matches: (CoordinatorError) -> Bool, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("\(what): no error thrown", sourceLocation: sourceLocation)
    } catch let error as CoordinatorError {
        #expect(matches(error), "\(what): \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(what): \(error) is not a CoordinatorError", sourceLocation: sourceLocation)
    }
}

/// Relationships of an entity to itself and cycles, one configuration `Main`: Node's ordered `children`
/// (Cascade) with inverse `parent`, `friends` (a many-to-many that is its own inverse), ordered many-to-many
/// `labels` with Label's `nodes`, `pinned` (a to-one without inverse); A and B cascade into each other.
enum Graph {
    static func model() throws -> ObjectModel {
        let name = AttributeDescription(name: "name", type: .string)
        let entities = [
            EntityDescription(name: "Node", attributes: [name], relationships: [
                RelationshipDescription(name: "parent", destination: "Node", inverse: "children"),
                RelationshipDescription(name: "children", destination: "Node", inverse: "parent", isToMany: true, isOrdered: true, deleteRule: .cascade),
                RelationshipDescription(name: "friends", destination: "Node", inverse: "friends", isToMany: true),
                RelationshipDescription(name: "labels", destination: "Label", inverse: "nodes", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "pinned", destination: "Label"),
            ]),
            EntityDescription(name: "Label", attributes: [name], relationships: [
                RelationshipDescription(name: "nodes", destination: "Node", inverse: "labels", isToMany: true),
            ]),
            EntityDescription(name: "A", attributes: [name], relationships: [RelationshipDescription(name: "b", destination: "B", inverse: "a", deleteRule: .cascade)]),
            EntityDescription(name: "B", attributes: [name], relationships: [RelationshipDescription(name: "a", destination: "A", inverse: "b", deleteRule: .cascade)]),
        ]
        return try ObjectModel(entities: entities, configurations: [ConfigurationDescription(name: "Main", entityNames: entities.map(\.name))])
    }
}

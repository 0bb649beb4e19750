import Foundation
import Testing
import Switchyard

/// Every identifier that reaches SQL comes from a model file or a store: a model whose entity, attribute,
/// relationship, fetch index, uniqueness constraint and configuration names are SQL fragments must build and
/// use its store without running any of them (an indexed attribute named like this once created a table).
@Suite struct HostileNameTests {
    let dir = TemporaryDirectory()

    static let entity = #"Note"); CREATE TABLE INJECTED_ENTITY(a);--"#
    static let tag = #"Tag'; DROP TABLE Z_METADATA;--"#
    static let title = #"title"); CREATE TABLE INJECTED_ATTRIBUTE(a);--"#
    static let bare = #"y) ;create table injected_bare(x);--"#
    static let owner = #"owner"); CREATE TABLE INJECTED_RELATIONSHIP(a);--"#
    static let notes = #"notes"" ; CREATE TABLE INJECTED_INVERSE(a);--"#
    static let tags = #"tags]); CREATE TABLE INJECTED_MANY(a);--"#
    static let tagNotes = #"tagNotes`); CREATE TABLE INJECTED_MANY2(a);--"#
    static let index = #"byTitle"); CREATE TABLE INJECTED_INDEX(a);--"#
    static let configuration = #"Main"); CREATE TABLE INJECTED_CONFIGURATION(a);--"#

    /// The hostile model, written to model XML and read back, as a file would bring it.
    static func model() throws -> ObjectModel {
        let built = try ObjectModel(
            entities: [
                EntityDescription(
                    name: entity,
                    attributes: [
                        AttributeDescription(name: title, type: .string, isIndexed: true),
                        AttributeDescription(name: "y", type: .integer64, isIndexed: true),
                        AttributeDescription(name: bare, type: .integer64, isIndexed: true),
                    ],
                    relationships: [
                        RelationshipDescription(name: owner, destination: tag, inverse: notes),
                        RelationshipDescription(name: tags, destination: tag, inverse: tagNotes, isToMany: true),
                    ],
                    uniquenessConstraints: [[bare]],
                    indexes: [IndexDescription(name: index, properties: [title, "y"])]),
                EntityDescription(
                    name: tag,
                    attributes: [AttributeDescription(name: title, type: .string, isIndexed: true)],
                    relationships: [
                        RelationshipDescription(name: notes, destination: entity, inverse: owner, isToMany: true),
                        RelationshipDescription(name: tagNotes, destination: entity, inverse: tags, isToMany: true),
                    ]),
            ],
            configurations: [ConfigurationDescription(name: configuration, entityNames: [entity, tag])])
        return try ModelLoader.load(contentsXML: Data(ModelWriter.xml(for: built).utf8), source: "hostile.xcdatamodel")
    }

    @Test(arguments: Backend.allCases)
    func hostileNamesAreNeverExecuted(backend: Backend) throws {
        let model = try Self.model()
        #expect(model.entity(named: Self.entity)?.attribute(named: Self.bare) != nil)
        let first = StoreCoordinator(model: model)
        try backend.add(to: first, configuration: Self.configuration, in: dir, name: "hostile")
        do {
            let context = ObjectContext(coordinator: first)
            let tag = try context.insert(Self.tag)
            try tag.set(Self.title, "t'\"); DROP TABLE x;--")
            for i in 1...3 {
                let note = try context.insert(Self.entity)
                try note.set(Self.title, "note \(i) \"')--")
                try note.set("y", Int64(i))
                try note.set(Self.bare, Int64(i * 10))
                try note.setRelatedObject(tag, forKey: Self.owner)
                try note.addRelatedObject(tag, forKey: Self.tags)
            }
            try context.save()
        }
        // Reopened from the files (a memory store has none: the same one again).
        let coordinator = backend == .memory ? first : StoreCoordinator(model: model)
        if backend != .memory { try backend.add(to: coordinator, configuration: Self.configuration, in: dir, name: "hostile") }
        let context = ObjectContext(coordinator: coordinator)
        let found = try context.fetch(FetchRequest(
            entityName: Self.entity,
            predicate: try FetchPredicate(format: "%K >= %@ AND %K BEGINSWITH %@", Self.bare, Int64(20), "\(Self.owner).\(Self.title)", "t'"),
            sortKeys: [SortKey(Self.title)]))
        #expect(try found.map { try $0.get(Self.title, as: String.self) } == ["note 2 \"')--", "note 3 \"')--"])
        let tag = try #require(try context.fetch(FetchRequest(entityName: Self.tag)).first)
        #expect(try tag.relatedObjects(forKey: Self.notes).count == 3)
        #expect(try tag.relatedObjects(forKey: Self.tagNotes).count == 3)
        let duplicate = try context.insert(Self.entity)
        try duplicate.set(Self.bare, Int64(10))
        #expect(throws: (any Error).self) { try context.save() }

        if backend == .sqlite, SQLite3.available, let url = backend.url(in: dir, name: "hostile") {
            let tables = try SQLite3.query(url.path, "SELECT name FROM sqlite_master WHERE name LIKE 'INJECTED%'")
            #expect(tables.isEmpty, "SQL from a model name ran: \(tables)")
            #expect(try SQLite3.query(url.path, "SELECT count(*) FROM Z_METADATA") == "1")
        }
    }
}

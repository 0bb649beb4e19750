import Foundation
import Switchyard
import Testing

/// An attribute added with a default, as Core Data's lightweight migration treats it: every existing object
/// reads the default, an object later set to nil stays nil, and predicates see the same values as fetches.
/// (LMDB keeps the default in the store's layout instead of rewriting every row; SQLite uses the column's
/// DEFAULT. Both must look the same from here.)
@Suite struct AddedAttributeDefaultTests {
    static func model(_ version: Int) throws -> ObjectModel {
        var attributes = [AttributeDescription(name: "name", type: .string)]
        if version == 2 {
            attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: .integer(7)))
            attributes.append(AttributeDescription(name: "label", type: .string, defaultValue: .string("none")))
        }
        if version == 3 {
            // `label` removed and `rank` kept; `tag` added: a new property that takes nothing from `label`.
            attributes.append(AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: .integer(7)))
            attributes.append(AttributeDescription(name: "tag", type: .string, defaultValue: .string("fresh")))
        }
        return try ObjectModel(
            entities: [EntityDescription(name: "Item", attributes: attributes)],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item"])])
    }

    static func open(_ backend: Backend, _ version: Int, in dir: TempDir) throws -> ObjectContext {
        let coordinator = try backend.coordinator(model(version), in: dir)
        return ObjectContext(coordinator: coordinator)
    }

    static func count(_ context: ObjectContext, _ format: String) throws -> Int {
        try context.count(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: format)))
    }

    @Test(arguments: Backend.persistent)
    func existingRowsReadTheDefaultAndNilStaysNil(_ backend: Backend) throws {
        let dir = try TempDir()
        do {
            let context = try Self.open(backend, 1, in: dir)
            for i in 0..<50 {
                let item = try context.insert("Item")
                try item.set("name", "item\(i)")
            }
            try context.save()
        }
        do {
            let context = try Self.open(backend, 2, in: dir)
            let items = try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name")]))
            #expect(items.count == 50)
            #expect(try items.allSatisfy { try $0.get("rank", as: Int64.self) == 7 && $0.get("label", as: String.self) == "none" })
            #expect(try Self.count(context, "rank == 7") == 50)
            #expect(try Self.count(context, "label == 'none'") == 50)
            try items[1].set("label", String?.none)
            try items[2].set("rank", Int64(3))
            try items[3].set("name", "renamed")
            let fresh = try context.insert("Item")
            try fresh.set("name", "new")
            try context.save()
        }
        let context = try Self.open(backend, 2, in: dir)
        #expect(try Self.count(context, "label == nil") == 1, "a nil written after the migration stays nil")
        #expect(try Self.count(context, "rank == 3") == 1)
        #expect(try Self.count(context, "rank == 7") == 50)
        #expect(try Self.count(context, "label == 'none'") == 50, "49 old rows and the new object read the default")
        let renamed = try #require(try context.fetch(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "name == 'renamed'"))).first)
        #expect(try renamed.get("label", as: String.self) == "none", "updating another attribute keeps the default")
    }

    @Test(arguments: Backend.persistent)
    func aRemovedAttributeLeavesNothingForTheNextOne(_ backend: Backend) throws {
        let dir = try TempDir()
        do {
            let context = try Self.open(backend, 1, in: dir)
            for i in 0..<20 {
                let item = try context.insert("Item")
                try item.set("name", "item\(i)")
            }
            try context.save()
        }
        do {
            let context = try Self.open(backend, 2, in: dir)
            let first = try #require(try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name")])).first)
            try first.set("label", "kept?")
            try context.save()
        }
        do {
            let context = try Self.open(backend, 3, in: dir)
            #expect(try Self.count(context, "tag == 'fresh'") == 20)
            #expect(try Self.count(context, "rank == 7") == 20)
            let items = try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name")]))
            #expect(try items.allSatisfy { try $0.get("tag", as: String.self) == "fresh" })
            // An update of the row that held the removed value (LMDB copies that value's bytes as they are).
            try items[0].set("rank", Int64(9))
            try items[1].set("tag", String?.none)
            try context.save()
        }
        let context = try Self.open(backend, 3, in: dir)
        let items = try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name")]))
        #expect(try items[0].get("rank", as: Int64.self) == 9)
        #expect(try items[0].get("tag", as: String.self) == "fresh", "the updated row still reads the default, not the removed value")
        #expect(try items[1].get("tag", as: String.self) == nil, "a nil set over an implicit default stays nil")
        #expect(try Self.count(context, "tag == 'fresh'") == 19)
        #expect(try Self.count(context, "rank == 7") == 19)
    }
}

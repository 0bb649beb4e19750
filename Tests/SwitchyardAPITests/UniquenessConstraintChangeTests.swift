import Foundation
import Switchyard
import Testing

/// A model version that adds or removes a uniqueness constraint, as Core Data's lightweight migration handles
/// it: an added constraint holds for every later save on every backend, and an existing store whose rows already
/// break it refuses to open with the new model (naming the constraint and a duplicated value) and stays as it
/// was; a removed constraint stops refusing duplicates. A constraint is not part of an entity's version hash, so
/// no migration runs: before this, an existing SQLite store kept the unique indexes it was created with.
@Suite struct UniquenessConstraintChangeTests {
    /// `colored`: a version that also adds an attribute, so the store is migrated.
    static func model(unique: Bool, colored: Bool = false) throws -> ObjectModel {
        try ObjectModel(
            entities: [EntityDescription(
                name: "Item",
                attributes: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "size", type: .integer64)]
                    + (colored ? [AttributeDescription(name: "color", type: .string, defaultValue: .string("red"))] : []),
                uniquenessConstraints: unique ? [["name", "size"]] : [])],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item"])])
    }

    static func insert(_ context: ObjectContext, _ name: String, size: Int64 = 1) throws {
        let item = try context.insert("Item")
        try item.set("name", name)
        try item.set("size", size)
    }

    /// A store of `backend` in `dir`, written with or without the constraint, holding items named `names` (size 1).
    static func seed(_ backend: Backend, unique: Bool, _ names: [String], in dir: TempDir) throws {
        let context = ObjectContext(coordinator: try backend.coordinator(model(unique: unique), in: dir))
        for name in names { try insert(context, name) }
        try context.save()
    }

    static func names(_ backend: Backend, unique: Bool, in dir: TempDir) throws -> [String] {
        let context = ObjectContext(coordinator: try backend.coordinator(model(unique: unique), in: dir))
        return try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name")])).map { try $0.get("name", as: String.self) ?? "nil" }
    }

    @Test(arguments: Backend.persistent)
    func anAddedConstraintHoldsForLaterSaves(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, unique: false, ["a", "b"], in: dir)
        let context = ObjectContext(coordinator: try backend.coordinator(Self.model(unique: true), in: dir))
        try Self.insert(context, "a")
        #expect {
            try context.save()
        } throws: { error in
            guard case .uniquenessViolation(_, _, "Item", ["name", "size"], _)? = error as? StoreError else { return false }
            return true
        }
        context.rollback()
        try Self.insert(context, "a", size: 2)   // another size: the pair is new
        try context.save()
        #expect(try Self.names(backend, unique: true, in: dir) == ["a", "a", "b"])
    }

    @Test(arguments: Backend.persistent)
    func storedDuplicatesKeepTheNewModelOutAndTheStoreAsItWas(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, unique: false, ["dup", "dup", "solo"], in: dir)
        #expect {
            _ = try backend.coordinator(Self.model(unique: true), in: dir)
        } throws: { error in
            let text = "\(error)"
            return text.contains("uniqueness constraint on Item(name, size) does not hold for the stored rows: ('dup', 1)")
                && text.contains("The store was not changed")
        }
        // Nothing changed: the old model opens it and still takes duplicates.
        let context = ObjectContext(coordinator: try backend.coordinator(Self.model(unique: false), in: dir))
        try Self.insert(context, "dup")
        try context.save()
        #expect(try Self.names(backend, unique: false, in: dir) == ["dup", "dup", "dup", "solo"])
    }

    /// A version that adds the constraint and an attribute: the store is migrated, and its duplicates are
    /// reported as without a migration (SQLite and PostgreSQL reported their own UNIQUE error, from the index the
    /// migration made), the store left as it was.
    @Test(arguments: Backend.persistent)
    func storedDuplicatesKeepOutAVersionThatAlsoMigrates(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, unique: false, ["dup", "dup", "solo"], in: dir)
        #expect {
            _ = try backend.coordinator(Self.model(unique: true, colored: true), in: dir)
        } throws: { error in
            let text = "\(error)"
            return text.contains("uniqueness constraint on Item(name, size) does not hold for the stored rows: ('dup', 1)")
                && text.contains("The store was not changed")
        }
        #expect(try Self.names(backend, unique: false, in: dir) == ["dup", "dup", "solo"])
        // Without the duplicates the same version migrates, and the new attribute reads its default.
        let clean = try TempDir()
        try Self.seed(backend, unique: false, ["a", "b"], in: clean)
        let context = ObjectContext(coordinator: try backend.coordinator(Self.model(unique: true, colored: true), in: clean))
        let items = try context.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("name")]))
        #expect(try items.map { try $0.get("color", as: String.self) } == ["red", "red"])
    }

    /// Values a migration writes into the rows count for the constraints over them: an added attribute's default
    /// under a constraint added with it, and a default filling an attribute made required under a constraint it
    /// already had. Rows the defaults make equal keep the version out, naming the constraint and the values, on
    /// every backend (LMDB wrote the defaults unchecked, SQLite and PostgreSQL failed with their own UNIQUE error
    /// or none), and the store is left as it was.
    @Test(arguments: Backend.persistent, [false, true])
    func defaultsAMigrationWritesAreHeldToTheConstraints(_ backend: Backend, madeRequired: Bool) throws {
        // Before: Tag(name, note?), unique (name, note) when `madeRequired`. After: a default fills `note` (made
        // required), or an added `color` under a new unique (name, color).
        func model(after: Bool) throws -> ObjectModel {
            var attributes = [AttributeDescription(name: "name", type: .string)]
            var constraints: [[String]] = []
            if madeRequired {
                attributes.append(AttributeDescription(name: "note", type: .string, isOptional: !after, defaultValue: after ? .string("none") : nil))
                constraints = [["name", "note"]]
            } else if after {
                attributes.append(AttributeDescription(name: "color", type: .string, defaultValue: .string("red")))
                constraints = [["name", "color"]]
            }
            return try ObjectModel(
                entities: [EntityDescription(name: "Tag", attributes: attributes, uniquenessConstraints: constraints)],
                configurations: [ConfigurationDescription(name: "Main", entityNames: ["Tag"])])
        }
        func seed(_ names: [String], in dir: TempDir) throws {
            let context = ObjectContext(coordinator: try backend.coordinator(model(after: false), in: dir))
            for name in names { try context.insert("Tag").set("name", name) }
            try context.save()
        }
        let dir = try TempDir()
        try seed(["dup", "dup", "solo"], in: dir)
        let column = madeRequired ? "note" : "color", value = madeRequired ? "none" : "red"
        #expect {
            _ = try backend.coordinator(model(after: true), in: dir)
        } throws: { error in
            "\(error)".contains("uniqueness constraint on Tag(name, \(column)) does not hold for the stored rows: ('dup', '\(value)')")
        }
        let before = ObjectContext(coordinator: try backend.coordinator(model(after: false), in: dir))
        #expect(try before.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")])).map { try $0.get("name", as: String.self) } == ["dup", "dup", "solo"])

        // Rows the defaults leave distinct migrate, and read the default.
        let clean = try TempDir()
        try seed(["a", "b"], in: clean)
        let after = ObjectContext(coordinator: try backend.coordinator(model(after: true), in: clean))
        #expect(try after.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")])).map { try $0.get(column, as: String.self) } == [value, value])
    }

    @Test(arguments: Backend.persistent)
    func aRemovedConstraintNoLongerRefusesDuplicates(_ backend: Backend) throws {
        let dir = try TempDir()
        try Self.seed(backend, unique: true, ["a"], in: dir)
        let context = ObjectContext(coordinator: try backend.coordinator(Self.model(unique: false), in: dir))
        try Self.insert(context, "a")
        try context.save()
        #expect(try Self.names(backend, unique: false, in: dir) == ["a", "a"])
    }

    /// A constraint a version removed and a later version adds back: the rows written in between count. Fetches
    /// by the constrained properties find them (LMDB rebuilds the index it had stopped keeping up to date), and a
    /// duplicate written in between keeps the later version out.
    @Test(arguments: Backend.persistent)
    func aConstraintRemovedThenAddedAgainCountsTheRowsWrittenMeanwhile(_ backend: Backend) throws {
        let clean = try TempDir()
        try Self.seed(backend, unique: true, ["a"], in: clean)
        try Self.seed(backend, unique: false, ["b", "c"], in: clean)
        let context = ObjectContext(coordinator: try backend.coordinator(Self.model(unique: true), in: clean))
        let found = try context.fetch(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "name == 'b' AND size == 1")))
        #expect(found.count == 1, "a row written while the constraint was gone")
        try Self.insert(context, "c")
        #expect(throws: StoreError.self) { try context.save() }

        let dirty = try TempDir()
        try Self.seed(backend, unique: true, ["a"], in: dirty)
        try Self.seed(backend, unique: false, ["a"], in: dirty)
        #expect {
            _ = try backend.coordinator(Self.model(unique: true), in: dirty)
        } throws: { error in
            "\(error)".contains("uniqueness constraint on Item(name, size) does not hold for the stored rows: ('a', 1)")
        }
    }
}

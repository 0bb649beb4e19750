import Foundation
import Switchyard
import Testing

/// How a split matches target entities and properties with the source's when renaming identifiers are involved,
/// through `StoreSplitter`'s public API: rows seeded and read back through the coordinator.
@Suite struct SplitRenameTests {
    static let pairs: [(source: StoreType, destination: StoreType)] = [(.sqlite, .sqlite), (.sqlite, .lmdb), (.lmdb, .sqlite)]

    /// Saves `rows` (entity -> attribute -> values, one object per value index) into a new store of `kind` at
    /// `url` holding every entity of `model`.
    private static func seed(_ kind: StoreType, at url: URL, model: ObjectModel, rows: [String: [String: [String]]]) throws {
        let coordinator = StoreCoordinator(model: model)
        let store = try coordinator.addStore(kind, configuration: ConfigurationDescription.defaultName, at: url)
        defer { try? coordinator.removeStore(store) }
        let context = ObjectContext(coordinator: coordinator)
        for (entity, columns) in rows.sorted(by: { $0.key < $1.key }) {
            let count = columns.values.map(\.count).max() ?? 0
            for i in 0..<count {
                let object = try context.insert(entity)
                for (attribute, values) in columns { try object.set(attribute, values[i]) }
            }
        }
        try context.save()
    }

    /// Every entity's objects in the split's outputs, as "attribute=value" lists sorted, read through a
    /// coordinator over all of `destinations`.
    private static func contents(of destinations: [SplitDestination], model: ObjectModel) throws -> [String: [String]] {
        let coordinator = StoreCoordinator(model: model)
        for destination in destinations {
            try coordinator.addStore(destination.type, configuration: destination.configuration, at: destination.url)
        }
        defer { for store in coordinator.stores { try? coordinator.removeStore(store) } }
        let context = ObjectContext(coordinator: coordinator)
        var found: [String: [String]] = [:]
        for entity in model.entities {
            found[entity.name] = try context.fetch(FetchRequest(entityName: entity.name)).map { object in
                try entity.attributes.map { "\($0.name)=\(try object.get($0.name, as: String.self) ?? "nil")" }.joined(separator: " ")
            }.sorted()
        }
        return found
    }

    /// Plans and runs (verifying content) a split of `source` into stores of `kind` for `configurations` of `model`:
    /// the plan's "source>target" entity pairs, sorted, and the outputs' contents (see `contents`).
    private static func split(
        _ source: URL, into model: ObjectModel, _ configurations: [String], as kind: StoreType, in dir: TempDir
    ) throws -> (plan: [String], contents: [String: [String]]) {
        let destinations = configurations.map {
            SplitDestination(configuration: $0, url: dir.url.appendingPathComponent("\($0).\(kind == .lmdb ? "lmdb" : "sqlite")"), type: kind)
        }
        let splitter = try StoreSplitter(source: source, targetModel: model, destinations: destinations)
        let plan = try splitter.plan()
        _ = try splitter.run(plan, options: SplitOptions(batchSize: 2, verifyContent: true))
        return (plan.entities.map { "\($0.sourceEntity)>\($0.targetEntity)" }.sorted(), try contents(of: destinations, model: model))
    }

    /// A store whose model keeps the renaming identifiers of earlier renames (`Person` was `Employee`, its `name`
    /// was `fullName`) beside a new entity and a new attribute that took the old names, split into that same model.
    /// Each is the source's entity or attribute of the same name: the identifier matched first put the
    /// `Employee` rows into `Person` and `fullName` into `name`, and the `Person` rows were skipped.
    @Test(arguments: pairs)
    func aKeptRenamingIdentifierBesideAReusedNameSplitsByName(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        let model = try ObjectModel(
            entities: [
                EntityDescription(name: "Person", attributes: [
                    AttributeDescription(name: "name", type: .string, renamingIdentifier: "fullName"),
                    AttributeDescription(name: "fullName", type: .string),
                ], renamingIdentifier: "Employee"),
                EntityDescription(name: "Employee", attributes: [AttributeDescription(name: "title", type: .string)]),
            ],
            configurations: [
                ConfigurationDescription(name: "People", entityNames: ["Person"]),
                ConfigurationDescription(name: "Staff", entityNames: ["Employee"]),
            ])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: model, rows: [
            "Person": ["name": ["Ada", "Bo"], "fullName": ["Ada Lovelace", "Bo Diddley"]],
            "Employee": ["title": ["engineer", "clerk", "chef"]],
        ])
        let (plan, contents) = try Self.split(source, into: model, ["People", "Staff"], as: pair.destination, in: temp)
        #expect(plan == ["Employee>Employee", "Person>Person"])
        #expect(contents == [
            "Person": ["name=Ada fullName=Ada Lovelace", "name=Bo fullName=Bo Diddley"],
            "Employee": ["title=chef", "title=clerk", "title=engineer"],
        ])
    }

    /// Renames in a chain (the new `B` was `A`, the new `C` was `B`) and a swap (`X` and `Y` trade names) follow the
    /// renaming identifiers, as in Core Data: a split copies into new stores, so every row can go where its
    /// entity now is (a migration in place refuses these; see `EntityRenameChainTests`).
    @Test(arguments: pairs)
    func chainedAndSwappedRenamesFollowTheIdentifiers(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        func entity(_ name: String, was old: String? = nil) -> EntityDescription {
            EntityDescription(name: name, attributes: [AttributeDescription(name: "value", type: .string)], renamingIdentifier: old)
        }
        let old = try ObjectModel(entities: [entity("A"), entity("B"), entity("X"), entity("Y")])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: old, rows: [
            "A": ["value": ["a1", "a2"]], "B": ["value": ["b1"]], "X": ["value": ["x1"]], "Y": ["value": ["y1", "y2", "y3"]],
        ])
        let new = try ObjectModel(
            entities: [entity("B", was: "A"), entity("C", was: "B"), entity("X", was: "Y"), entity("Y", was: "X")],
            configurations: [
                ConfigurationDescription(name: "Chain", entityNames: ["B", "C"]),
                ConfigurationDescription(name: "Swap", entityNames: ["X", "Y"]),
            ])
        let (plan, contents) = try Self.split(source, into: new, ["Chain", "Swap"], as: pair.destination, in: temp)
        #expect(plan == ["A>B", "B>C", "X>Y", "Y>X"])
        #expect(contents == [
            "B": ["value=a1", "value=a2"], "C": ["value=b1"], "X": ["value=y1", "value=y2", "value=y3"], "Y": ["value=x1"],
        ])
    }

    /// The kept identifier's exception stops where the name it holds was itself renamed away: the source's `Person`
    /// (was `Employee`) becoming `Human` while the new `Employee` becomes `Person` (which says it was `Employee`),
    /// and the same for attributes. Taken as kept, the new `Person` took the old `Person` too and `Employee`'s rows
    /// were dropped (a reviewer's case).
    @Test(arguments: pairs)
    func aKeptIdentifiersNameRenamedAwayIsAChain(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        let old = try ObjectModel(entities: [
            EntityDescription(name: "Person", attributes: [
                AttributeDescription(name: "fullName", type: .string, renamingIdentifier: "name"),
                AttributeDescription(name: "name", type: .string),
            ], renamingIdentifier: "Employee"),
            EntityDescription(name: "Employee", attributes: [AttributeDescription(name: "title", type: .string)]),
        ])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: old, rows: [
            "Person": ["fullName": ["Ada Lovelace"], "name": ["Ada"]], "Employee": ["title": ["engineer", "clerk"]],
        ])
        let new = try ObjectModel(
            entities: [
                EntityDescription(name: "Person", attributes: [AttributeDescription(name: "title", type: .string)], renamingIdentifier: "Employee"),
                EntityDescription(name: "Human", attributes: [
                    AttributeDescription(name: "fullName", type: .string, renamingIdentifier: "name"),
                    AttributeDescription(name: "displayName", type: .string, renamingIdentifier: "fullName"),
                ], renamingIdentifier: "Person"),
            ],
            configurations: [
                ConfigurationDescription(name: "Staff", entityNames: ["Person"]),
                ConfigurationDescription(name: "People", entityNames: ["Human"]),
            ])
        let (plan, contents) = try Self.split(source, into: new, ["Staff", "People"], as: pair.destination, in: temp)
        #expect(plan == ["Employee>Person", "Person>Human"])
        #expect(contents == [
            "Person": ["title=clerk", "title=engineer"], "Human": ["fullName=Ada displayName=Ada Lovelace"],
        ])
    }

    /// An identifier kept through two renames, as Apple's guidance has it (`color`, then `paintColor` was `color`,
    /// then `primaryColor` was `color`), names no element of the source by name: it is matched with the source's
    /// element carrying the same identifier, as Core Data compares identifiers. The value was dropped.
    @Test(arguments: pairs)
    func anIdentifierKeptThroughRenamesMatchesTheSourcesIdentifier(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        let old = try ObjectModel(entities: [
            EntityDescription(name: "Car", attributes: [AttributeDescription(name: "paintColor", type: .string, renamingIdentifier: "color")],
                              renamingIdentifier: "Vehicle"),
        ])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: old, rows: ["Car": ["paintColor": ["red", "blue"]]])
        let new = try ObjectModel(
            entities: [
                EntityDescription(name: "Auto", attributes: [AttributeDescription(name: "primaryColor", type: .string, renamingIdentifier: "color")],
                                  renamingIdentifier: "Vehicle"),
            ],
            configurations: [ConfigurationDescription(name: "Garage", entityNames: ["Auto"])])
        let (plan, contents) = try Self.split(source, into: new, ["Garage"], as: pair.destination, in: temp)
        #expect(plan == ["Car>Auto"])
        #expect(contents == ["Auto": ["primaryColor=blue", "primaryColor=red"]])
    }

    /// A model whose identifiers record an earlier swap (`X` was `Y`, `Y` was `X`) and an earlier chain whose first
    /// name was reused (`B` was `A`, `C` was `B`, a new `A`), split into itself: every entity is its own source. The
    /// identifiers alone sent `X`'s rows to `Y` (values lost) and dropped `B`'s (a second reviewer's cases).
    @Test(arguments: pairs)
    func aModelSplitIntoItselfKeepsEveryEntityDespiteRecordedRenames(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        func entity(_ name: String, was old: String? = nil) -> EntityDescription {
            EntityDescription(name: name, attributes: [AttributeDescription(name: name.lowercased(), type: .string)], renamingIdentifier: old)
        }
        let model = try ObjectModel(
            entities: [entity("X", was: "Y"), entity("Y", was: "X"), entity("B", was: "A"), entity("C", was: "B"), entity("A")],
            configurations: [
                ConfigurationDescription(name: "Swap", entityNames: ["X", "Y"]),
                ConfigurationDescription(name: "Chain", entityNames: ["A", "B", "C"]),
            ])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: model, rows: [
            "X": ["x": ["x1"]], "Y": ["y": ["y1", "y2"]], "A": ["a": ["a1"]], "B": ["b": ["b1", "b2"]], "C": ["c": ["c1"]],
        ])
        let (plan, contents) = try Self.split(source, into: model, ["Swap", "Chain"], as: pair.destination, in: temp)
        #expect(plan == ["A>A", "B>B", "C>C", "X>X", "Y>Y"])
        #expect(contents == ["X": ["x=x1"], "Y": ["y=y1", "y=y2"], "A": ["a=a1"], "B": ["b=b1", "b=b2"], "C": ["c=c1"]])
    }

    /// An identifier kept through one more rename (`Person` was `Employee`, beside a new `Employee`, becomes `Human`
    /// still was `Employee`): `Employee` is kept as it is, so `Human` continues the element carrying its
    /// identifier. The identifier named the new `Employee` first: its rows went to `Human` and `Person`'s were
    /// skipped. And a target of the same name takes precedence over one matching only by a kept identifier, so no
    /// source entity is copied twice.
    @Test(arguments: pairs)
    func aKeptIdentifierCarriedThroughARenameAndNoSourceCopiedTwice(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        func entity(_ name: String, was old: String? = nil) -> EntityDescription {
            EntityDescription(name: name, attributes: [AttributeDescription(name: "value", type: .string)], renamingIdentifier: old)
        }
        let old = try ObjectModel(entities: [entity("Person", was: "Employee"), entity("Employee"), entity("Car", was: "Vehicle")])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: old, rows: [
            "Person": ["value": ["p1", "p2"]], "Employee": ["value": ["e1"]], "Car": ["value": ["c1"]],
        ])
        let new = try ObjectModel(
            entities: [entity("Human", was: "Employee"), entity("Employee"), entity("Auto", was: "Vehicle"), entity("Car")],
            configurations: [
                ConfigurationDescription(name: "People", entityNames: ["Human", "Employee"]),
                ConfigurationDescription(name: "Garage", entityNames: ["Auto", "Car"]),
            ])
        let (plan, contents) = try Self.split(source, into: new, ["People", "Garage"], as: pair.destination, in: temp)
        #expect(plan == ["Car>Car", "Employee>Employee", "Person>Human"])
        #expect(contents == [
            "Human": ["value=p1", "value=p2"], "Employee": ["value=e1"], "Car": ["value=c1"], "Auto": [],
        ])
    }

    /// A rename and a new entity (and attribute) taking the old name, in one model change: `Employee` becomes
    /// `Person` (was `Employee`) beside a new `Employee`, its `name` becomes `fullName` (was `name`) beside a new
    /// `name`. The renamed ones continue the old ones; the new ones start empty. Matched as kept, the old rows went
    /// into the new `Employee` and `Person` stayed empty (a third reviewer's case).
    @Test(arguments: pairs)
    func aRenameBesideANewEntityTakingTheOldNameMovesTheRows(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        let old = try ObjectModel(entities: [EntityDescription(name: "Employee", attributes: [AttributeDescription(name: "name", type: .string)])])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: old, rows: ["Employee": ["name": ["Ada", "Bo"]]])
        let new = try ObjectModel(
            entities: [
                EntityDescription(name: "Person", attributes: [
                    AttributeDescription(name: "fullName", type: .string, renamingIdentifier: "name"),
                    AttributeDescription(name: "name", type: .string),
                ], renamingIdentifier: "Employee"),
                EntityDescription(name: "Employee", attributes: [AttributeDescription(name: "title", type: .string)]),
            ],
            configurations: [
                ConfigurationDescription(name: "People", entityNames: ["Person"]),
                ConfigurationDescription(name: "Staff", entityNames: ["Employee"]),
            ])
        let (plan, contents) = try Self.split(source, into: new, ["People", "Staff"], as: pair.destination, in: temp)
        #expect(plan == ["Employee>Person"])
        #expect(contents == ["Person": ["fullName=Ada name=nil", "fullName=Bo name=nil"], "Employee": []])
    }

    /// An identifier a kept entity carries, declared again by a rename: `Person` (was `Employee`) kept as it is,
    /// `Worker` (was `Employee`) beside a new `Employee`. `Worker` continues the old `Employee`; the new one starts
    /// empty. Counted as carried through renames, the old rows went into the new `Employee` (a fourth check's case).
    @Test(arguments: pairs)
    func anIdentifierAKeptEntityCarriesStillRenamesAnother(_ pair: (source: StoreType, destination: StoreType)) throws {
        let temp = try TempDir()
        func entity(_ name: String, was old: String? = nil) -> EntityDescription {
            EntityDescription(name: name, attributes: [AttributeDescription(name: "value", type: .string)], renamingIdentifier: old)
        }
        let old = try ObjectModel(entities: [entity("Person", was: "Employee"), entity("Employee")])
        let source = temp.url.appendingPathComponent(pair.source == .lmdb ? "Legacy.lmdb" : "Legacy.sqlite")
        try Self.seed(pair.source, at: source, model: old, rows: ["Person": ["value": ["p1"]], "Employee": ["value": ["e1", "e2"]]])
        let new = try ObjectModel(
            entities: [entity("Person", was: "Employee"), entity("Worker", was: "Employee"), entity("Employee")],
            configurations: [ConfigurationDescription(name: "All", entityNames: ["Person", "Worker", "Employee"])])
        let (plan, contents) = try Self.split(source, into: new, ["All"], as: pair.destination, in: temp)
        #expect(plan == ["Employee>Worker", "Person>Person"])
        #expect(contents == ["Person": ["value=p1"], "Worker": ["value=e1", "value=e2"], "Employee": []])
    }
}

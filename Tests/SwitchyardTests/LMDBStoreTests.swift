import Foundation
import Testing
@testable import Switchyard

/// `LMDBStore` beyond the conformance suite: layout, index use, uniqueness through indexes, entity numbers,
/// read-only opening, sharing one environment, destroy, and foreign or damaged files.
@Suite struct LMDBStoreTests {
    let model: ObjectModel
    let dir = TemporaryDirectory()

    init() throws { model = try SQLiteTestModels.garage() }

    private func open(_ name: String = "garage", configuration: String = "Garage", options: StoreOptions = .default) throws -> LMDBStore {
        try LMDBStore(url: dir.file("\(name).lmdb"), model: model, configuration: configuration, options: options)
    }

    /// Inserts `rows` with freshly allocated keys (the shared test helper, which works on any store).
    @discardableResult
    private func insert(_ rows: [StoreRow], into store: LMDBStore) throws -> [StoreRow] {
        try SQLiteTestModels.insert(rows, into: store)
    }

    private func predicate(_ format: String, _ arguments: PredicateArgument...) throws -> FetchPredicate {
        try FetchPredicate(format: format, arguments: arguments)
    }

    // MARK: - Layout

    @Test func newStoreIsADirectoryWithNamedDatabases() throws {
        let store = try open()
        let path = try #require(store.url?.path)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: path)) == ["data.mdb", "lock.mdb"])
        let names = try store.environment.read { txn -> [String] in
            let main = try #require(try LMDBDatabase.open(nil, in: txn))
            let cursor = try LMDBCursor(main, in: txn)
            var names: [String] = []
            var entry = try cursor.first()
            while let e = entry {
                names.append(String(decoding: e.key, as: UTF8.self))
                entry = try cursor.next()
            }
            return names
        }
        #expect(names == [
            "index:Note:text", "index:Owner:favorite", "index:Vehicle:owner", "index:Vehicle:plate", "links", "meta", "modelcache", "rows",
        ])
        let metadata = try store.metadata()
        #expect(metadata.storeType == "LMDB")
        #expect(metadata.versionHashes == model.versionHashes)
        #expect(metadata.versionIdentifiers == ["g1"])
        // Rows are keyed by the root's number (Vehicle = 5) and the primary key, big-endian.
        let car = try insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "C-1"])], into: store)[0]
        let key = try store.environment.read { txn in
            try txn.get(store.databases.rows, LMDBRowKey.make(root: 5, primaryKey: car.primaryKey))
        }
        #expect(key?.first == LMDBRowCoding.formatVersion)
        #expect(key?[1] == 6)   // concrete entity: Car
        let max = try store.environment.read { txn in try txn.get(store.databases.meta, Array("max:Vehicle".utf8)) }
        #expect(max == [0, 0, 0, 0, 0, 0, 0, 1])
    }

    // MARK: - Indexes

    @Test func equalityAndInOnAnIndexedAttributeReadOnlyTheMatchingRows() throws {
        let store = try open()
        try insert((0..<200).map { StoreRow(entityName: "Note", primaryKey: 0, values: ["text": .string("n\($0 % 100)")]) }, into: store)
        func fetch(_ p: FetchPredicate) throws -> [StoreRow] {
            try store.fetch(StoreFetchRequest(entityName: "Note", predicate: p))
        }
        #expect(try fetch(try predicate("text == 'n42'")).map(\.primaryKey) == [43, 143])
        #expect(store.lastFetchRowsVisited == 2)
        #expect(try fetch(try predicate("text IN {'n1', 'n2', 'nope', nil}")).count == 4)
        #expect(store.lastFetchRowsVisited == 4)
        // Inside an AND, the index narrows and the rest of the predicate filters.
        #expect(try fetch(try predicate("(text == 'n7') AND NOT (text BEGINSWITH 'x')")).count == 2)
        #expect(store.lastFetchRowsVisited == 2)
        #expect(try store.count(StoreFetchRequest(entityName: "Note", predicate: try predicate("'n9' == text"))) == 2)
        #expect(store.lastFetchRowsVisited == 2)
        // No index for these: every row is visited.
        #expect(try fetch(try predicate("text ==[c] 'N42'")).count == 2)
        #expect(store.lastFetchRowsVisited == 200)
        #expect(try fetch(try predicate("text == 'n42' OR text == 'n43'")).count == 4)
        #expect(store.lastFetchRowsVisited == 200)
        #expect(try fetch(try predicate("text BEGINSWITH 'n4'")).count == 22)
        #expect(store.lastFetchRowsVisited == 200)
        // A miss reads nothing.
        #expect(try fetch(try predicate("text == 'absent'")).isEmpty)
        #expect(store.lastFetchRowsVisited == 0)
        // Values longer than an index key holds share a cut entry: the rows it names are checked.
        let long = String(repeating: "x", count: 500)
        try insert([StoreRow(entityName: "Note", primaryKey: 0, values: ["text": .string(long + "a")]),
                    StoreRow(entityName: "Note", primaryKey: 0, values: ["text": .string(long + "b")])], into: store)
        #expect(try fetch(try predicate("text == %@", .string(long + "b"))).map { $0["text"] } == [.string(long + "b")])
        #expect(store.lastFetchRowsVisited == 2)
        // A String with U+0000 is refused on every backend (SQLite would cut it): ValueFidelityTests.
        #expect(throws: StoreError.self) {
            try insert([StoreRow(entityName: "Note", primaryKey: 0, values: ["text": .string("nul\u{0}byte")])], into: store)
        }
        #expect(try fetch(try predicate("text == %@", .string("nul\u{0}byte"))).isEmpty)
    }

    @Test func equalityOnAToOneFollowsTheEvaluatorEvenWhenTheTargetIsGone() throws {
        let store = try open()
        let owner = try insert([StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Ann"])], into: store)[0]
        try insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "C"], toOne: ["owner": owner.reference])], into: store)
        let byOwner = StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("owner == %@", .integer(owner.primaryKey)))
        #expect(try store.count(byOwner) == 1)
        // The owner goes, the reference stays (no delete rule at this level): like the memory store, the key
        // path now reads nil, though the relationship index still names the car.
        try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Owner", primaryKey: owner.primaryKey, expectedVersion: 1)]))
        #expect(try store.count(byOwner) == 0)
        #expect(store.lastFetchRowsVisited == 1)
        let memory = try InMemoryStore(model: model, configuration: "Garage")
        let ownerKey = try memory.allocatePrimaryKeys(for: "Owner", count: 1).lowerBound
        let carKey = try memory.allocatePrimaryKeys(for: "Car", count: 1).lowerBound
        try memory.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Owner", primaryKey: ownerKey),
            StoreRow(entityName: "Car", primaryKey: carKey, toOne: ["owner": RowReference(entityName: "Owner", primaryKey: ownerKey)]),
        ]))
        try memory.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Owner", primaryKey: ownerKey, expectedVersion: 1)]))
        #expect(try memory.count(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("owner == %@", .integer(ownerKey)))) == 0)
    }

    @Test func indexFollowsUpdatesDeletesAndRelationshipKeys() throws {
        let store = try open()
        let owners = try insert([StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Ann"]),
                                 StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Bob"])], into: store)
        var vehicles: [StoreRow] = []
        for i in 0..<60 {
            vehicles += try insert([StoreRow(entityName: i % 2 == 0 ? "Car" : "Truck", primaryKey: 0, values: ["plate": .string("P\(i)")],
                                             toOne: ["owner": owners[i % 3 == 0 ? 0 : 1].reference])], into: store)
        }
        let byOwner = StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("owner == %@", .integer(owners[0].primaryKey)))
        #expect(try store.count(byOwner) == 20)
        #expect(store.lastFetchRowsVisited == 20)
        #expect(try store.count(StoreFetchRequest(entityName: "Car", predicate: byOwner.predicate)) == 10)
        // To-many through the inverse's index.
        let many = try store.fetch(StoreFetchRequest(entityName: "Owner", predicate: try predicate("cars.@count > 20")))
        #expect(many.map { $0["name"] } == ["Bob"])
        #expect(try store.fetch(StoreFetchRequest(entityName: "Owner", predicate: try predicate("ANY cars.plate == 'P3'"))).map { $0["name"] } == ["Ann"])
        // Change a plate and an owner, delete a vehicle: the indexes follow.
        let v = vehicles[3]
        try store.save(StoreChangeSet(
            updates: [RowUpdate(entityName: v.entityName, primaryKey: v.primaryKey, expectedVersion: 1, values: ["plate": "NEW"],
                                toOne: ["owner": owners[1].reference])],
            deletes: [RowDeletion(entityName: vehicles[6].entityName, primaryKey: vehicles[6].primaryKey, expectedVersion: 1)]))
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("plate == 'P3'"))) == 0)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("plate == 'NEW'"))).map(\.primaryKey) == [v.primaryKey])
        #expect(store.lastFetchRowsVisited == 1)
        #expect(try store.count(byOwner) == 18)
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("plate == 'P6'"))) == 0)
        // Clearing a to-one removes its index entry.
        try store.save(StoreChangeSet(updates: [RowUpdate(entityName: v.entityName, primaryKey: v.primaryKey, expectedVersion: 2, toOne: ["owner": nil])]))
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("owner == nil"))) == 1)
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("owner == %@", .integer(owners[1].primaryKey)))) == 40)
    }

    @Test func numericEqualityThroughAnIndexMatchesEveryNumericCase() throws {
        // Integer, double, boolean and date values that compare equal must all be found through one index.
        let entity = EntityDescription(
            name: "Reading",
            attributes: [
                AttributeDescription(name: "tally", type: .integer64, isIndexed: true),
                AttributeDescription(name: "level", type: .double, isIndexed: true),
                AttributeDescription(name: "at", type: .date, isIndexed: true),
                AttributeDescription(name: "price", type: .decimal, isIndexed: true),
            ])
        let readings = try ObjectModel(entities: [entity])
        let store = try LMDBStore(url: dir.file("readings.lmdb"), model: readings, configuration: "Default")
        let keys = try store.allocatePrimaryKeys(for: "Reading", count: 3)
        try store.save(StoreChangeSet(inserts: keys.map { pk in
            StoreRow(entityName: "Reading", primaryKey: pk, values: [
                "tally": .integer(pk == 3 ? Int64.max : pk), "level": .double(Double(pk) / 2), "at": .date(Date(timeIntervalSinceReferenceDate: Double(pk))),
                "price": .decimal(Decimal(pk) / 4),
            ])
        }))
        func count(_ format: String, _ args: PredicateArgument...) throws -> Int {
            try store.count(StoreFetchRequest(entityName: "Reading", predicate: try FetchPredicate(format: format, arguments: args)))
        }
        #expect(try count("tally == 2.0") == 1)
        #expect(try count("tally == YES") == 1)
        #expect(try count("tally == %@", .integer(Int64.max)) == 1)
        #expect(try count("tally == %@", .integer(Int64.max - 1)) == 0)   // same Double, not the same integer
        #expect(try count("level == 1") == 1)
        #expect(try count("level IN {0.5, 1.5, 7}") == 2)
        #expect(try count("at == %@", .date(Date(timeIntervalSinceReferenceDate: 2))) == 1)
        #expect(try count("at == 2") == 1)
        #expect(try count("price == 0.5") == 1)
        #expect(try count("price == 'x'") == 0)
    }

    @Test func indexMissingFromAnOlderStoreIsBuiltOnOpen() throws {
        let plain = EntityDescription(name: "Item", attributes: [AttributeDescription(name: "sku", type: .string)])
        var indexed = plain
        indexed.indexes = [IndexDescription(name: "bySKU", properties: ["sku"])]
        let before = try ObjectModel(entities: [plain])
        let after = try ObjectModel(entities: [indexed])
        do {
            let store = try LMDBStore(url: dir.file("items.lmdb"), model: before, configuration: "Default")
            let keys = try store.allocatePrimaryKeys(for: "Item", count: 50)
            try store.save(StoreChangeSet(inserts: keys.map { StoreRow(entityName: "Item", primaryKey: $0, values: ["sku": .string("s\($0)")]) }))
            _ = try store.fetch(StoreFetchRequest(entityName: "Item", predicate: try predicate("sku == 's7'")))
            #expect(store.lastFetchRowsVisited == 50)
        }
        let store = try LMDBStore(url: dir.file("items.lmdb"), model: after, configuration: "Default")
        #expect(try store.fetch(StoreFetchRequest(entityName: "Item", predicate: try predicate("sku == 's7'"))).map(\.primaryKey) == [7])
        #expect(store.lastFetchRowsVisited == 1)
    }

    // MARK: - Uniqueness and conflicts

    @Test func uniquenessSpansTheTableAndAllowsReplacingInOneSave() throws {
        let store = try open()
        try insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "SAME"])], into: store)
        let keys = try store.allocatePrimaryKeys(for: "Truck", count: 2)
        #expect {
            try store.save(StoreChangeSet(inserts: [
                StoreRow(entityName: "Truck", primaryKey: keys.lowerBound, values: ["plate": "OTHER"]),
                StoreRow(entityName: "Truck", primaryKey: keys.upperBound, values: ["plate": "SAME"]),
            ]))
        } throws: { error in
            (error as? StoreError) == .uniquenessViolation(path: store.url!.path, configuration: store.configurationName, entity: "Truck", properties: ["plate"], values: ["\"SAME\""])
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle")) == 1)
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("plate == 'OTHER'"))) == 0)
        // An update into a taken value is a violation too; NULLs never collide.
        let truck = try insert([StoreRow(entityName: "Truck", primaryKey: 0, values: ["plate": "T"])], into: store)[0]
        #expect(throws: StoreError.self) {
            try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "Truck", primaryKey: truck.primaryKey, expectedVersion: 1, values: ["plate": "SAME"])]))
        }
        try insert([StoreRow(entityName: "Car", primaryKey: 0), StoreRow(entityName: "Truck", primaryKey: 0)], into: store)
        // Delete the holder and insert a new one with its value in the same save.
        let old = try #require(try store.fetch(StoreFetchRequest(entityName: "Car", predicate: try predicate("plate == 'SAME'"))).first)
        try store.save(StoreChangeSet(
            inserts: [StoreRow(entityName: "Truck", primaryKey: keys.lowerBound, values: ["plate": "SAME"])],
            deletes: [RowDeletion(entityName: "Car", primaryKey: old.primaryKey, expectedVersion: 1)]))
        #expect(try store.fetch(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("plate == 'SAME'"))).map(\.entityName) == ["Truck"])
        // The same primary key twice.
        #expect { try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Car", primaryKey: keys.lowerBound)])) }
            throws: { ($0 as? StoreError) == .uniquenessViolation(path: store.url!.path, configuration: store.configurationName, entity: "Car", properties: ["Z_PK"], values: ["\(keys.lowerBound)"]) }
    }

    @Test func failedSavesWriteNothingAndNameTheProblem() throws {
        let store = try open("types", configuration: "Types")
        let path = store.url!.path
        let keys = try store.allocatePrimaryKeys(for: "AllTypes", count: 3)
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "AllTypes", primaryKey: keys.lowerBound, values: ["str": "a"])]))
        func attempt(_ values: [String: AttributeValue]) throws {
            try store.save(StoreChangeSet(
                inserts: [StoreRow(entityName: "AllTypes", primaryKey: keys.lowerBound + 1, values: ["str": "b"]),
                          StoreRow(entityName: "AllTypes", primaryKey: keys.upperBound, values: values)]))
        }
        #expect { try attempt(["i16": .integer(40_000)]) } throws: { error in
            guard case StoreError.invalidValue(path, _, "AllTypes", "i16", _, "Integer 16")? = error as? StoreError else { return false }
            return true
        }
        #expect(throws: StoreError.self) { try attempt(["when": .double(1)]) }
        #expect(throws: StoreError.unknownProperty(path: path, configuration: store.configurationName, entity: "AllTypes", property: "nosuch")) { try attempt(["nosuch": 1]) }
        #expect(throws: StoreError.self) {
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "AllTypes", primaryKey: -1)]))
        }
        #expect { try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "AllTypes", primaryKey: 77, expectedVersion: 1)])) }
            throws: { ($0 as? StoreError) == .conflict(path: path, configuration: store.configurationName, objectID: ObjectID(store: store.identifier, entityName: "AllTypes", primaryKey: 77), entity: "AllTypes", primaryKey: 77, expectedVersion: 1, actualVersion: nil) }
        // A stale update is a conflict whatever else is wrong with it (the memory store's order of checks).
        #expect { try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "AllTypes", primaryKey: keys.lowerBound, expectedVersion: 5, values: ["nosuch": 1])])) }
            throws: { ($0 as? StoreError) == .conflict(path: path, configuration: store.configurationName, objectID: ObjectID(store: store.identifier, entityName: "AllTypes", primaryKey: keys.lowerBound), entity: "AllTypes", primaryKey: keys.lowerBound, expectedVersion: 5, actualVersion: 1) }
        #expect { try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "AllTypes", primaryKey: keys.lowerBound, expectedVersion: 1, values: ["nosuch": 1])])) }
            throws: { ($0 as? StoreError) == .unknownProperty(path: path, configuration: store.configurationName, entity: "AllTypes", property: "nosuch") }
        #expect(try store.fetch(StoreFetchRequest(entityName: "AllTypes")).map { $0["str"] } == ["a"])
        #expect(try store.allocatePrimaryKeys(for: "AllTypes", count: 1) == 4...4)
        #expect(throws: StoreError.self) { try store.allocatePrimaryKeys(for: "AllTypes", count: 0) }
        #expect(throws: StoreError.self) { try store.allocatePrimaryKeys(for: "Owner", count: 1) }
    }

    /// Cuts the last 10 bytes off the stored `AllTypes` row `primaryKey` (inside its last value's payload):
    /// the table's root number, the row's key and the damaged bytes now stored.
    private func cutAllTypesRow(_ primaryKey: Int64, in store: LMDBStore) throws -> (root: Int, key: [UInt8], damaged: [UInt8]) {
        let root = try #require(store.schema.layout(named: "AllTypes")).rootNumber
        let key = LMDBRowKey.make(root: root, primaryKey: primaryKey)
        var damaged: [UInt8] = []
        try store.environment.write { txn in
            let whole = try #require(try txn.get(store.databases.rows, key))
            damaged = Array(whole.prefix(whole.count - 10))
            try txn.put(store.databases.rows, key, damaged)
        }
        return (root, key, damaged)
    }

    /// An update of a damaged row (the patch path, which copies unchanged values as bytes) stops with an error
    /// naming the store and the row, and writes nothing: the damaged bytes stay as they were, and so does every
    /// other row of the save.
    @Test func updatingADamagedRowNamesTheStoreAndWritesNothing() throws {
        let store = try open("types", configuration: "Types")
        let keys = try store.allocatePrimaryKeys(for: "AllTypes", count: 2)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "AllTypes", primaryKey: keys.lowerBound, values: ["str": "intact", "i16": 1]),
            StoreRow(entityName: "AllTypes", primaryKey: keys.upperBound, values: ["str": "to be cut", "i32": 2, "blob": .binary(Data(count: 40))]),
        ]))
        let (root, damagedKey, damaged) = try cutAllTypesRow(keys.upperBound, in: store)   // inside the blob's payload
        #expect {
            try store.save(StoreChangeSet(updates: [
                RowUpdate(entityName: "AllTypes", primaryKey: keys.lowerBound, expectedVersion: 1, values: ["i32": 7]),
                RowUpdate(entityName: "AllTypes", primaryKey: keys.upperBound, expectedVersion: 1, values: ["i64": 9]),
            ]))
        } throws: { error in
            guard case StoreError.notAStore(let path, .lmdb, let reason)? = error as? StoreError else { return false }
            return path == store.path && reason.contains("damaged row p\(keys.upperBound)")
        }
        try store.environment.read { txn in
            #expect(try txn.get(store.databases.rows, damagedKey) == damaged, "the damaged row is left as it was")
            // (Read by key: a scan would stop at the damaged row.)
            let intact = try #require(try LMDBReader(store: store, transaction: txn).row(root: root, primaryKey: keys.lowerBound))
            #expect(intact.version == 1 && intact["i32"] == nil, "the other update of the failed save was not written")
        }
    }

    /// A fetch that meets a damaged row (text cut inside its payload, read by the decoding that writes values
    /// straight into their slots) stops with an error naming the store and the row; the row stays as it was.
    @Test func fetchingADamagedRowNamesTheStoreAndChangesNothing() throws {
        let store = try open("types-fetch", configuration: "Types")
        let keys = try store.allocatePrimaryKeys(for: "AllTypes", count: 2)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "AllTypes", primaryKey: keys.lowerBound, values: ["str": "intact", "i16": 1]),
            StoreRow(entityName: "AllTypes", primaryKey: keys.upperBound, values: ["i32": 2, "str": .string(String(repeating: "to be cut ", count: 4))]),
        ]))
        let (_, damagedKey, damaged) = try cutAllTypesRow(keys.upperBound, in: store)   // inside the text's payload
        #expect {
            _ = try store.fetch(StoreFetchRequest(entityName: "AllTypes"))
        } throws: { error in
            guard case StoreError.notAStore(let path, .lmdb, let reason)? = error as? StoreError else { return false }
            return path == store.path && reason.contains("damaged row p\(keys.upperBound)")
        }
        // Reading which rows match, comparing the cut text from the encoded bytes: the same error.
        #expect {
            try store.fetchReferences(StoreFetchRequest(entityName: "AllTypes", predicate: try FetchPredicate(format: "str == %@", "x"))) { _ in }
        } throws: { error in
            guard case StoreError.notAStore(let path, .lmdb, let reason)? = error as? StoreError else { return false }
            return path == store.path && reason.contains("damaged row p\(keys.upperBound)")
        }
        let stored = try store.environment.read { txn in try txn.get(store.databases.rows, damagedKey) }
        #expect(stored == damaged, "the damaged row is left as it was")
    }

    // MARK: - Reopening

    @Test func reopenWithAModelThatRenumbersEntitiesKeepsRows() throws {
        do {
            let store = try open()
            let car = try insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "C", "doors": 2])], into: store)[0]
            try insert([StoreRow(entityName: "Truck", primaryKey: 0, values: ["plate": "T"])], into: store)
            try insert([StoreRow(entityName: "Owner", primaryKey: 0, toOne: ["favorite": car.reference])], into: store)
        }
        // An entity named "Aardvark" takes number 1 in Core Data's numbering; every other number shifts by one.
        let grown = try ObjectModel(
            entities: model.entities.map {
                EntityDescription(name: $0.name, parent: $0.parentName, isAbstract: $0.isAbstract, attributes: $0.attributes,
                                  relationships: $0.relationships, uniquenessConstraints: $0.uniquenessConstraints, indexes: $0.indexes)
            } + [EntityDescription(name: "Aardvark")],
            configurations: model.configurations + [ConfigurationDescription(name: "Zoo", entityNames: ["Aardvark"])])
        #expect(grown.entity(named: "Car")?.entityNumber == 7)
        let store = try LMDBStore(url: dir.file("garage.lmdb"), model: grown, configuration: "Garage")
        #expect(try store.fetch(StoreFetchRequest(entityName: "Vehicle")).map(\.entityName) == ["Car", "Truck"])
        #expect(try store.fetch(StoreFetchRequest(entityName: "Owner")).first?.toOne["favorite"]?.entityName == "Car")
        #expect(try store.fetch(StoreFetchRequest(entityName: "Car", predicate: try predicate("doors == 2"))).count == 1)
        #expect(try store.allocatePrimaryKeys(for: "Truck", count: 1) == 3...3)
    }

    @Test func propertyPositionsSurviveAddedDroppedAndReorderedAttributes() throws {
        func model(_ attributes: [AttributeDescription]) throws -> ObjectModel {
            try ObjectModel(entities: [EntityDescription(name: "Item", attributes: attributes)])
        }
        let v1 = try model([
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "price", type: .double),
            AttributeDescription(name: "sku", type: .string, isIndexed: true),
        ])
        // `aardvark` sorts first and `price` is gone: in model order every position would shift.
        let v2 = try model([
            AttributeDescription(name: "aardvark", type: .integer64), AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "sku", type: .string, isIndexed: true), AttributeDescription(name: "color", type: .string),
        ])
        let url = dir.file("evolving.lmdb")
        do {
            let store = try LMDBStore(url: url, model: v1, configuration: "Default")
            let keys = try store.allocatePrimaryKeys(for: "Item", count: 2)
            try store.save(StoreChangeSet(inserts: keys.map {
                StoreRow(entityName: "Item", primaryKey: $0, values: ["name": .string("n\($0)"), "price": .double(Double($0)), "sku": .string("s\($0)")])
            }))
        }
        do {
            let store = try LMDBStore(url: url, model: v2, configuration: "Default")
            #expect(try store.fetch(StoreFetchRequest(entityName: "Item")).map(\.values) == [
                ["name": "n1", "sku": "s1"], ["name": "n2", "sku": "s2"],
            ])
            #expect(try store.fetch(StoreFetchRequest(entityName: "Item", predicate: try predicate("sku == 's2'"))).map(\.primaryKey) == [2])
            let key = try store.allocatePrimaryKeys(for: "Item", count: 1).lowerBound
            try store.save(StoreChangeSet(
                inserts: [StoreRow(entityName: "Item", primaryKey: key, values: ["aardvark": 7, "name": "new", "color": "red"])],
                updates: [RowUpdate(entityName: "Item", primaryKey: 1, expectedVersion: 1, values: ["color": "blue"])]))
            #expect(try store.fetch(StoreFetchRequest(entityName: "Item", predicate: try predicate("color != nil"))).map(\.values) == [
                ["name": "n1", "sku": "s1", "color": "blue"], ["aardvark": 7, "name": "new", "color": "red"],
            ])
        }
        // Back to the first model: opening with v2 migrated the store (Core Data's semantics: a removed
        // attribute's values are dropped), so price comes back empty rather than resurrected.
        let store = try LMDBStore(url: url, model: v1, configuration: "Default")
        #expect(try store.fetch(StoreFetchRequest(entityName: "Item")).map(\.values) == [
            ["name": "n1", "sku": "s1"], ["name": "n2", "sku": "s2"], ["name": "new"],
        ])
    }

    @Test func readOnlyStoreRejectsWritesAndLeavesDataAlone() throws {
        do {
            let store = try open()
            try insert([StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Ann"])], into: store)
        }
        let path = dir.file("garage.lmdb").path
        let before = fileSHA256(path + "/data.mdb")
        do {
            let store = try open(options: .readOnly)
            #expect(store.isReadOnly)
            #expect(try store.fetch(StoreFetchRequest(entityName: "Owner")).map { $0["name"] } == ["Ann"])
            #expect(try store.fetch(StoreFetchRequest(entityName: "Vehicle", predicate: try predicate("plate == 'x'"))).isEmpty)
            func isReadOnly(_ error: any Error) -> Bool {
                guard case StoreError.readOnly(let p, _, _)? = error as? StoreError else { return false }
                return p == path
            }
            #expect(performing: { try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Owner", primaryKey: 9)])) }, throws: isReadOnly)
            #expect(performing: { try store.allocatePrimaryKeys(for: "Owner", count: 1) }, throws: isReadOnly)
            #expect(performing: { try store.setMetadata(try store.metadata()) }, throws: isReadOnly)
            #expect(performing: { try store.destroy() }, throws: isReadOnly)
            // One environment per directory and process: while it is open read-only, no writer can open it.
            #expect { try open() } throws: { error in
                guard case StoreError.openFailed(let p, _, let reason)? = error as? StoreError else { return false }
                return p == path && reason.contains("read-only")
            }
        }
        #expect(fileSHA256(path + "/data.mdb") == before)
        #expect { try LMDBStore(url: dir.file("absent.lmdb"), model: model, configuration: "Garage", options: .readOnly) }
            throws: { error in
                guard case StoreError.openFailed(let p, "Garage", _)? = error as? StoreError else { return false }
                return p == dir.file("absent.lmdb").path
            }
        #expect(!FileManager.default.fileExists(atPath: dir.file("absent.lmdb").path))
    }

    @Test func twoStoresOnOneDirectoryShareTheEnvironment() throws {
        let first = try open()
        // The same directory through a symlink.
        try FileManager.default.createSymbolicLink(at: dir.file("alias.lmdb"), withDestinationURL: dir.file("garage.lmdb"))
        let second = try LMDBStore(url: dir.file("alias.lmdb"), model: model, configuration: "Garage")
        #expect(first.environment === second.environment)
        try insert([StoreRow(entityName: "Note", primaryKey: 0, values: ["text": "hi"])], into: first)
        #expect(try second.count(StoreFetchRequest(entityName: "Note")) == 1)
        #expect(try second.allocatePrimaryKeys(for: "Note", count: 1) == 2...2)
        try first.destroy()
        #expect(throws: StoreError.closed(path: first.url!.path, configuration: first.configurationName)) { try first.fetch(StoreFetchRequest(entityName: "Note")) }
        #expect(throws: StoreError.self) { try second.fetch(StoreFetchRequest(entityName: "Note")) }
        #expect(!FileManager.default.fileExists(atPath: first.url!.path))
        // A new store at the same place starts empty in a new environment.
        let third = try open()
        #expect(third.environment !== first.environment)
        #expect(try third.count(StoreFetchRequest(entityName: "Note")) == 0)
    }

    // MARK: - Foreign and damaged files

    enum Foreign: String, CaseIterable, Sendable {
        case randomBytes, textFile, sqliteFile, truncated, shortMetaPages, plainFile, otherFiles, foreignLMDB
    }

    @Test(arguments: Foreign.allCases)
    func foreignFilesAreNotAStore(kind: Foreign) throws {
        let store = dir.file("\(kind.rawValue).lmdb")
        let data = store.appendingPathComponent("data.mdb")
        if kind != .plainFile { try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true) }
        switch kind {
        case .randomBytes:
            var generator = SystemRandomNumberGenerator()
            try Data((0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: data)
        case .textFile:
            try Data(String(repeating: "just some text, long enough to look like a file\n", count: 200).utf8).write(to: data)
        case .sqliteFile:
            let sqlite = try SQLiteStore(url: dir.file("real.sqlite"), model: model, configuration: "Garage")
            try FileManager.default.copyItem(at: try #require(sqlite.url), to: data)
        case .truncated, .shortMetaPages:
            do {
                let whole = try LMDBStore(url: dir.file("whole.lmdb"), model: model, configuration: "Garage")
                try insert((0..<300).map { StoreRow(entityName: "Note", primaryKey: 0, values: ["text": .string(String(repeating: "t", count: $0))]) }, into: whole)
            }
            let bytes = try Data(contentsOf: dir.file("whole.lmdb/data.mdb"))
            try bytes.prefix(kind == .truncated ? bytes.count / 2 : 5000).write(to: data)
        case .plainFile:
            try Data("not a directory".utf8).write(to: store)
        case .otherFiles:
            try Data("notes".utf8).write(to: store.appendingPathComponent("notes.txt"))
        case .foreignLMDB:
            let environment = try LMDBEnvironment.shared(path: store.path, configuration: "Default", mapSize: 1 << 20, maxDatabases: 4, readOnly: false)
            try environment.write { txn in
                let other = try #require(try LMDBDatabase.open("someone-else", flags: .create, in: txn))
                try txn.put(other, Array("k".utf8), Array("v".utf8))
            }
        }
        let watched = kind == .plainFile ? store.path : (kind == .otherFiles ? store.appendingPathComponent("notes.txt").path : data.path)
        let before = fileSHA256(watched)
        for options in [StoreOptions.default, .readOnly] {
            #expect {
                try LMDBStore(url: store, model: model, configuration: "Garage", options: options)
            } throws: { error in
                guard case StoreError.notAStore(let path, .lmdb, let reason)? = error as? StoreError else { return false }
                return path == store.path && !reason.isEmpty && "\(error)".contains(store.path)
            }
        }
        #expect(fileSHA256(watched) == before)
        if kind == .otherFiles { #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["notes.txt"]) }
    }

    @Test func emptyDirectoryBecomesAStore() throws {
        try FileManager.default.createDirectory(at: dir.file("empty.lmdb"), withIntermediateDirectories: true)
        let store = try LMDBStore(url: dir.file("empty.lmdb"), model: model, configuration: "Garage")
        #expect(try store.count(StoreFetchRequest(entityName: "Owner")) == 0)
    }
}

import Foundation
import Testing
@testable import Switchyard

/// `SQLiteStore`: Core Data's file layout, values, keys, saves, read-only opening and foreign files.
@Suite(.enabled(if: SQLite3.available, "the sqlite3 shell (/usr/bin/sqlite3) is needed to inspect store files"))
struct SQLiteStoreTests {
    let model: ObjectModel
    let dir = TemporaryDirectory()

    init() throws { model = try SQLiteTestModels.garage() }

    private func open(_ name: String = "garage", configuration: String = "Garage", options: StoreOptions = .default) throws -> SQLiteStore {
        try SQLiteStore(url: dir.file("\(name).sqlite"), model: model, configuration: configuration, options: options)
    }

    // MARK: - Layout

    @Test func newStoreHasCoreDataLayout() throws {
        let store = try open()
        let path = try #require(store.url?.path)
        let tables = try SQLite3.query(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        #expect(tables.split(separator: "\n") == ["ZNOTE", "ZOWNER", "ZTAG", "ZVEHICLE", "Z_3TAGS", "Z_METADATA", "Z_MODELCACHE", "Z_PRIMARYKEY"])
        // Owner(3).tags <<->> Tag(4).owners: Core Data's join table, named after the lower-numbered end.
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_3TAGS'")
            == "CREATE TABLE Z_3TAGS ( Z_3OWNERS INTEGER, Z_4TAGS INTEGER, PRIMARY KEY (Z_3OWNERS, Z_4TAGS) )")
        // Columns grouped as Core Data groups them; Truck.name collides with Car.name and becomes ZNAME1.
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'ZVEHICLE'")
            == "CREATE TABLE ZVEHICLE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, ZDOORS INTEGER, ZNAME1 INTEGER, ZPAYLOAD FLOAT, ZPLATE VARCHAR, ZNAME VARCHAR )")
        // Vehicle (5) has subentities, so a to-one to it also records the destination's Z_ENT.
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'ZOWNER'")
            == "CREATE TABLE ZOWNER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZACTIVE INTEGER, ZFAVORITE INTEGER, Z5_FAVORITE INTEGER, ZBORN TIMESTAMP, ZRATING FLOAT, ZNAME VARCHAR, ZOWNERID BLOB )")
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_PRIMARYKEY'")
            == "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_METADATA'")
            == "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'Z_MODELCACHE'") == "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        // Owner(3).notes is a to-many without inverse: Core Data's hidden foreign key Z3NOTES in the members'
        // table, after their own foreign keys, with its index.
        #expect(try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE name = 'ZNOTE'")
            == "CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, Z3NOTES INTEGER, ZTEXT VARCHAR )")
        let indexes = try SQLite3.query(path, "SELECT sql FROM sqlite_master WHERE type = 'index' ORDER BY name").split(separator: "\n")
        #expect(indexes == [
            "CREATE INDEX ZNOTE_Z3NOTES_INDEX ON ZNOTE (Z3NOTES)",
            "CREATE INDEX ZNOTE_ZTEXT_INDEX ON ZNOTE (ZTEXT)",
            "CREATE INDEX ZOWNER_ZFAVORITE_INDEX ON ZOWNER (ZFAVORITE)",
            "CREATE INDEX ZVEHICLE_ZOWNER_INDEX ON ZVEHICLE (ZOWNER)",
            "CREATE INDEX ZVEHICLE_Z_ENT_INDEX ON ZVEHICLE (Z_ENT)",
            "CREATE INDEX Z_3TAGS_Z_4TAGS_INDEX ON Z_3TAGS (Z_4TAGS, Z_3OWNERS)",
            "CREATE UNIQUE INDEX Z_Vehicle_UNIQUE_plate ON ZVEHICLE (ZPLATE COLLATE BINARY ASC)",
            "CREATE INDEX Z_Vehicle_byPlate ON ZVEHICLE (ZPLATE COLLATE BINARY ASC)",
        ])
        #expect(try SQLite3.query(path, "SELECT * FROM Z_PRIMARYKEY ORDER BY Z_ENT").split(separator: "\n") == [
            "2|Note|0|0", "3|Owner|0|0", "4|Tag|0|0", "5|Vehicle|0|0", "6|Car|5|0", "7|Truck|5|0",
        ])
        #expect(try SQLite3.query(path, "PRAGMA journal_mode") == "wal")
        // One model-cache row: the model, raw-DEFLATE compressed (it does not start with a zlib header 0x78).
        #expect(try SQLite3.query(path, "SELECT count(*), substr(hex(Z_CONTENT), 1, 2) != '78' FROM Z_MODELCACHE") == "1|1")
        #expect(try SQLite3.query(path, "SELECT Z_VERSION, Z_UUID FROM Z_METADATA") == "1|\(store.identifier.uuidString)")
    }

    /// Found by a user-side review: a store created in this process lost its POSIX locks when the creation's
    /// claim on the temporary name (the same inode after the link) was closed, so a `sqlite3` reading the store
    /// took it for unused, deleted its WAL, and the next fetch here failed with an I/O error.
    @Test func anotherProcessReadingANewStoreLeavesItWorking() throws {
        let store = try open("shared")
        let path = try #require(store.url?.path)
        func insert(_ name: String) throws {
            let key = try store.allocatePrimaryKeys(for: "Owner", count: 1).lowerBound
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Owner", primaryKey: key, values: ["name": .string(name)])]))
        }
        try insert("a")
        #expect(try SQLite3.query(path, "SELECT count(*) FROM ZOWNER") == "1")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the other process must not delete the WAL of an open store")
        try insert("b")
        #expect(try store.count(StoreFetchRequest(entityName: "Owner")) == 2)
        #expect(try SQLite3.query(path, "SELECT count(*) FROM ZOWNER") == "2")
        #expect(try store.fetch(StoreFetchRequest(entityName: "Owner")).count == 2)
    }

    /// A store Switchyard wrote before it kept to-manys without inverse has no hidden key: a read-only open
    /// reads the relationship empty, a writable open adds the column and its index, and the relationship works.
    @Test func storesWithoutTheHiddenKeyGainIt() throws {
        let path: String
        do {
            let store = try open("old")
            path = try #require(store.url?.path)
        }
        try SQLite3.execute(path, "DROP INDEX ZNOTE_Z3NOTES_INDEX; ALTER TABLE ZNOTE DROP COLUMN Z3NOTES;")
        do {
            let reader = try open("old", options: .readOnly)
            let owners = try reader.fetch(StoreFetchRequest(entityName: "Owner"))
            #expect(try reader.relatedReferences(of: owners.map(\.reference), relationship: "notes").values.allSatisfy(\.isEmpty))
            #expect(try SQLite3.query(path, "SELECT count(*) FROM pragma_table_info('ZNOTE') WHERE name = 'Z3NOTES'") == "0")
        }
        let store = try open("old")
        #expect(try SQLite3.query(path, "SELECT count(*) FROM pragma_table_info('ZNOTE') WHERE name = 'Z3NOTES'") == "1")
        #expect(try SQLite3.query(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ZNOTE_Z3NOTES_INDEX'") == "1")
        let ownerKey = try store.allocatePrimaryKeys(for: "Owner", count: 1).lowerBound
        let noteKey = try store.allocatePrimaryKeys(for: "Note", count: 1).lowerBound
        let owner = RowReference(entityName: "Owner", primaryKey: ownerKey), note = RowReference(entityName: "Note", primaryKey: noteKey)
        try store.save(StoreChangeSet(
            inserts: [StoreRow(entityName: "Owner", primaryKey: ownerKey, values: ["name": .string("o")]),
                      StoreRow(entityName: "Note", primaryKey: noteKey, values: ["text": .string("n")])],
            linkInserts: [RelationshipLink(source: owner, relationship: "notes", destination: note)]))
        #expect(try store.relatedReferences(of: [owner], relationship: "notes")[owner] == [note])
    }

    // MARK: - Values

    @Test func everyAttributeTypeRoundTripsAcrossReopen() throws {
        let when = Date(timeIntervalSinceReferenceDate: 737_057_646.843063)
        let uid = UUID(uuidString: "C4637490-BD7F-4428-B093-63A1720E17D2")!
        let values: [String: AttributeValue] = [
            "i16": .integer(-32768), "i32": .integer(2_147_483_647), "i64": .integer(Int64.min),
            "dec": .decimal(Decimal(string: "10.11")!), "dbl": .double(-0.125), "flt": .double(3.5), "str": "héllo 👋",
            "flag": .bool(true), "when": .date(when), "blob": .binary(Data([0, 1, 2, 255])), "uid": .uuid(uid),
            "link": .uri(URL(string: "https://example.com/a?b=c")!), "thing": .binary(Data("plist".utf8)),
        ]
        // Decimals of up to 15 significant digits come back exactly, exponents included.
        let decimals = ["0.1", "-12345678901234.5", "0.000000015", "1e+20", "3.3333333333"].map { Decimal(string: $0)! }
        let key: Int64
        do {
            let store = try open("types", configuration: "Types")
            key = try SQLiteTestModels.insert([StoreRow(entityName: "AllTypes", primaryKey: 0, values: values)], into: store)[0].primaryKey
            // An empty blob is present, not missing.
            try SQLiteTestModels.insert([StoreRow(entityName: "AllTypes", primaryKey: 0, values: ["blob": .binary(Data()), "flag": .bool(false)])], into: store)
            try SQLiteTestModels.insert(decimals.map { StoreRow(entityName: "AllTypes", primaryKey: 0, values: ["dec": .decimal($0), "str": "decimal"]) }, into: store)
        }
        let store = try open("types", configuration: "Types")
        let decimalRows = try store.fetch(StoreFetchRequest(
            entityName: "AllTypes", predicate: .comparison(Comparison(.keyPath(["str"]), .equal, .constant("decimal")))))
        #expect(decimalRows.map { $0["dec"] } == decimals.map { .decimal($0) })
        let rows = try store.fetch(StoreFetchRequest(
            entityName: "AllTypes", predicate: .or([
                .comparison(Comparison(.keyPath(["str"]), .notEqual, .constant("decimal"))),
                .comparison(Comparison(.keyPath(["str"]), .equal, .constant(.null))),
            ])))
        #expect(rows.count == 2)
        let row = try #require(rows.first { $0.primaryKey == key })
        #expect(row.entityName == "AllTypes")
        #expect(row.version == 1)
        for (name, value) in values { #expect(row[name] == value, "attribute \(name)") }
        #expect(row.values.count == values.count)
        let second = try #require(rows.first { $0.primaryKey != key })
        #expect(second.values == ["blob": .binary(Data()), "flag": .bool(false)])
    }

    @Test func valuesAreStoredAsCoreDataStoresThem() throws {
        let when = Date(timeIntervalSince1970: 1_600_000_000.5)
        let uid = UUID(uuidString: "C4637490-BD7F-4428-B093-63A1720E17D2")!
        let store = try open("types", configuration: "Types")
        try SQLiteTestModels.insert([StoreRow(entityName: "AllTypes", primaryKey: 0, values: [
            "when": .date(when), "uid": .uuid(uid), "flag": .bool(true), "dec": .decimal(Decimal(string: "10.11")!),
            "i16": 7, "link": .uri(URL(string: "https://example.com")!),
        ])], into: store)
        let path = try #require(store.url?.path)
        let raw = try SQLite3.query(path, """
            SELECT typeof(ZWHEN), ZWHEN + 978307200, hex(ZUID), ZFLAG, typeof(ZDEC), ZDEC, typeof(ZI16), ZLINK FROM ZALLTYPES
            """)
        #expect(raw == "real|1600000000.5|C4637490BD7F4428B09363A1720E17D2|1|real|10.11|integer|https://example.com")
    }

    @Test func invalidValuesAreRejectedAndNothingIsWritten() throws {
        let store = try open("types", configuration: "Types")
        func attempt(_ values: [String: AttributeValue]) throws {
            try SQLiteTestModels.insert([StoreRow(entityName: "AllTypes", primaryKey: 0, values: values)], into: store)
        }
        #expect { try attempt(["i16": .integer(40_000)]) } throws: { error in
            guard case StoreError.invalidValue(let path, _, "AllTypes", "i16", _, let expected)? = error as? StoreError else { return false }
            return path == store.url?.path && expected.contains("-32768...32767")
        }
        #expect(throws: StoreError.self) { try attempt(["i64": "many"]) }
        #expect(throws: StoreError.self) { try attempt(["when": .double(1)]) }
        #expect(throws: StoreError.self) { try attempt(["uid": .binary(Data([1, 2]))]) }
        #expect(throws: StoreError.self) { try attempt(["nosuch": 1]) }
        // Transient attributes are not stored, and not an error.
        try attempt(["scratch": "ignored", "str": "kept"])
        let rows = try store.fetch(StoreFetchRequest(entityName: "AllTypes"))
        #expect(rows.map(\.values) == [["str": "kept"]])
        #expect { try store.fetch(StoreFetchRequest(entityName: "Owner")) } throws: { error in
            guard case StoreError.entityNotInStore(_, "Types", "Owner")? = error as? StoreError else { return false }
            return true
        }
    }

    @Test func toOneToAnEntityWithSubentitiesRecordsTheDestinationEntity() throws {
        let store = try open()
        let car = try SQLiteTestModels.insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "C-1", "name": "Zoe", "doors": 5])], into: store)[0]
        let truck = try SQLiteTestModels.insert([StoreRow(entityName: "Truck", primaryKey: 0, values: ["plate": "T-1", "name": 12, "payload": 3.5])], into: store)[0]
        let owner = try SQLiteTestModels.insert([StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Ann"],
                                                          toOne: ["favorite": car.reference])], into: store)[0]
        try store.save(StoreChangeSet(updates: [
            RowUpdate(entityName: "Car", primaryKey: car.primaryKey, expectedVersion: 1, toOne: ["owner": owner.reference]),
            RowUpdate(entityName: "Truck", primaryKey: truck.primaryKey, expectedVersion: 1, toOne: ["owner": owner.reference]),
        ]))
        let path = try #require(store.url?.path)
        #expect(try SQLite3.query(path, "SELECT ZFAVORITE, Z5_FAVORITE FROM ZOWNER") == "\(car.primaryKey)|6")
        #expect(try SQLite3.query(path, "SELECT ZNAME, ZNAME1 FROM ZVEHICLE ORDER BY Z_PK").split(separator: "\n") == ["Zoe|", "|12"])
        let fetched = try #require(try store.fetch(StoreFetchRequest(entityName: "Owner")).first)
        #expect(fetched.toOne["favorite"] == RowReference(entityName: "Car", primaryKey: car.primaryKey))
        let vehicles = try store.fetch(StoreFetchRequest(entityName: "Vehicle"))
        #expect(vehicles.map(\.entityName) == ["Car", "Truck"])
        #expect(vehicles.map(\.version) == [2, 2])
        #expect(vehicles[0].values == ["plate": "C-1", "name": "Zoe", "doors": 5])
        #expect(vehicles[1].values == ["plate": "T-1", "name": 12, "payload": 3.5])
        #expect(vehicles.allSatisfy { $0.toOne["owner"] == owner.reference })
        // Clearing the relationship clears both columns.
        try store.save(StoreChangeSet(updates: [
            RowUpdate(entityName: "Owner", primaryKey: owner.primaryKey, expectedVersion: 1, toOne: ["favorite": nil]),
        ]))
        #expect(try SQLite3.query(path, "SELECT ifnull(ZFAVORITE, 'null'), ifnull(Z5_FAVORITE, 'null') FROM ZOWNER") == "null|null")
        #expect(try store.rows(for: [car.reference, truck.reference, RowReference(entityName: "Car", primaryKey: 999)]).count == 2)
    }

    // MARK: - Metadata and keys

    @Test func metadataRoundTripKeepsAppKeys() throws {
        let identifier: UUID
        do {
            let store = try open()
            identifier = store.identifier
            var metadata = try store.metadata()
            #expect(metadata.storeType == "SQLite")
            #expect(metadata.uuid == identifier)
            #expect(metadata.versionHashes == model.versionHashes)
            #expect(metadata.versionIdentifiers == ["g1"])
            metadata.additional["com.example.token"] = .string("abc")
            metadata.additional["com.example.counts"] = .dictionary(["a": .integer(1)])
            try store.setMetadata(metadata)
        }
        let store = try open()
        #expect(store.identifier == identifier)
        let metadata = try store.metadata()
        #expect(metadata.uuid == identifier)
        #expect(metadata.additional["com.example.token"] == .string("abc"))
        #expect(metadata.additional["com.example.counts"] == .dictionary(["a": .integer(1)]))
        #expect(try SQLite3.query(store.url!.path, "SELECT count(*) FROM Z_METADATA") == "1")
    }

    @Test func primaryKeysAreNeverReused() throws {
        let path: String
        do {
            let store = try open()
            path = store.url!.path
            #expect(try store.allocatePrimaryKeys(for: "Car", count: 3) == 1...3)
            #expect(try store.allocatePrimaryKeys(for: "Truck", count: 1) == 4...4)   // one key space per table
            #expect(try store.allocatePrimaryKeys(for: "Owner", count: 1) == 1...1)
            try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Truck", primaryKey: 4, values: ["plate": "x"])]))
            try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Truck", primaryKey: 4, expectedVersion: 1)]))
            #expect(try store.allocatePrimaryKeys(for: "Vehicle", count: 1) == 5...5)
            #expect(throws: StoreError.self) { try store.allocatePrimaryKeys(for: "Vehicle", count: 0) }
        }
        // Z_MAX lives on the root's row and survives reopening.
        #expect(try SQLite3.query(path, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_MAX > 0 ORDER BY Z_ENT").split(separator: "\n")
            == ["Owner|1", "Vehicle|5"])
        #expect(try open().allocatePrimaryKeys(for: "Car", count: 2) == 6...7)
    }

    // MARK: - Saving

    @Test func conflictRollsBackTheWholeChangeSet() throws {
        let store = try open()
        let car = try SQLiteTestModels.insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "C-1", "doors": 3])], into: store)[0]
        try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "Car", primaryKey: car.primaryKey, expectedVersion: 1, values: ["doors": 5])]))
        let newKey = try store.allocatePrimaryKeys(for: "Car", count: 1).lowerBound
        let stale = StoreChangeSet(
            inserts: [StoreRow(entityName: "Car", primaryKey: newKey, values: ["plate": "NEW"])],
            updates: [RowUpdate(entityName: "Car", primaryKey: car.primaryKey, expectedVersion: 1, values: ["doors": 9])])
        #expect { try store.save(stale) } throws: { error in
            guard case StoreError.conflict(let path, _, _, "Car", car.primaryKey, 1, 2)? = error as? StoreError else { return false }
            return path == store.url?.path
        }
        let rows = try store.fetch(StoreFetchRequest(entityName: "Car"))
        #expect(rows.count == 1)
        #expect(rows.first?["doors"] == 5)
        #expect(rows.first?.version == 2)
        #expect(try SQLite3.query(store.url!.path, "SELECT count(*) FROM ZVEHICLE WHERE ZPLATE = 'NEW'") == "0")
        // Stale delete, and an update of a row that is gone.
        #expect { try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Car", primaryKey: car.primaryKey, expectedVersion: 1)])) }
            throws: { ($0 as? StoreError) == .conflict(path: store.url!.path, configuration: store.configurationName, objectID: ObjectID(store: store.identifier, entityName: "Car", primaryKey: car.primaryKey), entity: "Car", primaryKey: car.primaryKey, expectedVersion: 1, actualVersion: 2) }
        #expect { try store.save(StoreChangeSet(updates: [RowUpdate(entityName: "Car", primaryKey: 77, expectedVersion: 1, values: ["doors": 1])])) }
            throws: { ($0 as? StoreError) == .conflict(path: store.url!.path, configuration: store.configurationName, objectID: ObjectID(store: store.identifier, entityName: "Car", primaryKey: 77), entity: "Car", primaryKey: 77, expectedVersion: 1, actualVersion: nil) }
        try store.save(StoreChangeSet(deletes: [RowDeletion(entityName: "Car", primaryKey: car.primaryKey, expectedVersion: 2)]))
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle")) == 0)
    }

    @Test func uniquenessViolationNamesEntityAndProperties() throws {
        let store = try open()
        try SQLiteTestModels.insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "SAME"])], into: store)
        let keys = try store.allocatePrimaryKeys(for: "Truck", count: 2)
        #expect {
            try store.save(StoreChangeSet(inserts: [
                StoreRow(entityName: "Truck", primaryKey: keys.lowerBound, values: ["plate": "OTHER"]),
                StoreRow(entityName: "Truck", primaryKey: keys.upperBound, values: ["plate": "SAME"]),
            ]))
        } throws: { error in
            // The constraint is Vehicle's and spans the whole table, subentities included; the error names the
            // entity of the row that broke it, as on every backend.
            (error as? StoreError) == .uniquenessViolation(path: store.url!.path, configuration: store.configurationName, entity: "Truck", properties: ["plate"], values: ["\"SAME\""])
        }
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle")) == 1)
        // A save that deletes the holder and inserts a new one with the same value succeeds.
        let old = try #require(try store.fetch(StoreFetchRequest(entityName: "Car")).first)
        try store.save(StoreChangeSet(
            inserts: [StoreRow(entityName: "Truck", primaryKey: keys.lowerBound, values: ["plate": "SAME"])],
            deletes: [RowDeletion(entityName: "Car", primaryKey: old.primaryKey, expectedVersion: 1)]))
        #expect(try store.fetch(StoreFetchRequest(entityName: "Vehicle")).map(\.entityName) == ["Truck"])
        // The same primary key twice.
        #expect { try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Car", primaryKey: keys.lowerBound)])) }
            throws: { ($0 as? StoreError) == .uniquenessViolation(path: store.url!.path, configuration: store.configurationName, entity: "Car", properties: ["Z_PK"], values: ["\(keys.lowerBound)"]) }
    }

    // MARK: - Read-only

    @Test func readOnlyStoreRejectsWritesAndLeavesFilesAlone() throws {
        do {
            let store = try open()
            try SQLiteTestModels.insert([StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": "Ann"])], into: store)
        }
        let path = dir.file("garage.sqlite").path
        let before = ["", "-wal", "-shm"].map { fileSHA256(path + $0) }
        let store = try open(options: .readOnly)
        #expect(store.isReadOnly)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Owner")).map { $0["name"] } == ["Ann"])
        func isReadOnly(_ error: any Error) -> Bool {
            guard case StoreError.readOnly(let p, _, _)? = error as? StoreError else { return false }
            return p == path
        }
        #expect(performing: { try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Owner", primaryKey: 9)])) }, throws: isReadOnly)
        #expect(performing: { try store.allocatePrimaryKeys(for: "Owner", count: 1) }, throws: isReadOnly)
        #expect(performing: { try store.setMetadata(try store.metadata()) }, throws: isReadOnly)
        #expect(performing: { try store.destroy() }, throws: isReadOnly)
        #expect(["", "-wal", "-shm"].map { fileSHA256(path + $0) } == before)
        #expect { try SQLiteStore(url: dir.file("absent.sqlite"), model: model, configuration: "Garage", options: .readOnly) }
            throws: { error in
                guard case StoreError.openFailed(let p, "Garage", _)? = error as? StoreError else { return false }
                return p == dir.file("absent.sqlite").path
            }
    }

    @Test func readOnlyOpenReadsRowsThatLiveOnlyInTheWAL() throws {
        let copy = dir.file("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        let store = try open()
        try SQLiteTestModels.insert((1...20).map { StoreRow(entityName: "Owner", primaryKey: 0, values: ["name": .string("o\($0)")]) }, into: store)
        // While the writer is open nothing is checkpointed: the rows are in the -wal only. Copy the three files.
        let source = try #require(store.url?.path)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: copy.appendingPathComponent("garage.sqlite" + suffix).path)
        }
        let copied = copy.appendingPathComponent("garage.sqlite").path
        #expect((try FileManager.default.attributesOfItem(atPath: copied + "-wal")[.size] as? Int ?? 0) > 0)
        let before = ["", "-wal", "-shm"].map { fileSHA256(copied + $0) }
        do {
            let reader = try SQLiteStore(url: URL(fileURLWithPath: copied), model: model, configuration: "Garage", options: .readOnly)
            #expect(try reader.count(StoreFetchRequest(entityName: "Owner")) == 20)
            #expect(try reader.metadata().uuid == store.identifier)
        }
        #expect(["", "-wal", "-shm"].map { fileSHA256(copied + $0) } == before)
    }

    // MARK: - Foreign files

    enum Foreign: String, CaseIterable, Sendable { case text, empty, plainSQLite, truncatedStore, shortHeader }

    @Test(arguments: Foreign.allCases)
    func foreignFilesAreNotAStore(kind: Foreign) throws {
        let file = dir.file("\(kind.rawValue).sqlite")
        switch kind {
        case .text:
            try Data("just some text, long enough to look like a file\n".utf8).write(to: file)
        case .empty:
            try Data().write(to: file)
        case .plainSQLite:
            try SQLite3.execute(file.path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x');")
        case .truncatedStore:
            do { _ = try open("whole") }
            let whole = try Data(contentsOf: dir.file("whole.sqlite"))
            try whole.prefix(1000).write(to: file)
        case .shortHeader:
            try Data("SQLite format 3\u{0}abc".utf8).write(to: file)
        }
        let before = fileSHA256(file.path)
        // An empty file opened for writing becomes a new store (StoreOpeningBehaviourTests); read-only it is not one.
        for options in kind == .empty ? [StoreOptions.readOnly] : [.default, .readOnly] {
            #expect {
                try SQLiteStore(url: file, model: model, configuration: "Garage", options: options)
            } throws: { error in
                guard case StoreError.notAStore(let path, .sqlite, let reason)? = error as? StoreError else { return false }
                return path == file.path && !reason.isEmpty && "\(error)".contains(file.path)
            }
        }
        // Looking is not touching: a foreign file is never switched to WAL or otherwise written.
        #expect(fileSHA256(file.path) == before)
        if kind == .plainSQLite {
            #expect(try SQLite3.query(file.path, "SELECT body FROM notes") == "x")
        }
    }

    @Test func missingTableOrColumnIsASchemaMismatch() throws {
        do { _ = try open("columns") }
        let columns = dir.file("columns.sqlite").path
        try SQLite3.execute(columns, "ALTER TABLE ZVEHICLE DROP COLUMN ZPAYLOAD")
        #expect { try open("columns") } throws: { error in
            guard case StoreError.schemaMismatch(columns, "Garage", let reason)? = error as? StoreError else { return false }
            return reason.contains("ZPAYLOAD") && reason.contains("Truck.payload")
        }
        do { _ = try open("tables") }
        try SQLite3.execute(dir.file("tables.sqlite").path, "DROP TABLE ZNOTE")
        #expect { try open("tables") } throws: { error in
            guard case StoreError.schemaMismatch(_, "Garage", let reason)? = error as? StoreError else { return false }
            return reason.contains("ZNOTE")
        }
        // The other configuration's tables are not needed by this one.
        #expect(throws: StoreError.self) { try open("tables", configuration: "Types") }
    }

    @Test func existingStoreKeepsItsOwnEntityNumbers() throws {
        let path = dir.file("renumbered.sqlite").path
        do {
            let store = try open("renumbered")
            let car = try SQLiteTestModels.insert([StoreRow(entityName: "Car", primaryKey: 0, values: ["plate": "C", "doors": 2])], into: store)[0]
            try SQLiteTestModels.insert([StoreRow(entityName: "Truck", primaryKey: 0, values: ["plate": "T"])], into: store)
            try SQLiteTestModels.insert([StoreRow(entityName: "Owner", primaryKey: 0, toOne: ["favorite": car.reference])], into: store)
        }
        // As another Core Data model version might have numbered them: Vehicle 15, Car 16, Truck 17.
        try SQLite3.execute(path, """
            UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 10 WHERE Z_ENT >= 5;
            UPDATE Z_PRIMARYKEY SET Z_SUPER = 15 WHERE Z_SUPER = 5;
            UPDATE ZVEHICLE SET Z_ENT = Z_ENT + 10;
            UPDATE ZOWNER SET Z5_FAVORITE = Z5_FAVORITE + 10;
            ALTER TABLE ZOWNER RENAME COLUMN Z5_FAVORITE TO Z15_FAVORITE;
            """)
        let store = try open("renumbered")
        #expect(try store.fetch(StoreFetchRequest(entityName: "Vehicle")).map(\.entityName) == ["Car", "Truck"])
        #expect(try store.count(StoreFetchRequest(entityName: "Vehicle", includesSubentities: false)) == 0)
        #expect(try store.fetch(StoreFetchRequest(entityName: "Owner")).first?.toOne["favorite"]?.entityName == "Car")
        let key = try store.allocatePrimaryKeys(for: "Truck", count: 1).lowerBound
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Truck", primaryKey: key, values: ["plate": "T2"])]))
        #expect(try SQLite3.query(path, "SELECT Z_ENT FROM ZVEHICLE WHERE Z_PK = \(key)") == "17")
        #expect(try SQLite3.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 15") == "3")
    }

    // MARK: - Destroy

    @Test func destroyDeletesTheDatabaseAndItsSidecars() throws {
        let store = try open("doomed")
        try SQLiteTestModels.insert([StoreRow(entityName: "Note", primaryKey: 0, values: ["text": "bye"])], into: store)
        let path = try #require(store.url?.path)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try store.destroy()
        for suffix in ["", "-wal", "-shm"] { #expect(!FileManager.default.fileExists(atPath: path + suffix)) }
        #expect(throws: StoreError.closed(path: path, configuration: store.configurationName)) { try store.fetch(StoreFetchRequest(entityName: "Note")) }
        #expect(throws: StoreError.closed(path: path, configuration: store.configurationName)) { try store.save(StoreChangeSet()) }
    }

    @Test func concurrentWritersAndReadersSeeConsistentSnapshots() async throws {
        let store = try open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for i in 0..<20 {
                        let keys = try store.allocatePrimaryKeys(for: "Note", count: 2)
                        try store.save(StoreChangeSet(inserts: keys.map {
                            StoreRow(entityName: "Note", primaryKey: $0, values: ["text": .string("w\(worker)-\(i)")])
                        }))
                        // A save is atomic: readers never see half of it.
                        #expect(try store.count(StoreFetchRequest(entityName: "Note")) % 2 == 0)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(Set(try store.fetch(StoreFetchRequest(entityName: "Note")).map(\.primaryKey)).count == 160)
    }
}

import Foundation
import Testing
@testable import Switchyard

/// Issue #12 point 8: "Allows External Storage" binary attributes in Core Data's format (decompiled
/// `_PFExternalReferenceData`): `0x01` + bytes inline, `0x02` + file name + `0x00` for a file in
/// `.<store>_SUPPORT/_EXTERNAL_DATA/`. Uses the real model of ensembles' Idiomatic example (`IDMMediaFile.data`).
@Suite(.enabled(if: Fixtures.available && SQLite3.available, "needs ../shared fixtures and sqlite3"))
struct ExternalBinaryDataTests {
    static let model = "drewmccormack__ensembles/Examples/Idiomatic/Shared/Model.xcdatamodeld/Model_1.xcdatamodel"

    static func bytes(_ count: Int, seed: UInt8) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }) }

    static func files(_ store: URL) -> [String] {
        let folder = SQLiteStore.supportFolder(of: store).appendingPathComponent("_EXTERNAL_DATA")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    static func media(_ context: ObjectContext) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for object in try context.fetch(FetchRequest(entityName: "IDMMediaFile")) {
            result[try object.get("uniqueIdentifier", as: String.self) ?? "?"] = try object.get("data", as: Data.self)
        }
        return result
    }

    /// Values below the threshold stay in the column behind `0x01`; larger ones become files named in the
    /// column; replacing or deleting a value removes its file once the save commits.
    @Test func switchyardWritesCoreDataFormat() throws {
        let temp = TemporaryDirectory()
        let model = try ModelLoader.load(at: Fixtures.url(Self.model))
        let url = temp.file("Media.sqlite")
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Default", at: url)
        let context = ObjectContext(coordinator: coordinator)
        let small = Self.bytes(1000, seed: 1), large = Self.bytes(SQLiteExternalData.threshold + 5, seed: 2)
        for (id, data) in [("small", small), ("large", large)] {
            let file = try context.insert("IDMMediaFile")
            try file.set("uniqueIdentifier", id)
            try file.set("data", data)
        }
        try context.save()
        let hex = try SQLite3.query(url.path, "SELECT ZUNIQUEIDENTIFIER, substr(hex(ZDATA), 1, 4), length(ZDATA) FROM ZIDMMEDIAFILE ORDER BY ZUNIQUEIDENTIFIER")
        let stored = try #require(Self.files(url).first)
        #expect(hex == "large|0\(2)\(String(format: "%02X", stored.utf8.first!))|\(stored.utf8.count + 2)\nsmall|01\(String(format: "%02X", small[0]))|1001")
        #expect(Self.files(url).count == 1)
        #expect(try Data(contentsOf: SQLiteStore.supportFolder(of: url).appendingPathComponent("_EXTERNAL_DATA/\(stored)")) == large)

        let reader = ObjectContext(coordinator: coordinator)
        #expect(try Self.media(reader) == ["small": small, "large": large])

        // Replace the large value by another large one: one file, the new one.
        let larger = Self.bytes(SQLiteExternalData.threshold * 2, seed: 3)
        let largeObject = try #require(try context.fetch(FetchRequest(entityName: "IDMMediaFile", predicate: try FetchPredicate(format: "uniqueIdentifier == 'large'"))).first)
        try largeObject.set("data", larger)
        try context.save()
        #expect(Self.files(url).count == 1 && Self.files(url) != [stored])
        // A small value in its place: the file goes.
        try largeObject.set("data", small)
        try context.save()
        #expect(Self.files(url) == [])
        // A large value again, then the row deleted: the file goes with the row.
        try largeObject.set("data", large)
        try context.save()
        #expect(Self.files(url).count == 1)
        try context.delete(largeObject)
        try context.save()
        #expect(Self.files(url) == [])
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.media(fresh) == ["small": small])
    }

    /// A store built as Core Data builds it (rows written with sqlite3, the file in the support folder) reads
    /// transparently, and splits into SQLite (values re-written in the same format, files under the output's
    /// name) and into LMDB (values inline) with content verification; a missing file is a clear error.
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func coreDataStoreReadsAndSplits(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let model = try ModelLoader.load(at: Fixtures.url(Self.model))
        let url = temp.file("Idiomatic.sqlite")
        do {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url)
        }
        let small = Self.bytes(300, seed: 4), large = Self.bytes(300_000, seed: 5)
        let name = "3D0C4B8E-2C39-4D7C-9D0B-6A1B2C3D4E5F"
        let folder = SQLiteStore.supportFolder(of: url).appendingPathComponent("_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try large.write(to: folder.appendingPathComponent(name))
        let number = try SQLite3.query(url.path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'IDMMediaFile'")
        let nameHex = name.utf8.map { String(format: "%02X", $0) }.joined()
        try SQLite3.execute(url.path, """
            INSERT INTO ZIDMMEDIAFILE (Z_PK, Z_ENT, Z_OPT, ZUNIQUEIDENTIFIER, ZDATA) VALUES
              (1, \(number), 2, 'inline', x'01\(small.map { String(format: "%02X", $0) }.joined())'),
              (2, \(number), 1, 'external', x'02\(nameHex)00');
            UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = \(number);
            """)
        do {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url, options: StoreOptions(readOnly: true))
            let context = ObjectContext(coordinator: coordinator)
            #expect(try Self.media(context) == ["inline": small, "external": large])
        }
        #expect(try StoreInspection.inspect(url, model: model).externalDataFiles == 1)

        let output = SplitDestination(configuration: "Default", url: temp.file("Out.\(outputType == .lmdb ? "lmdb" : "sqlite")"), type: outputType)
        let splitter = try StoreSplitter(source: url, targetModel: model, destinations: [output])
        let report = try splitter.run(try splitter.plan(), options: SplitOptions(batchSize: 1, verifyContent: true))
        #expect(report.contentVerified)
        #expect(Self.files(url) == [name], "the source keeps its file")
        if outputType == .sqlite {
            #expect(Self.files(output.url).count == 1, "the output has its own copy, under its own name")
            #expect(report.outputs.first?.externalDataFiles == 1)
            #expect(!FileManager.default.fileExists(atPath: SQLiteStore.supportFolder(of: output.temporaryURL).path))
        }
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(outputType, configuration: "Default", at: output.url)
        let context = ObjectContext(coordinator: coordinator)
        #expect(try Self.media(context) == ["inline": small, "external": large])

        // The source with its file gone: reading names the store, the row and the missing file.
        try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        let broken = StoreCoordinator(model: model)
        try broken.addStore(.sqlite, configuration: "Default", at: url, options: StoreOptions(readOnly: true))
        do {
            _ = try Self.media(ObjectContext(coordinator: broken))
            Issue.record("a missing external file was not reported")
        } catch {
            let message = error.localizedDescription
            #expect(message.contains(url.path) && message.contains(name) && message.contains("p2"), "\(message)")
        }
    }

    /// A store Switchyard wrote before it kept the format (no format key, no Core Data framework version) holds
    /// bare bytes: they still read as they are, and new values are written bare too.
    @Test func olderSwitchyardStoresKeepBareBytes() throws {
        let temp = TemporaryDirectory()
        let model = try ModelLoader.load(at: Fixtures.url(Self.model))
        let url = temp.file("Old.sqlite")
        do {
            let store = try SQLiteStore(url: url, model: model, configuration: "Default")
            var metadata = try store.metadata()
            metadata.additional[StoreMetadata.externalDataFormatKey] = nil
            try store.setMetadata(metadata)
        }
        let number = try SQLite3.query(url.path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'IDMMediaFile'")
        try SQLite3.execute(url.path, "INSERT INTO ZIDMMEDIAFILE (Z_PK, Z_ENT, Z_OPT, ZUNIQUEIDENTIFIER, ZDATA) VALUES (1, \(number), 1, 'old', x'0203'); UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = \(number);")
        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(.sqlite, configuration: "Default", at: url)
        let context = ObjectContext(coordinator: coordinator)
        #expect(try Self.media(context) == ["old": Data([2, 3])])
        let file = try context.insert("IDMMediaFile")
        try file.set("uniqueIdentifier", "new")
        try file.set("data", Self.bytes(SQLiteExternalData.threshold + 1, seed: 6))
        try context.save()
        #expect(Self.files(url) == [])
        #expect(try SQLite3.query(url.path, "SELECT length(ZDATA) FROM ZIDMMEDIAFILE WHERE ZUNIQUEIDENTIFIER = 'new'") == "\(SQLiteExternalData.threshold + 1)")
    }

    /// A custom migration step writes the new store beside the old one: its external data files join the
    /// store's folder, the old values' files go, and nothing is left under the temporary name.
    @Test func aCustomMigrationKeepsTheFiles() throws {
        func model(_ caption: Bool) throws -> ObjectModel {
            var attributes = [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "data", type: .binary, allowsExternalBinaryDataStorage: true),
            ]
            if caption { attributes.append(AttributeDescription(name: "caption", type: .string)) }
            return try ObjectModel(
                entities: [EntityDescription(name: "Photo", attributes: attributes)],
                configurations: [ConfigurationDescription(name: "Main", entityNames: ["Photo"])])
        }
        let temp = TemporaryDirectory()
        let url = temp.file("Photos.sqlite")
        let values = ["a": Self.bytes(SQLiteExternalData.threshold + 10, seed: 7), "b": Self.bytes(20, seed: 8),
                      "c": Self.bytes(SQLiteExternalData.threshold * 3, seed: 9)]
        do {
            let coordinator = StoreCoordinator(model: try model(false))
            try coordinator.addStore(.sqlite, configuration: "Main", at: url)
            let context = ObjectContext(coordinator: coordinator)
            for (name, data) in values {
                let photo = try context.insert("Photo")
                try photo.set("name", name)
                try photo.set("data", data)
            }
            try context.save()
        }
        let before = Self.files(url)
        #expect(before.count == 2)
        var chain = try MigrationChain(versions: [ModelVersion(name: "V1", model: try model(false)), ModelVersion(name: "V2", model: try model(true))])
        var step = CustomMigration(batchSize: 1)
        step.transform("Photo") { old, new in
            try new.set("caption", "photo " + (try old.value("name", as: String.self) ?? "?"))
        }
        try chain.setCustomStep(to: "V2", step)
        let coordinator = StoreCoordinator(model: try model(true))
        try coordinator.setMigrationChain(chain)
        try coordinator.addStore(.sqlite, configuration: "Main", at: url)
        let context = ObjectContext(coordinator: coordinator)
        var read: [String: Data] = [:]
        for photo in try context.fetch(FetchRequest(entityName: "Photo")) {
            #expect(try photo.get("caption", as: String.self) == "photo " + (try photo.get("name", as: String.self) ?? ""))
            read[try photo.get("name", as: String.self) ?? "?"] = try photo.get("data", as: Data.self)
        }
        #expect(read == values)
        let after = Self.files(url)
        #expect(after.count == 2 && Set(after).isDisjoint(with: before), "the new store's files replace the old store's")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: temp.url.path).filter { $0.contains("migrating") }
        #expect(leftovers == [])
    }

    /// Copy, move and destroy take the support folder along: a copy reads the same values from its own folder
    /// (files linked, not shared by name), a move leaves nothing behind, a destroy removes the folder.
    @Test func storeOperationsCarryTheFiles() throws {
        let temp = TemporaryDirectory()
        let model = try ModelLoader.load(at: Fixtures.url(Self.model))
        let url = temp.file("Media.sqlite")
        let coordinator = StoreCoordinator(model: model)
        let store = try coordinator.addStore(.sqlite, configuration: "Default", at: url)
        let context = ObjectContext(coordinator: coordinator)
        let large = Self.bytes(SQLiteExternalData.threshold * 2, seed: 11)
        let file = try context.insert("IDMMediaFile")
        try file.set("uniqueIdentifier", "big")
        try file.set("data", large)
        try context.save()

        let copy = temp.file("Copy.sqlite")
        try coordinator.copyStore(store, to: copy, compact: true)
        #expect(Self.files(copy) == Self.files(url))
        // The original's value changes (its file goes); the copy keeps its own.
        try file.set("data", Self.bytes(10, seed: 12))
        try context.save()
        #expect(Self.files(url) == [] && Self.files(copy).count == 1)
        let reader = StoreCoordinator(model: model)
        try reader.addStore(.sqlite, configuration: "Default", at: copy, options: StoreOptions(readOnly: true))
        #expect(try Self.media(ObjectContext(coordinator: reader)) == ["big": large])

        try file.set("data", large)
        try context.save()
        let moved = try coordinator.moveStore(store, to: temp.file("Moved.sqlite"))
        #expect(Self.files(temp.file("Moved.sqlite")).count == 1)
        #expect(!FileManager.default.fileExists(atPath: SQLiteStore.supportFolder(of: url).path))
        #expect(try Self.media(ObjectContext(coordinator: coordinator)) == ["big": large])
        try coordinator.destroyStore(moved)
        #expect(!FileManager.default.fileExists(atPath: SQLiteStore.supportFolder(of: temp.file("Moved.sqlite")).path))
    }

    /// A hostile reference never reads outside the store's folder.
    @Test func referencesOutsideTheFolderAreRefused() throws {
        let external = SQLiteExternalData(store: URL(fileURLWithPath: "/tmp/x.sqlite"), configuration: "Default")
        for bytes in [Data([2]) + Data("../../etc/passwd".utf8) + Data([0]), Data([2, 0]), Data([2]) + Data("..".utf8) + Data([0]), Data([7, 1])] {
            #expect(throws: StoreError.self) { _ = try external.decode(bytes, entity: "E", attribute: "a", primaryKey: 1) }
        }
    }
}

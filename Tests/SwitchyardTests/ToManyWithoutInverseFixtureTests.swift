import Foundation
import Testing
@testable import Switchyard

/// Issue #12 point 1 on real stores: CartKit's Core Data store (`CDCartItem.modifiers`, hidden key
/// `ZCDCARTITEMMODIFIER.Z2MODIFIERS`) and its SwiftData store (`CartModel.items` -> `ZCARTITEMMODEL.Z3ITEMS`,
/// `CartItemModel.modifiers` -> `ZCARTITEMMODIFIERMODEL.Z1MODIFIERS`). The fixtures hold no members, so the test
/// writes some the way Core Data does (the hidden column of the member's row, `Z_MAX` raised) with sqlite3, then
/// reads them through the coordinator and splits the store into SQLite and LMDB with content verification.
@Suite(.enabled(if: Fixtures.available && SQLite3.available, "needs ../shared fixtures and sqlite3"))
struct ToManyWithoutInverseFixtureTests {
    static let coreDataStore = "Karim-ezzedine__CartKit/Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite"
    static let coreDataModel = "Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld"
    static let swiftDataStore = "Karim-ezzedine__CartKit/Tests/CartKitStorageSwiftDataTests/LegacySwiftData/CartKitSwiftData_v1.sqlite"

    /// Names of `owner`'s members through `relationship`, read through a coordinator.
    static func memberNames(_ context: ObjectContext, owner: String, _ relationship: String) throws -> [[String]] {
        try context.fetch(FetchRequest(entityName: owner, sortKeys: [SortKey("id")])).map { object in
            try object.relatedObjects(forKey: relationship).map { try $0.get("name", as: String.self) ?? "?" }
        }
    }

    /// Writes members into the SwiftData fixture's two to-manys without inverse the way SwiftData does (the
    /// member rows' hidden keys, `Z_MAX` raised): the cart gets items i1, i2; i1 has modifier "large", i2 "hot"
    /// and "iced".
    static func seedSwiftDataMembers(_ url: URL) throws {
        let cart = try SQLite3.query(url.path, "SELECT Z_PK FROM ZCARTMODEL LIMIT 1")
        try SQLite3.execute(url.path, """
            INSERT INTO ZCARTITEMMODEL (Z_PK, Z_ENT, Z_OPT, ZAVAILABLESTOCK, ZQUANTITY, Z3ITEMS, ZID, ZPRODUCTID) VALUES
              (1, 1, 1, 5, 2, \(cart), 'i1', 'p1'), (2, 1, 2, 5, 1, \(cart), 'i2', 'p2');
            INSERT INTO ZCARTITEMMODIFIERMODEL (Z_PK, Z_ENT, Z_OPT, Z1MODIFIERS, ZID, ZNAME) VALUES
              (1, 2, 1, 1, 'm1', 'large'), (2, 2, 1, 2, 'm2', 'hot'), (3, 2, 1, 2, 'm3', 'iced');
            UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = 1;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = 2;
            """)
    }

    @Test(arguments: [StoreType.sqlite, .lmdb])
    func coreDataStoreReadsAndSplits(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = try SplitFidelityTests.copyFixture(Self.coreDataStore, into: temp)
        let model = try ModelLoader.load(at: Fixtures.url(Self.coreDataModel))
        // Core Data's checkpointed file first (the fixture keeps its rows in the WAL).
        try SQLite3.execute(url.path, "PRAGMA wal_checkpoint(TRUNCATE);")
        let item = try SQLite3.query(url.path, "SELECT Z_PK FROM ZCDCARTITEM")
        let modifierEntity = try SQLite3.query(url.path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'CDCartItemModifier'")
        try SQLite3.execute(url.path, """
            INSERT INTO ZCDCARTITEMMODIFIER (Z_PK, Z_ENT, Z_OPT, ZITEM, Z2MODIFIERS, ZID, ZNAME) VALUES
              (1, \(modifierEntity), 1, \(item), \(item), 'm1', 'extra cheese'),
              (2, \(modifierEntity), 3, \(item), \(item), 'm2', 'no onions'),
              (3, \(modifierEntity), 1, NULL, NULL, 'm3', 'unused');
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = \(modifierEntity);
            """)

        do {
            let coordinator = StoreCoordinator(model: model)
            try coordinator.addStore(.sqlite, configuration: "Default", at: url, options: StoreOptions(readOnly: true))
            let context = ObjectContext(coordinator: coordinator)
            #expect(try Self.memberNames(context, owner: "CDCartItem", "modifiers") == [["extra cheese", "no onions"]])
            let matching = try context.count(FetchRequest(
                entityName: "CDCartItem", predicate: try FetchPredicate(format: "ANY modifiers.name == 'no onions' AND modifiers.@count == 2")))
            #expect(matching == 1)
        }

        let output = SplitDestination(configuration: "Default", url: temp.file("Out.\(outputType == .lmdb ? "lmdb" : "sqlite")"), type: outputType)
        let splitter = try StoreSplitter(source: url, targetModel: model, destinations: [output])
        let plan = try splitter.plan()
        #expect(plan.links.map(\.relationship) == ["modifiers"])
        let report = try splitter.run(plan, options: SplitOptions(batchSize: 2, verifyContent: true))
        #expect(report.contentVerified)

        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(outputType, configuration: "Default", at: output.url)
        let context = ObjectContext(coordinator: coordinator)
        #expect(try Self.memberNames(context, owner: "CDCartItem", "modifiers") == [["extra cheese", "no onions"]])
        // The output is a working store: a member moves out, a new one comes in, and Z_OPT went along.
        let cartItem = try #require(try context.fetch(FetchRequest(entityName: "CDCartItem")).first)
        let unused = try #require(try context.fetch(FetchRequest(entityName: "CDCartItemModifier", predicate: try FetchPredicate(format: "id == 'm3'"))).first)
        let kept = try #require(try context.fetch(FetchRequest(entityName: "CDCartItemModifier", predicate: try FetchPredicate(format: "id == 'm2'"))).first)
        #expect(kept.snapshot?.version == 3)
        try cartItem.addRelatedObject(unused, forKey: "modifiers")
        try cartItem.removeRelatedObject(kept, forKey: "modifiers")
        try context.save()
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try Self.memberNames(fresh, owner: "CDCartItem", "modifiers") == [["extra cheese", "unused"]])
        if outputType == .sqlite {
            // Core Data's own column, as Core Data would read it.
            #expect(try SQLite3.query(output.url.path, "SELECT ZID FROM ZCDCARTITEMMODIFIER WHERE Z2MODIFIERS IS NOT NULL ORDER BY ZID")
                == "m1\nm3")
        }
    }

    /// SwiftData's store: two chained to-manys without inverse (cart -> items -> modifiers), split with
    /// verification into both backends.
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func swiftDataStoreSplits(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        let url = try SplitFidelityTests.copyFixture(Self.swiftDataStore, into: temp)
        try SQLite3.execute(url.path, "PRAGMA wal_checkpoint(TRUNCATE);")
        let (source, _) = try StoreSplitter.openReadOnly(url, model: nil)
        let model = source.model
        try Self.seedSwiftDataMembers(url)
        let output = SplitDestination(configuration: "Default", url: temp.file("Out.\(outputType == .lmdb ? "lmdb" : "sqlite")"), type: outputType)
        let splitter = try StoreSplitter(source: url, targetModel: model, destinations: [output])
        let plan = try splitter.plan()
        let report = try splitter.run(plan, options: SplitOptions(batchSize: 1, verifyContent: true))
        #expect(report.contentVerified)
        #expect(report.outputs.first?.links.map(\.links).reduce(0, +) == 5)

        let coordinator = StoreCoordinator(model: model)
        try coordinator.addStore(outputType, configuration: "Default", at: output.url)
        let context = ObjectContext(coordinator: coordinator)
        let items = try #require(try context.fetch(FetchRequest(entityName: "CartModel")).first).relatedObjects(forKey: "items")
        #expect(try items.map { try $0.get("id", as: String.self) } == ["i1", "i2"])
        #expect(try Self.memberNames(context, owner: "CartItemModel", "modifiers") == [["large"], ["hot", "iced"]])
    }

    /// The SwiftData store's two to-manys without inverse gain a to-one inverse each (`CartItemModel.cart`,
    /// `CartItemModifierModel.item`), as an app adding `@Relationship(inverse:)` does: opening the real store with
    /// that model migrates it in place, the members' owners moving from SwiftData's hidden keys (`Z3ITEMS`,
    /// `Z1MODIFIERS`) into the new key columns; the same model change migrates its LMDB split too.
    @Test(arguments: [StoreType.sqlite, .lmdb])
    func swiftDataStoreGainsInversesKeepingItsMembers(outputType: StoreType) throws {
        let temp = TemporaryDirectory()
        var url = try SplitFidelityTests.copyFixture(Self.swiftDataStore, into: temp)
        try SQLite3.execute(url.path, "PRAGMA wal_checkpoint(TRUNCATE);")
        let model = try StoreSplitter.openReadOnly(url, model: nil).0.model
        try Self.seedSwiftDataMembers(url)
        if outputType == .lmdb {
            let output = SplitDestination(configuration: "Default", url: temp.file("Out.lmdb"), type: .lmdb)
            let splitter = try StoreSplitter(source: url, targetModel: model, destinations: [output])
            #expect(try splitter.run(try splitter.plan(), options: SplitOptions(verifyContent: true)).contentVerified)
            url = output.url
        }
        // The app's next model: each to-many gets a new to-one inverse.
        let inverses = ["CartModel": ("items", "cart"), "CartItemModel": ("modifiers", "item")]
        let entities = model.entities.map { entity -> EntityDescription in
            var entity = entity
            if let (toMany, inverse) = inverses[entity.name] {
                entity.relationships = entity.relationships.map { r in
                    var r = r
                    if r.name == toMany { r.inverseName = inverse }
                    return r
                }
            }
            for (owner, (toMany, inverse)) in inverses {
                if model.entity(named: owner)?.relationship(named: toMany)?.destinationEntityName == entity.name {
                    entity.relationships.append(RelationshipDescription(name: inverse, destination: owner, inverse: toMany))
                }
            }
            return entity
        }
        let next = try ObjectModel(entities: entities, configurations: model.configurations)
        let report = ModelDiff.compare(from: model, to: next, configuration: "Default")
        #expect(report.isInferable, "\(report)")

        let coordinator = StoreCoordinator(model: next)
        try coordinator.addStore(outputType, configuration: "Default", at: url)
        let context = ObjectContext(coordinator: coordinator)
        let items = try #require(try context.fetch(FetchRequest(entityName: "CartModel")).first).relatedObjects(forKey: "items")
        #expect(try items.map { try $0.get("id", as: String.self) ?? "" }.sorted() == ["i1", "i2"])
        #expect(try Self.memberNames(context, owner: "CartItemModel", "modifiers").map { $0.sorted() } == [["large"], ["hot", "iced"]])
        // The new inverses read the owners, and a predicate through them finds the rows.
        let iced = try #require(try context.fetch(FetchRequest(entityName: "CartItemModifierModel", predicate: try FetchPredicate(format: "name == 'iced'"))).first)
        #expect(try iced.relatedObject(forKey: "item")?.get("id", as: String.self) == "i2")
        #expect(try context.count(FetchRequest(entityName: "CartItemModifierModel", predicate: try FetchPredicate(format: "item.id == 'i2'"))) == 2)
        #expect(try context.count(FetchRequest(entityName: "CartItemModel", predicate: try FetchPredicate(format: "cart != nil"))) == 2)
        if outputType == .sqlite {
            // Core Data's layout for the new model: the key columns hold the owners, the hidden ones are gone.
            let columns = try SQLite3.query(url.path, "SELECT name FROM pragma_table_info('ZCARTITEMMODIFIERMODEL') ORDER BY name")
            #expect(columns.contains("ZITEM") && !columns.contains("Z1MODIFIERS"), "\(columns)")
            #expect(try SQLite3.query(url.path, "SELECT ZID || ':' || ZITEM FROM ZCARTITEMMODIFIERMODEL ORDER BY ZID") == "m1:1\nm2:2\nm3:2")
        }
    }
}

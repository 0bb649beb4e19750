import Foundation
import Switchyard
import Synchronization
import Testing

/// Batch insert, update and delete without objects, as Core Data's `NSBatchInsertRequest`,
/// `NSBatchUpdateRequest` and `NSBatchDeleteRequest` do them — checked as a save checks values, one transaction
/// per store, `Z_OPT` kept, uniqueness kept, delete rules applied (unlike Core Data's batch delete), and published
/// like a save.
@Suite struct BatchOperationTests {
    static func codes(_ coordinator: StoreCoordinator, _ format: String = "TRUEPREDICATE") throws -> [String] {
        let request = FetchRequest(entityName: "Order", predicate: format == "TRUEPREDICATE" ? nil : try FetchPredicate(format: format), sortKeys: [SortKey("code")])
        return try Shop.codes(ObjectContext(coordinator: coordinator).fetch(request))
    }

    @Test(arguments: Backend.everyStore)
    func batchInsertChecksValuesAndPublishes(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let received = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in received.withLock { $0.append(note) } }
        defer { observation.cancel() }
        let ids = try coordinator.batchInsert("Order", [["code": "B1", "qty": .integer(1)], ["code": "B2", "qty": .integer(2), "width": .double(0.5)]])
        #expect(ids.count == 2)
        let context = ObjectContext(coordinator: coordinator)
        #expect(try context.existingObject(with: ids[1]).get("width", as: Double.self) == 0.5)
        #expect(try context.existingObject(with: ids[0]).get("code", as: String.self) == "B1")
        #expect(received.withLock { $0.first?.insertedObjectIDs } == Set(ids))

        // Refused before anything is written: a missing required value, an unknown key, a relationship, a wrong type.
        expectContextError("missing qty", { if case .missingRequiredValue(_, "qty", _) = $0 { return true } else { return false } }) {
            try coordinator.batchInsert("Order", [["code": "B3", "qty": .integer(3)], ["code": "B4"]])
        }
        expectContextError("unknown key", { if case .unknownKey("Order", "colour") = $0 { return true } else { return false } }) {
            try coordinator.batchInsert("Order", [["code": "B5", "qty": .integer(1), "colour": .string("red")]])
        }
        expectContextError("relationship key", { if case .unknownKey("Order", "customer") = $0 { return true } else { return false } }) {
            try coordinator.batchInsert("Order", [["code": "B5", "qty": .integer(1), "customer": .integer(1)]])
        }
        expectContextError("wrong type", { if case .typeMismatch("Order", "qty", _, _) = $0 { return true } else { return false } }) {
            try coordinator.batchInsert("Order", [["code": "B5", "qty": .string("many")]])
        }
        expectContextError("unknown entity", { $0 == .unknownEntity("Invoice") }) { try coordinator.batchInsert("Invoice", [[:]]) }
        #expect(try Self.codes(coordinator) == ["B1", "B2"])
    }

    /// Uniqueness constraints hold in a batch: a duplicate fails the whole batch (nothing written), and a batch
    /// update that would give two rows one constrained value fails too.
    @Test(arguments: Backend.everyStore)
    func batchesKeepUniquenessConstraints(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try SaveBehaviourTests.couponCoordinator(backend, in: dir)
        try coordinator.batchInsert("Coupon", [["code": "X", "amount": .integer(1)], ["code": "Y", "amount": .integer(2)]])
        #expect(throws: StoreError.self) { try coordinator.batchInsert("Coupon", [["code": "Z"], ["code": "X"]]) }
        #expect(try SaveBehaviourTests.savedCodes(coordinator) == ["X", "Y"])
        #expect(throws: StoreError.self) { try coordinator.batchUpdate("Coupon", set: ["code": "W"]) }
        #expect(try SaveBehaviourTests.savedCodes(coordinator) == ["X", "Y"])
        #expect(try coordinator.batchUpdate("Coupon", where: try FetchPredicate(format: "code == 'Y'"), set: ["code": "W"]) == 1)
        #expect(try SaveBehaviourTests.savedCodes(coordinator) == ["W", "X"])
    }

    /// A batch update changes only the matching rows and bumps their Z_OPT: a context holding one of them with
    /// an unsaved change gets a conflict on save (nothing lost), and saves after merging the notification.
    @Test(arguments: Backend.everyStore)
    func batchUpdateBumpsVersionsAndPublishes(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try SaveNotificationTests.seeded(backend, in: dir)
        let holder = ObjectContext(coordinator: coordinator)
        let a3 = try SaveNotificationTests.order(holder, "A3")
        try a3.set("width", 4.0)
        let received = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in received.withLock { $0.append(note) } }
        defer { observation.cancel() }
        let updated = try coordinator.batchUpdate("Order", where: try FetchPredicate(format: "qty >= 2"), set: ["qty": .integer(9)])
        #expect(updated == 2)
        #expect(try Self.codes(coordinator, "qty == 9") == ["A2", "A3"])
        #expect(try Self.codes(coordinator, "qty == 1") == ["A1"])
        let note = try #require(received.withLock { $0.first })
        #expect(Set(note.updatedObjectIDs.map(\.uriRepresentation)).count == 2)
        #expect(note.stores.first?.updated.values.allSatisfy { $0 == ["qty"] } == true)
        #expect(throws: StoreError.self) { try holder.save() }
        try holder.mergeChanges(from: note, policy: .contextWins)
        try holder.save()
        let reader = ObjectContext(coordinator: coordinator)
        let saved = try SaveNotificationTests.order(reader, "A3")
        #expect(try saved.get("qty", as: Int64.self) == 9)
        #expect(try saved.get("width", as: Double.self) == 4.0)
        // Setting a required attribute to nil is refused before anything is written.
        expectContextError("required to nil", { if case .missingRequiredValue(_, "qty", _) = $0 { return true } else { return false } }) {
            try coordinator.batchUpdate("Order", set: ["qty": .null])
        }
    }

    /// Predicates reach through relationships in batches as in fetches (SQLite runs one statement with the
    /// fetch's joins; the other stores read the rows), and an update that matches nothing changes nothing.
    @Test(arguments: Backend.everyStore)
    func batchPredicatesFollowRelationships(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let ann = try Shop.customer(context, "Ann"), bob = try Shop.customer(context, "Bob")
        for i in 0..<6 { try Shop.order(context, "O\(i)", qty: Int64(i), customer: i % 2 == 0 ? ann : bob) }
        try context.save()
        #expect(try coordinator.batchUpdate("Order", where: try FetchPredicate(format: "customer.name == 'Ann' AND qty > 0"), set: ["width": .double(7)]) == 2)
        #expect(try Self.codes(coordinator, "width == 7") == ["O2", "O4"])
        let tagged = try context.insert("Tag")
        try tagged.set("label", "x")
        for order in try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "qty < 2"))) {
            try order.addRelatedObject(tagged, forKey: "tags")
        }
        try context.save()
        #expect(try coordinator.batchUpdate("Order", where: try FetchPredicate(format: "ANY tags.label == 'x'"), set: ["width": .double(3)]) == 2)
        #expect(try Self.codes(coordinator, "width == 3") == ["O0", "O1"])
        #expect(try coordinator.batchDelete("Tag", where: try FetchPredicate(format: "label == 'x'")) == 1)
        #expect(try coordinator.batchUpdate("Order", where: try FetchPredicate(format: "tags.@count > 0"), set: ["width": .double(4)]) == 0)
        #expect(try coordinator.batchUpdate("Order", where: try FetchPredicate(format: "qty > 100"), set: ["width": .double(1)]) == 0)
        #expect(try Self.codes(coordinator, "width == 1") == [])
    }

    /// Delete rules apply (unlike Core Data's batch delete): Nullify clears the orders' customer, Cascade
    /// deletes a folder's notes, Deny refuses the whole batch; an entity no relationship touches is deleted
    /// row by row. Each is published like a save.
    @Test(arguments: Backend.everyStore)
    func batchDeleteAppliesDeleteRules(_ backend: Backend) throws {
        let dir = try TempDir()
        let shop = try Shop.coordinator(backend, in: dir)
        let context = ObjectContext(coordinator: shop)
        let ann = try Shop.customer(context, "Ann")
        try Shop.order(context, "A1", qty: 1, customer: ann)
        try Shop.customer(context, "Bob")
        try context.save()
        #expect(try shop.batchDelete("Customer", where: try FetchPredicate(format: "name == 'Ann'")) == 1)
        let reader = ObjectContext(coordinator: shop)
        let order = try SaveNotificationTests.order(reader, "A1")
        #expect(try order.relatedObject(forKey: "customer") == nil)
        #expect(try ObjectContext(coordinator: shop).count(FetchRequest(entityName: "Customer")) == 1)

        let folder = EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, deleteRule: .cascade),
            RelationshipDescription(name: "pins", destination: "Pin", inverse: "folder", isToMany: true, deleteRule: .deny),
        ])
        let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)], relationships: [
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes"),
        ])
        let pin = EntityDescription(name: "Pin", attributes: [AttributeDescription(name: "at", type: .integer64)], relationships: [
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "pins"),
        ])
        let log = EntityDescription(name: "Log", attributes: [AttributeDescription(name: "line", type: .string)])
        let coordinator = StoreCoordinator(model: try ObjectModel(
            entities: [folder, note, pin, log],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Folder", "Note", "Pin", "Log"])]))
        try backend.add(to: coordinator, configuration: "Main", in: dir.url, name: "Notes")
        let notes = ObjectContext(coordinator: coordinator)
        let work = try notes.insert("Folder"), home = try notes.insert("Folder")
        try work.set("name", "work")
        try home.set("name", "home")
        for i in 0..<3 {
            let n = try notes.insert("Note")
            try n.set("text", "n\(i)")
            try n.setRelatedObject(i < 2 ? work : home, forKey: "folder")
        }
        let p = try notes.insert("Pin")
        try p.setRelatedObject(home, forKey: "folder")
        try coordinator.batchInsert("Log", (0..<5).map { ["line": .string("l\($0)")] })
        try notes.save()
        let received = Mutex<[SaveNotification]>([])
        let observation = coordinator.addSaveObserver { note in received.withLock { $0.append(note) } }
        defer { observation.cancel() }

        #expect(try coordinator.batchDelete("Folder", where: try FetchPredicate(format: "name == 'work'")) == 1)
        let fresh = ObjectContext(coordinator: coordinator)
        #expect(try fresh.count(FetchRequest(entityName: "Note")) == 1)
        #expect(received.withLock { $0.last?.deletedObjectIDs.count } == 3)
        #expect(throws: ContextError.self) { try coordinator.batchDelete("Folder") }
        #expect(try fresh.count(FetchRequest(entityName: "Folder")) == 1)
        #expect(try coordinator.batchDelete("Log", where: try FetchPredicate(format: "line != 'l0'")) == 4)
        #expect(try fresh.count(FetchRequest(entityName: "Log")) == 1)
        #expect(received.withLock { $0.last?.deletedObjectIDs.count } == 4)
    }
}

import Foundation
import Switchyard
import Testing

/// `StoreChangeSet.inserts` is a `StoreRows`: it must behave like the array of rows it replaced, whichever way
/// it was built, and a context's save must hand every store exactly the rows its new objects hold.
struct StoreRowsTests {
    static func row(_ i: Int) -> StoreRow {
        StoreRow(entityName: i % 2 == 0 ? "Chat" : "Message", primaryKey: Int64(i), values: ["title": .string("r\(i)")])
    }

    @Test
    func storeRowsBehaveLikeAnArrayOfRows() {
        let array = (0..<5).map(Self.row)
        var rows = StoreRows(array)
        #expect(Array(rows) == array)
        #expect(rows.count == 5)
        #expect(rows.description == array.description)

        var expected = array
        rows.append(Self.row(5)); expected.append(Self.row(5))
        rows.insert(Self.row(6), at: 1); expected.insert(Self.row(6), at: 1)
        rows.remove(at: 3); expected.remove(at: 3)
        rows.removeLast(); expected.removeLast()
        rows[0].version = 9; expected[0].version = 9
        rows.append(contentsOf: [Self.row(7), Self.row(8)]); expected.append(contentsOf: [Self.row(7), Self.row(8)])
        rows.reserveCapacity(100)
        #expect(Array(rows) == expected)
        #expect(rows == StoreRows(expected))
        #expect(rows.hashValue == StoreRows(expected).hashValue)
        #expect(rows != StoreRows(array))

        let literal: StoreRows = [Self.row(0), Self.row(1)]
        #expect(Array(literal) == [Self.row(0), Self.row(1)])
        #expect(StoreRows().isEmpty)
        // A change set made from an array reads the same rows back.
        #expect(Array(StoreChangeSet(inserts: array).inserts) == array)
        #expect(StoreChangeSet(inserts: array) == StoreChangeSet(inserts: array))
        #expect(StoreChangeSet(inserts: array) != StoreChangeSet(inserts: expected))
        // As the type's documentation shows it.
        var changes = StoreChangeSet()
        changes.inserts = [Self.row(0)]
        changes.inserts.append(Self.row(1))
        changes.inserts[1].version = 3
        #expect(changes.inserts.map(\.version) == [1, 3])
        var dumped = ""
        dump(changes.inserts, to: &dumped)
        var dumpedArray = ""
        dump(Array(changes.inserts), to: &dumpedArray)
        #expect(dumped.split(separator: "\n").dropFirst().elementsEqual(dumpedArray.split(separator: "\n").dropFirst()))
    }

    /// Rows saved through a store with keys it did not hand out (a copy keeping its source's keys, a caller's own
    /// numbering) are never handed out again: the next allocation starts past the highest, on every store, and a
    /// context's new objects save beside them.
    @Test(arguments: Backend.everyStore)
    func keysSavedWithoutAllocationAreNeverAllocatedAgain(backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        #expect(try store.allocatePrimaryKeys(for: "Order", count: 2) == 1...2)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Order", primaryKey: 500, values: ["code": "copied", "qty": 1]),
            StoreRow(entityName: "Order", primaryKey: 40, values: ["code": "lower", "qty": 2]),
            StoreRow(entityName: "Customer", primaryKey: 7, values: ["name": "Ann"]),
        ]))
        #expect(try store.allocatePrimaryKeys(for: "Order", count: 1) == 501...501)
        #expect(try store.allocatePrimaryKeys(for: "Customer", count: 1) == 8...8)
        // A lower key than the counter's leaves it where it is.
        try store.save(StoreChangeSet(inserts: [StoreRow(entityName: "Order", primaryKey: 3, values: ["code": "low", "qty": 3])]))
        #expect(try store.allocatePrimaryKeys(for: "Order", count: 1) == 502...502)
        let context = ObjectContext(coordinator: coordinator)
        try Shop.order(context, "new", qty: 4)
        try context.save()
        let all = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Order", sortKeys: [SortKey("qty")]))
        #expect(try Shop.codes(all) == ["copied", "lower", "low", "new"])
        #expect(all.last?.objectID.primaryKey.map { $0 > 502 } == true)
    }

    /// A save of new objects of four entities, interleaved, some with no value set, some Nodes pinned to a new
    /// Label (to-ones on some rows only, starting after rows without): each store's rows read back as set.
    @Test(arguments: Backend.everyStore)
    func interleavedNewObjectsReadBackAsSet(backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(Graph.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        var expected: [String: [String]] = [:]
        var pins: [String: String] = [:]
        var lastLabel: (object: ManagedObject, name: String)?
        for i in 0..<300 {
            let entity = ["Node", "Label", "A", "B"][i % 4]
            let object = try context.insert(entity)
            let name = i % 7 == 0 ? "<nil>" : "\(entity)-\(i)"
            if name != "<nil>" { try object.set("name", name) }
            expected[entity, default: []].append(name)
            if entity == "Label", name != "<nil>" { lastLabel = (object, name) }
            if entity == "Node", i > 40, i % 3 == 0, name != "<nil>", let label = lastLabel {
                try object.setRelatedObject(label.object, forKey: "pinned")
                pins[name] = label.name
            }
        }
        try context.save()

        let reader = ObjectContext(coordinator: coordinator)
        for entity in ["Node", "Label", "A", "B"] {
            let names = try reader.fetch(FetchRequest(entityName: entity)).map { try $0.get("name", as: String.self) ?? "<nil>" }
            #expect(names.sorted() == expected[entity, default: []].sorted(), "\(backend): \(entity)")
        }
        #expect(pins.count > 10)
        for node in try reader.fetch(FetchRequest(entityName: "Node")) {
            guard let name = try node.get("name", as: String.self) else { continue }
            let pinned = try node.relatedObject(forKey: "pinned")?.get("name", as: String.self)
            #expect(pinned == pins[name], "\(backend): \(name)")
        }
    }
}

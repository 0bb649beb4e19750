import Foundation
import Switchyard
import Testing

/// Long `IN` lists on indexed attributes (what a prefetch or a sync of thousands of keys sends, and where SQLite
/// probes the attribute's index with each listed value) mean what `IN` means on every backend: a row is returned
/// once however often its value is listed, texts match byte for byte (a decomposed `é` is not the composed one
/// a row holds), other terms of an AND still apply, as do subentities, sort, limit and offset, and counts agree.
struct IndexedInListTests {
    static func model() throws -> ObjectModel {
        let item = EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "code", type: .string, isIndexed: true),
                AttributeDescription(name: "n", type: .integer64, isIndexed: true),
                AttributeDescription(name: "small", type: .integer16, isIndexed: true),
                AttributeDescription(name: "tag", type: .string),
            ])
        let special = EntityDescription(
            name: "SpecialItem", parent: "Item", attributes: [AttributeDescription(name: "extra", type: .string)])
        return try ObjectModel(
            entities: [item, special], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Item", "SpecialItem"])])
    }

    static let rows = 300

    /// Row `i`: a code (composed `é` in every seventh), `n` (some shared by two rows), a 16-bit number, a tag.
    static func code(_ i: Int) -> String { i % 7 == 0 ? "caf\u{E9}-\(i)" : "code-\(i)" }
    static func n(_ i: Int) -> Int64 { Int64(i / 2) * 10 }
    static func small(_ i: Int) -> Int16 { Int16(i % 50) }
    static func tag(_ i: Int) -> String { i % 3 == 0 ? "odd" : "even" }
    static func isSpecial(_ i: Int) -> Bool { i % 5 == 0 }

    static func context(_ backend: Backend, in dir: TempDir) throws -> ObjectContext {
        let coordinator = StoreCoordinator(model: try model())
        try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let seed = ObjectContext(coordinator: coordinator)
        for i in 0..<rows {
            let item = try seed.insert(isSpecial(i) ? "SpecialItem" : "Item")
            try item.set("code", code(i))
            try item.set("n", n(i))
            try item.set("small", small(i))
            try item.set("tag", tag(i))
        }
        try seed.save()
        return ObjectContext(coordinator: coordinator)
    }

    /// The rows `request` returns, as their numbers (from the code), in the order returned.
    static func rows(_ context: ObjectContext, _ request: FetchRequest) throws -> [Int] {
        try context.fetch(request).map { object in
            let code = try object.get("code", as: String.self)!
            return Int(code.split(separator: "-").last!)!
        }
    }

    @Test(arguments: Backend.everyStore)
    func longListsOnIndexedAttributesMeanWhatInMeans(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = try Self.context(backend, in: dir)
        let all = Array(0..<Self.rows)

        // Every third row's code listed three times, codes no row has, and every row's code with a decomposed é
        // (which no row holds: rows with é hold the composed one).
        let wanted = all.filter { $0 % 3 == 0 }
        var codes: [String] = []
        for i in wanted { codes += [Self.code(i), Self.code(i), Self.code(i)] }
        codes += (0..<200).map { "missing-\($0)" }
        codes += all.filter { $0 % 7 == 0 }.map { "cafe\u{301}-\($0)" }
        codes.shuffle()
        let byCode = try FetchPredicate(format: "code IN %@", codes.predicateArgument)
        let request = FetchRequest(entityName: "Item", predicate: byCode, sortKeys: [SortKey("code")])
        #expect(try Self.rows(context, request) == wanted.sorted { Self.code($0) < Self.code($1) })
        #expect(try context.count(request) == wanted.count)
        // Without sort keys the rows come in the order a fetch without the list gives them, whatever the list's
        // order (SQLite reads them in the list's order and the store sorts them).
        let everyRow = try Self.rows(context, FetchRequest(entityName: "Item"))
        #expect(everyRow.sorted() == all)
        #expect(try Self.rows(context, FetchRequest(entityName: "Item", predicate: byCode)) == everyRow.filter { $0 % 3 == 0 })
        // Without subentities; with sort, offset and limit; with another term of an AND.
        var exact = request
        exact.includesSubentities = false
        #expect(try Self.rows(context, exact).sorted() == wanted.filter { !Self.isSpecial($0) })
        var page = FetchRequest(entityName: "Item", predicate: byCode, sortKeys: [SortKey("n", ascending: false), SortKey("code")])
        page.fetchOffset = 5
        page.fetchLimit = 10
        let ordered = wanted.sorted { (Self.n($0), Self.code($1)) > (Self.n($1), Self.code($0)) }
        #expect(try Self.rows(context, page) == Array(ordered[5..<15]))
        let and = try FetchPredicate(format: "tag == 'odd' AND code IN %@ AND n >= 100", codes.predicateArgument)
        #expect(try Self.rows(context, FetchRequest(entityName: "Item", predicate: and)).sorted()
            == wanted.filter { Self.tag($0) == "odd" && Self.n($0) >= 100 })
        #expect(try context.count(FetchRequest(entityName: "Item", predicate: and)) == wanted.filter { Self.tag($0) == "odd" && Self.n($0) >= 100 }.count)
        // Under NOT and inside an OR the list means the same.
        #expect(try Self.rows(context, FetchRequest(entityName: "Item", predicate: FetchPredicate(format: "NOT (code IN %@)", codes.predicateArgument))).sorted()
            == all.filter { $0 % 3 != 0 })
        #expect(try Self.rows(context, FetchRequest(entityName: "Item", predicate: FetchPredicate(format: "code IN %@ OR n == 5", codes.predicateArgument))).sorted()
            == wanted)

        // Integers: `n` values shared by two rows each, listed twice, among values no row has; a 16-bit column.
        var numbers: [Int64] = all.filter { $0 % 4 == 0 }.flatMap { [Self.n($0), Self.n($0)] }
        numbers += (0..<100).map { 1_000_000 + Int64($0) }
        let byNumber = FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "n IN %@", numbers.shuffled().predicateArgument))
        let sharing = all.filter { Set(numbers).contains(Self.n($0)) }
        #expect(try Self.rows(context, byNumber).sorted() == sharing)
        #expect(try Self.rows(context, byNumber) == everyRow.filter { Set(numbers).contains(Self.n($0)) })
        #expect(try context.count(byNumber) == sharing.count)
        let smalls: [Int64] = (0..<40).map { Int64($0 % 20) } + [300, 301]
        let bySmall = FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "small IN %@", smalls.predicateArgument))
        #expect(try Self.rows(context, bySmall).sorted() == all.filter { Self.small($0) < 20 })
        // A list mixing texts and numbers on a text attribute: only the texts can match.
        let mixed: [AttributeValue] = wanted.map { .string(Self.code($0)) } + [.integer(3), .null]
        #expect(try Self.rows(context, FetchRequest(entityName: "Item", predicate: FetchPredicate(format: "code IN %@", mixed.predicateArgument))).sorted()
            == wanted)
    }

    /// Unsaved changes take part as they do in any fetch: a pending insert whose code is listed is returned, a
    /// pending change of a listed row's code away from the list drops it, a pending deletion hides its row.
    @Test(arguments: Backend.everyStore)
    func longListsSeePendingChanges(_ backend: Backend) throws {
        let dir = try TempDir()
        let context = try Self.context(backend, in: dir)
        let codes = (0..<40).map(Self.code) + ["new-1"]
        let request = FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "code IN %@", codes.predicateArgument))
        let items = try context.fetch(request)
        #expect(items.count == 40)
        try context.insert("Item").set("code", "new-1")
        let moved = try #require(items.first { try $0.get("code", as: String.self) == Self.code(3) })
        try moved.set("code", "elsewhere-3")
        let deleted = try #require(items.first { try $0.get("code", as: String.self) == Self.code(4) })
        try context.delete(deleted)
        let seen = Set(try context.fetch(request).map { try $0.get("code", as: String.self)! })
        #expect(seen == Set(codes).subtracting([Self.code(3), Self.code(4)]))
        #expect(try context.count(request) == 39)
    }
}

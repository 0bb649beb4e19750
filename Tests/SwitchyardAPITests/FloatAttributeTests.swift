import Foundation
import Switchyard
import Testing

/// A Float attribute holds what a `Float` holds, on every backend: a Double set through the string API is kept
/// at single precision at once (so the typed `Float` property, the stored value and a predicate on the attribute
/// agree, saved or not), and a finite value beyond Float's range is refused when set — as an integer attribute
/// refuses a value beyond its range — rather than saved and read back through a `Float` as infinity.
struct FloatAttributeTests {
    struct Reading: EntityObject {
        static let entityName = "Reading"
        static let declaredProperties: [DeclaredProperty] = [.attribute("label", String.self), .optionalAttribute("ratio", Float.self)]
        static var keyPathNames: [PartialKeyPath<Reading>: String] { [\Reading.label: "label", \Reading.ratio: "ratio"] }
        let managedObject: ManagedObject
        init(managedObject: ManagedObject) { self.managedObject = managedObject }
        var label: String { get { managedObject[attribute: "label"] } nonmutating set { managedObject[attribute: "label"] = newValue } }
        var ratio: Float? { get { managedObject[attribute: "ratio"] } nonmutating set { managedObject[attribute: "ratio"] = newValue } }
    }

    static func model() throws -> ObjectModel {
        let reading = EntityDescription(
            name: "Reading",
            attributes: [
                AttributeDescription(name: "label", type: .string, isOptional: false),
                AttributeDescription(name: "ratio", type: .float),
            ])
        return try ObjectModel(entities: [reading], configurations: [ConfigurationDescription(name: "Main", entityNames: ["Reading"])])
    }

    /// The labels `format` selects, sorted; the count agrees.
    static func labels(_ context: ObjectContext, _ format: String, _ arguments: any PredicateArgumentConvertible...) throws -> [String] {
        let request = FetchRequest(entityName: "Reading", predicate: try FetchPredicate(format: format, arguments: arguments.map(\.predicateArgument)), sortKeys: [SortKey("label")])
        let found = try context.fetch(request).map { try $0.get("label", as: String.self) ?? "?" }
        #expect(try context.count(request) == found.count, "count of \(format)")
        return found
    }

    @Test(arguments: Backend.everyStore)
    func aFloatAttributeHoldsSinglePrecision(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        let context = ObjectContext(coordinator: coordinator)
        let values: [(String, Double)] = [("tenth", 0.1), ("largest", Double(Float.greatestFiniteMagnitude)), ("infinite", .infinity), ("zero", -0.0)]
        for (label, value) in values {
            let reading = try context.insert("Reading")
            try reading.set("label", label)
            try reading.set("ratio", value)
        }
        let typed = try context.insert(Reading.self)
        typed.label = "typed"
        typed.ratio = 0.1
        let expected: [String: Double] = [
            "tenth": Double(Float(0.1)), "largest": Double(Float.greatestFiniteMagnitude), "infinite": .infinity, "zero": 0, "typed": Double(Float(0.1)),
        ]

        func check(_ context: ObjectContext, _ state: String) throws {
            for reading in try context.fetch(FetchRequest(entityName: "Reading")) {
                let label = try #require(try reading.get("label", as: String.self))
                let stored = try #require(try reading.get("ratio", as: Double.self), "\(label) \(state)")
                #expect(stored == expected[label], "\(label) \(state): \(stored)")
                #expect(stored.sign == .plus, "\(label) \(state): no negative zero")
            }
            #expect(try context.fetch(Reading.self, where: \.ratio == Float(0.1)).map(\.label).sorted() == ["tenth", "typed"], "\(state)")
            #expect(try Self.labels(context, "ratio == %@", Float(0.1)) == ["tenth", "typed"], "\(state)")
            // The Double 0.1 is not what the attribute holds (as with a Float in Swift: Double(Float(0.1)) != 0.1).
            #expect(try Self.labels(context, "ratio == %@", 0.1) == [], "\(state)")
            #expect(try Self.labels(context, "ratio > %@", 1e38) == ["infinite", "largest"], "\(state)")
            #expect(try context.count(Reading.self, where: \.ratio < 1) == 3, "\(state)")
        }
        try check(context, "unsaved")
        try context.save()
        try check(ObjectContext(coordinator: coordinator), "saved")

        // Beyond Float's range: refused when set, saying why; the object keeps its value.
        let reading = try #require(try ObjectContext(coordinator: coordinator).fetch(Reading.self, where: \.label == "tenth").first)
        for (what, value) in [("1e300", AttributeValue.double(1e300)), ("-1e39", .double(-1e39)), ("Decimal 1e100", .decimal(Decimal(string: "1e100")!))] {
            let error = #expect(throws: ContextError.self, "\(what)") { try reading.managedObject.setValue(value, forKey: "ratio") }
            #expect(error?.localizedDescription.contains("a Float holds at most ±3.4028235e+38") == true, "\(what): \(error?.localizedDescription ?? "")")
        }
        #expect(reading.ratio == Float(0.1))
        #expect(!reading.managedObject.hasChanges)
    }

    /// The rule is the object layer's: a store keeps the doubles it is handed (what `storesplit` and migrations
    /// copy from a legacy store, whose Float column may hold any double), and a context reads them as they are.
    @Test(arguments: Backend.everyStore)
    func aStoreKeepsTheDoublesItIsHanded(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try backend.coordinator(try Self.model(), in: dir)
        let store = try #require(coordinator.stores(serving: "Reading").first)
        let keys = try store.allocatePrimaryKeys(for: "Reading", count: 2)
        try store.save(StoreChangeSet(inserts: [
            StoreRow(entityName: "Reading", primaryKey: keys.lowerBound, values: ["label": "tenth", "ratio": .double(0.1)]),
            StoreRow(entityName: "Reading", primaryKey: keys.upperBound, values: ["label": "huge", "ratio": .double(1e300)]),
        ]))
        let context = ObjectContext(coordinator: coordinator)
        let read = try context.fetch(FetchRequest(entityName: "Reading", sortKeys: [SortKey("label")]))
        #expect(try read.map { try $0.get("ratio", as: Double.self) } == [1e300, 0.1])
        #expect(try Self.labels(context, "ratio == %@", 0.1) == ["tenth"])
    }
}

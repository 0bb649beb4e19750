import Foundation

// MARK: - LMDBEntityLayout

/// How one entity's rows are encoded: its persistent attributes and to-one relationships by position. A
/// subentity lists its parent's properties first, so an inherited property has the same position in every
/// entity of the tree.
struct LMDBEntityLayout: Sendable {
    let entity: EntityDescription
    /// The entity's number in this store (see `LMDBSchema.numbers`).
    let number: Int
    let rootNumber: Int
    /// Persistent attributes, own and inherited, in the model's order.
    let attributes: [AttributeDescription]
    let attributeIndex: [String: Int]
    /// Persistent to-one relationships, own and inherited.
    let toOnes: [RelationshipDescription]
    let toOneIndex: [String: Int]

    var name: String { entity.name }
    var rootName: String { entity.rootName }

    init(entity: EntityDescription, number: Int, rootNumber: Int) {
        self.entity = entity
        self.number = number
        self.rootNumber = rootNumber
        attributes = entity.persistentAttributes
        attributeIndex = Dictionary(attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        toOnes = entity.persistentToOneRelationships
        toOneIndex = Dictionary(toOnes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }
}

// MARK: - LMDBIndexDefinition

/// One secondary index of a table (an inheritance tree): a fetch index, an indexed attribute, a uniqueness
/// constraint or a to-one relationship's key. Each lives in its own named database, `index:<Root>:<p1>,<p2>`,
/// whose keys are `LMDBIndexKey` entries (the properties' values, then the primary key) with empty values.
struct LMDBIndexDefinition: Sendable, Hashable {
    let root: String
    /// Property names (attributes or to-one relationships); a lookup by the first alone is a prefix search.
    let properties: [String]

    var databaseName: String { "index:\(root):\(properties.joined(separator: ","))" }
}

// MARK: - LMDBSchema

/// Everything the store derives from the model once at open: entity numbers, row layouts and indexes.
struct LMDBSchema: Sendable {
    /// Entity name -> number. A new store uses the model's numbers (Core Data's `Z_ENT`); an existing store
    /// keeps the numbers its rows were written with (stored in `meta` under `entities`) and numbers entities
    /// it has never seen after them, so a model that gains an entity never reinterprets old rows.
    let numbers: [String: Int]
    /// Layouts indexed by entity number (position 0 unused).
    private let byNumber: [LMDBEntityLayout?]
    private let byName: [String: LMDBEntityLayout]
    /// Secondary indexes per root entity name, for every table this store serves.
    let indexes: [String: [LMDBIndexDefinition]]
    /// Root entity names of the tables this store serves.
    let servedRoots: [String]

    init(model: ObjectModel, served: [EntityDescription], numbers: [String: Int]) {
        self.numbers = numbers
        var byName: [String: LMDBEntityLayout] = [:]
        for entity in model.entities {
            guard let number = numbers[entity.name], let root = numbers[entity.rootName] else { continue }
            byName[entity.name] = LMDBEntityLayout(entity: entity, number: number, rootNumber: root)
        }
        var byNumber = [LMDBEntityLayout?](repeating: nil, count: (numbers.values.max() ?? 0) + 1)
        for layout in byName.values { byNumber[layout.number] = layout }
        self.byName = byName
        self.byNumber = byNumber
        var roots: [String] = []
        for entity in served where !roots.contains(entity.rootName) { roots.append(entity.rootName) }
        servedRoots = roots
        var indexes: [String: [LMDBIndexDefinition]] = [:]
        for root in roots {
            guard let rootEntity = model.entity(named: root) else { continue }
            indexes[root] = Self.indexDefinitions(root: rootEntity, model: model)
        }
        self.indexes = indexes
    }

    func layout(named name: String) -> LMDBEntityLayout? { byName[name] }

    func layout(number: Int) -> LMDBEntityLayout? {
        number > 0 && number < byNumber.count ? byNumber[number] : nil
    }

    /// An index of `root` whose first property is `property` (the shortest such index, for the densest keys).
    func index(root: String, firstProperty property: String) -> LMDBIndexDefinition? {
        indexes[root]?.filter { $0.properties.first == property }.min { $0.properties.count < $1.properties.count }
    }

    /// The index of `root` over exactly `properties`.
    func index(root: String, properties: [String]) -> LMDBIndexDefinition? {
        indexes[root]?.first { $0.properties == properties }
    }

    /// Every index a table needs, from every entity of its tree: fetch indexes, legacy `isIndexed` attributes,
    /// uniqueness constraints (enforced through their index) and each to-one relationship (so to-many members
    /// are found through the inverse's index, not by scanning). Duplicates collapse; properties that no store
    /// holds (transient, to-many) drop the definition.
    static func indexDefinitions(root: EntityDescription, model: ObjectModel) -> [LMDBIndexDefinition] {
        var lists: [[String]] = []
        func add(_ properties: [String]) {
            if !properties.isEmpty, !lists.contains(properties) { lists.append(properties) }
        }
        let family = root.selfAndDescendantNames.compactMap { model.entity(named: $0) }
        for entity in family {
            let storable = Set(entity.persistentAttributes.map(\.name) + entity.persistentToOneRelationships.map(\.name))
            for index in entity.indexes {
                let properties = index.elements.map(\.property)
                if properties.allSatisfy(storable.contains) { add(properties) }
            }
            for attribute in entity.attributes where attribute.isIndexed && !attribute.isTransient { add([attribute.name]) }
            for constraint in entity.uniquenessConstraints where constraint.allSatisfy(storable.contains) { add(constraint) }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                add([relationship.name])
            }
        }
        return lists.map { LMDBIndexDefinition(root: root.name, properties: $0) }
    }

    // MARK: - Entity numbers

    /// The numbers a store uses: `stored` ones kept, model entities it lacks numbered after the highest.
    static func numbers(model: ObjectModel, stored: [String: Int]) -> [String: Int] {
        if stored.isEmpty {
            return Dictionary(model.entities.map { ($0.name, $0.entityNumber) }, uniquingKeysWith: { a, _ in a })
        }
        var numbers = stored
        var next = (stored.values.max() ?? 0) + 1
        for entity in model.entities where numbers[entity.name] == nil {
            numbers[entity.name] = next
            next += 1
        }
        return numbers
    }

    /// `entities` in `meta`: a format byte, then (number, name) pairs.
    static func encodeNumbers(_ numbers: [String: Int]) -> [UInt8] {
        var w = LMDBByteWriter()
        w.byte(1)
        for (name, number) in numbers.sorted(by: { $0.value < $1.value }) {
            w.unsigned(UInt64(number))
            w.lengthPrefixed(Array(name.utf8))
        }
        return w.bytes
    }

    /// Reads `encodeNumbers`' bytes; `nil` when they are not in that format.
    static func decodeNumbers(_ bytes: UnsafeRawBufferPointer) -> [String: Int]? {
        var r = LMDBByteReader(bytes)
        guard (try? r.byte()) == 1 else { return nil }
        var numbers: [String: Int] = [:]
        while !r.isAtEnd {
            guard let number = try? r.unsigned(), number > 0, number < 1 << 31, let name = try? r.lengthPrefixed() else { return nil }
            numbers[String(decoding: name, as: UTF8.self)] = Int(number)
        }
        return numbers
    }
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - LMDBEntityLayout

/// How one entity's rows are encoded and indexed: its persistent attributes and to-one relationships by
/// position, and where each index of its table finds its values. Positions are the store's, not the model's:
/// an existing store keeps the order its rows were written with (`LMDBSchema.StoredLayout`, in `meta`), new
/// properties go after it, and a property the model dropped keeps its position as *retired* — its values are
/// skipped when rows are read, never mistaken for another property's. A class: rows are decoded and encoded
/// by the hundred thousand, and each one refers to its layout without copying it.
package final class LMDBEntityLayout: Sendable {
    /// Where a property's value lives in an `LMDBRowImage`.
    package enum Slot: Sendable, Hashable {
        case attribute(Int)
        case toOne(Int)
        /// A property this entity does not have (a sibling's): always null.
        case absent
    }

    /// A uniqueness constraint of this entity, with the table index that enforces it.
    package struct Constraint: Sendable {
        package let properties: [String]
        /// Position of the constraint's index in `LMDBSchema.indexes[rootName]`.
        package let index: Int
        package let slots: [Slot]
    }

    package let entity: EntityDescription
    package let name: String
    package let rootName: String
    /// The entity's number in this store (see `LMDBSchema.numbers`).
    package let number: Int
    package let rootNumber: Int
    /// Attribute names by position (retired ones included).
    package let attributeNames: [String]
    /// Types by position (`.undefined` where retired).
    package let attributeTypes: [AttributeType]
    /// The order in which a new row's attributes are written (see `LMDBRowCoding`): values of a fixed, small
    /// size first (doubles, floats, dates, Booleans), then integers, then the rest (text, data, decimals, UUIDs,
    /// URIs), then retired positions; by position within each group. A scan that compares a number or a date
    /// then steps over few values, and none of variable length, before it (the count bench's `score >= x`:
    /// 214 -> 130 instructions a row). Rows carry their positions, so readers take attributes in any order.
    package let writeOrder: [Int]
    /// Position of each persistent attribute of the model (own and inherited); retired ones are absent. The
    /// very index of `rowLayout.positions`.
    package let attributeIndex: NameIndex
    /// Bit `p` set when attribute position `p` (below 64) is a model attribute, not a retired one.
    package let liveAttributes: UInt64
    /// To-one relationship names by position (retired ones included).
    package let toOneNames: [String]
    /// Destination entity by position (empty where retired).
    package let toOneDestinations: [String]
    /// Position of each persistent to-one relationship of the model.
    package let toOneIndex: [String: Int]
    /// Every relationship by name (to-many and transient too), for following key paths.
    package let relationships: [String: RelationshipDescription]
    /// For each index of the table (aligned with `LMDBSchema.indexes[rootName]`), the slots of its properties.
    package let indexSlots: [[Slot]]
    /// `true` at each attribute position some index of the table reads: an update that changes none of them
    /// leaves every index entry as it was.
    package let indexedAttributes: [Bool]
    package let constraints: [Constraint]
    /// Whether this store holds the entity's table.
    package let isServed: Bool
    /// The positions of `StoreRow.values` for this entity's rows: the attribute positions themselves.
    package let rowLayout: RowLayout
    /// `true` at the entity numbers of this entity and its subentities (`withSubentities`), or of this entity
    /// alone: what a fetch filters a table's rows by.
    package let withSubentities: [Bool], alone: [Bool]
    /// For the table: property -> position of the shortest index that starts with it.
    package let indexByFirstProperty: NameIndex
    /// For the table, per index (aligned with `LMDBSchema.indexes`): whether its first property is an
    /// attribute in every entity of the table that has it (never a to-one), so an exact lookup answers an
    /// equality on it without re-evaluating (see `LMDBQueryPlanner`).
    package let indexLeadsWithAttribute: [Bool]
    /// Attribute positions whose rows written before a migration read a default when they lack the position
    /// (see `LMDBRowCoding`), retired positions left out.
    package let implicitDefaults: [(position: Int, value: AttributeValue)]
    /// The positions of `implicitDefaults`: a nil there is written explicitly.
    package let implicitDefaultPositions: Set<Int>
    /// A row's attribute values before its bytes are read: null, or the implicit default.
    package let initialValues: [AttributeValue]

    /// What a row that lacks attribute `position` holds there.
    package func implicitDefault(at position: Int) -> AttributeValue {
        implicitDefaults.first { $0.position == position }?.value ?? .null
    }

    package init(
        entity: EntityDescription, number: Int, rootNumber: Int, order: LMDBSchema.StoredLayout,
        tableIndexes: [LMDBIndexDefinition]?, numbers: [String: Int], tableToOneNames: Set<String>
    ) {
        self.entity = entity
        name = entity.name
        rootName = entity.rootName
        self.number = number
        self.rootNumber = rootNumber
        let attributes = Dictionary(entity.persistentAttributes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        attributeNames = order.attributes
        attributeTypes = order.attributes.map { attributes[$0]?.type ?? .undefined }
        writeOrder = Self.writeOrder(attributeTypes)
        var attributeIndex: [String: Int] = [:]
        var live: UInt64 = 0
        for (position, name) in order.attributes.enumerated() where attributes[name] != nil {
            attributeIndex[name] = position
            if position < 64 { live |= 1 << UInt64(position) }
        }
        liveAttributes = live
        rowLayout = RowLayout(names: order.attributes, positions: attributeIndex, types: attributeTypes)
        self.attributeIndex = rowLayout.positions
        let defaults = order.defaults.filter { $0.key < order.attributes.count && attributes[order.attributes[$0.key]] != nil }
            .sorted { $0.key < $1.key }.map { (position: $0.key, value: $0.value) }
        implicitDefaults = defaults
        implicitDefaultPositions = Set(defaults.map(\.position))
        var initial = [AttributeValue](repeating: .null, count: order.attributes.count)
        for (position, value) in defaults { initial[position] = value }
        initialValues = initial
        let toOnes = Dictionary(entity.persistentToOneRelationships.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        toOneNames = order.toOnes
        toOneDestinations = order.toOnes.map { toOnes[$0]?.destinationEntityName ?? "" }
        var toOneIndex: [String: Int] = [:]
        for (position, name) in order.toOnes.enumerated() where toOnes[name] != nil { toOneIndex[name] = position }
        self.toOneIndex = toOneIndex
        relationships = Dictionary(entity.allRelationships.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        isServed = tableIndexes != nil
        let size = (numbers.values.max() ?? 0) + 1
        var family = [Bool](repeating: false, count: size)
        for name in entity.selfAndDescendantNames { if let n = numbers[name] { family[n] = true } }
        var own = [Bool](repeating: false, count: size)
        own[number] = true
        withSubentities = family
        alone = own
        let indexes = tableIndexes ?? []
        var byFirst: [String: Int] = [:]
        for (position, definition) in indexes.enumerated() {
            guard let first = definition.properties.first else { continue }
            if let existing = byFirst[first], indexes[existing].properties.count <= definition.properties.count { continue }
            byFirst[first] = position
        }
        indexByFirstProperty = NameIndex(byFirst)
        indexLeadsWithAttribute = indexes.map { definition in
            definition.properties.first.map { !tableToOneNames.contains($0) } ?? false
        }
        func slot(_ property: String) -> Slot {
            if let i = attributeIndex[property] { return .attribute(i) }
            if let i = toOneIndex[property] { return .toOne(i) }
            return .absent
        }
        indexSlots = indexes.map { $0.properties.map(slot) }
        var indexed = [Bool](repeating: false, count: order.attributes.count)
        for case .attribute(let position) in indexSlots.joined() { indexed[position] = true }
        indexedAttributes = indexed
        constraints = entity.allUniquenessConstraints.compactMap { properties in
            // A constraint over a property no row stores (transient, to-many) is always null: it never binds.
            guard let index = indexes.firstIndex(where: { $0.properties == properties }) else { return nil }
            return Constraint(properties: properties, index: index, slots: properties.map(slot))
        }
    }

    /// Positions grouped as `writeOrder` describes.
    private static func writeOrder(_ types: [AttributeType]) -> [Int] {
        func group(_ type: AttributeType) -> Int {
            switch type {
            case .double, .float, .date, .boolean: return 0
            case .integer16, .integer32, .integer64: return 1
            case .undefined: return 3
            default: return 2
            }
        }
        return types.indices.sorted { (group(types[$0]), $0) < (group(types[$1]), $1) }
    }

    /// The slot of a property name.
    package func slot(named property: String) -> Slot {
        if let i = attributeIndex[name: property] { return .attribute(i) }
        if let i = toOneIndex[property] { return .toOne(i) }
        return .absent
    }
}

// MARK: - LMDBRowImage

/// A row as the encoding holds it: values by attribute position (`.null` where unset) and to-one targets by
/// relationship position. Saving works on images; `StoreRow`s are built only for what a fetch returns.
package struct LMDBRowImage {
    /// A to-one target: its entity number and primary key.
    package struct Target: Hashable {
        package var number: Int
        package var primaryKey: Int64
    }

    package let layout: LMDBEntityLayout
    package var primaryKey: Int64
    package var version: Int64
    package var attributes: [AttributeValue]
    package var toOnes: [Target?]

    /// An image with every value null.
    package init(layout: LMDBEntityLayout, primaryKey: Int64, version: Int64) {
        self.layout = layout
        self.primaryKey = primaryKey
        self.version = version
        attributes = Array(repeating: .null, count: layout.attributeNames.count)
        toOnes = Array(repeating: nil, count: layout.toOneNames.count)
    }

    /// Clears every value for reuse by the next row of the same entity (saves reuse one image per entity
    /// rather than allocate two arrays per row).
    package mutating func reset(primaryKey: Int64, version: Int64) {
        self.primaryKey = primaryKey
        self.version = version
        for i in attributes.indices { attributes[i] = .null }
        for i in toOnes.indices { toOnes[i] = nil }
    }

    /// The value an index or constraint sees at `slot`: the attribute, or a to-one's primary key.
    package func value(_ slot: LMDBEntityLayout.Slot) -> AttributeValue {
        switch slot {
        case .attribute(let i): return attributes[i]
        case .toOne(let i): return toOnes[i].map { .integer($0.primaryKey) } ?? .null
        case .absent: return .null
        }
    }
}

// MARK: - LMDBIndexDefinition

/// One secondary index of a table (an inheritance tree): a fetch index, an indexed attribute, a uniqueness
/// constraint or a to-one relationship's key. Each lives in its own named database, `index:<Root>:<p1>,<p2>`,
/// whose keys are `LMDBIndexKey` entries (the properties' values, then the primary key) with empty values.
package struct LMDBIndexDefinition: Sendable, Hashable {
    package let root: String
    /// Property names (attributes or to-one relationships); a lookup by the first alone is a prefix search.
    package let properties: [String]

    package var databaseName: String { "index:\(root):\(properties.joined(separator: ","))" }
}

// MARK: - LMDBSchema

/// Everything the store derives from the model once at open: entity numbers, row layouts and indexes.
/// A class, never changed after `init`: each reader and row builder holds it, and as a struct every copy
/// retained and released each of its six tables (about 12 atomic operations of an indexed lookup).
package final class LMDBSchema: Sendable {
    /// Entity name -> number. A new store uses the model's numbers (Core Data's `Z_ENT`); an existing store
    /// keeps the numbers its rows were written with (stored in `meta` under `entities`) and numbers entities
    /// it has never seen after them, so a model that gains an entity never reinterprets old rows.
    package let numbers: [String: Int]
    /// Layouts indexed by entity number (position 0 unused).
    private let byNumber: [LMDBEntityLayout?]
    /// Entity name -> number, found by the name's bytes (`NameIndex`): every fetch and count looks its entity's
    /// layout up here, and SipHash of the name in a `[String: LMDBEntityLayout]` was about 300 instructions of an
    /// indexed lookup's 21,000 (callgrind).
    private let numberByName: NameIndex
    /// Secondary indexes per root entity name, for every table this store serves.
    package let indexes: [String: [LMDBIndexDefinition]]
    /// Root entity names of the tables this store serves.
    package let servedRoots: [String]

    /// The property order of every model entity: the stored one, extended by properties the store has not
    /// seen (what `meta` must hold afterwards).
    package let orders: [String: StoredLayout]

    package init(model: ObjectModel, served: [EntityDescription], numbers: [String: Int], stored: [String: StoredLayout] = [:]) {
        self.numbers = numbers
        var orders: [String: StoredLayout] = [:]
        for entity in model.entities {
            orders[entity.name] = (stored[entity.name] ?? StoredLayout()).extended(by: entity)
        }
        self.orders = orders
        var roots: [String] = []
        for entity in served where !roots.contains(entity.rootName) { roots.append(entity.rootName) }
        servedRoots = roots
        var indexes: [String: [LMDBIndexDefinition]] = [:]
        for root in roots {
            guard let rootEntity = model.entity(named: root) else { continue }
            indexes[root] = Self.indexDefinitions(root: rootEntity, model: model)
        }
        self.indexes = indexes
        var toOnesByRoot: [String: Set<String>] = [:]
        for entity in model.entities {
            toOnesByRoot[entity.rootName, default: []].formUnion(entity.persistentToOneRelationships.map(\.name))
        }
        var byName: [String: LMDBEntityLayout] = [:]
        for entity in model.entities {
            guard let number = numbers[entity.name], let root = numbers[entity.rootName] else { continue }
            byName[entity.name] = LMDBEntityLayout(
                entity: entity, number: number, rootNumber: root, order: orders[entity.name] ?? StoredLayout(),
                tableIndexes: indexes[entity.rootName], numbers: numbers, tableToOneNames: toOnesByRoot[entity.rootName] ?? [])
        }
        var byNumber = [LMDBEntityLayout?](repeating: nil, count: (numbers.values.max() ?? 0) + 1)
        for layout in byName.values { byNumber[layout.number] = layout }
        self.numberByName = NameIndex(byName.mapValues(\.number))
        self.byNumber = byNumber
    }

    package func layout(named name: String) -> LMDBEntityLayout? { numberByName[name: name].flatMap(layout(number:)) }

    package func layout(number: Int) -> LMDBEntityLayout? {
        number > 0 && number < byNumber.count ? byNumber[number] : nil
    }

    /// Every index a table needs, from every entity of its tree: fetch indexes, legacy `isIndexed` attributes,
    /// uniqueness constraints (enforced through their index) and each to-one relationship (so to-many members
    /// are found through the inverse's index, not by scanning). Duplicates collapse; properties that no store
    /// holds (transient, to-many) drop the definition.
    package static func indexDefinitions(root: EntityDescription, model: ObjectModel) -> [LMDBIndexDefinition] {
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

    // MARK: - Property positions

    /// The order of an entity's attributes and to-one relationships in its rows, kept in `meta` under
    /// `layout:<Entity>` so positions never shift when the model adds, drops or reorders properties.
    package struct StoredLayout: Sendable, Hashable {
        package var attributes: [String] = []
        package var toOnes: [String] = []
        /// Attribute position -> the value rows written before the attribute had one read (an attribute a
        /// migration added, or made required, with a default, and did not write into every row).
        package var defaults: [Int: AttributeValue] = [:]

        /// This order with the entity's properties it lacks appended, in the model's order.
        package func extended(by entity: EntityDescription) -> StoredLayout {
            var result = self
            for attribute in entity.persistentAttributes where !result.attributes.contains(attribute.name) {
                result.attributes.append(attribute.name)
            }
            for relationship in entity.persistentToOneRelationships where !result.toOnes.contains(relationship.name) {
                result.toOnes.append(relationship.name)
            }
            return result
        }
    }

    /// The `meta` key of an entity's stored layout.
    package static func layoutKey(_ entity: String) -> [UInt8] { Array("layout:\(entity)".utf8) }

    /// A format byte, the attribute count and names, the to-one count and names; format 2 adds the implicit
    /// defaults (count, then position and tagged value each). A layout without defaults keeps format 1.
    package static func encodeLayout(_ layout: StoredLayout) -> [UInt8] {
        var w = LMDBByteWriter()
        w.byte(layout.defaults.isEmpty ? 1 : 2)
        for list in [layout.attributes, layout.toOnes] {
            w.unsigned(UInt64(list.count))
            for name in list { w.lengthPrefixed(Array(name.utf8)) }
        }
        if !layout.defaults.isEmpty {
            w.unsigned(UInt64(layout.defaults.count))
            for (position, value) in layout.defaults.sorted(by: { $0.key < $1.key }) {
                w.unsigned(UInt64(position))
                LMDBRowCoding.encode(value, into: &w)
            }
        }
        return w.bytes
    }

    /// Reads `encodeLayout`'s bytes; `nil` when they are not in that format.
    package static func decodeLayout(_ bytes: UnsafeRawBufferPointer) -> StoredLayout? {
        var r = LMDBByteReader(bytes)
        guard let format = try? r.byte(), format == 1 || format == 2 else { return nil }
        var lists: [[String]] = []
        for _ in 0..<2 {
            guard let count = try? r.unsigned(), count < 1 << 16 else { return nil }
            var names: [String] = []
            for _ in 0..<count {
                guard let name = try? r.lengthPrefixed() else { return nil }
                names.append(String(decoding: name, as: UTF8.self))
            }
            lists.append(names)
        }
        var defaults: [Int: AttributeValue] = [:]
        if format == 2 {
            guard let count = try? r.unsigned(), count < 1 << 16 else { return nil }
            for _ in 0..<count {
                guard let position = try? r.unsigned(), position < UInt64(lists[0].count),
                    let value = try? LMDBRowCoding.decodeValue(&r)
                else { return nil }
                defaults[Int(position)] = value
            }
        }
        guard r.isAtEnd else { return nil }
        return StoredLayout(attributes: lists[0], toOnes: lists[1], defaults: defaults)
    }

    // MARK: - Entity numbers

    /// The numbers a store uses: `stored` ones kept, model entities it lacks numbered after the highest.
    package static func numbers(model: ObjectModel, stored: [String: Int]) -> [String: Int] {
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
    package static func encodeNumbers(_ numbers: [String: Int]) -> [UInt8] {
        var w = LMDBByteWriter()
        w.byte(1)
        for (name, number) in numbers.sorted(by: { $0.value < $1.value }) {
            w.unsigned(UInt64(number))
            w.lengthPrefixed(Array(name.utf8))
        }
        return w.bytes
    }

    /// Reads `encodeNumbers`' bytes; `nil` when they are not in that format.
    package static func decodeNumbers(_ bytes: UnsafeRawBufferPointer) -> [String: Int]? {
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

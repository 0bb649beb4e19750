import Foundation
import SwitchyardModel
import SwitchyardCoordinator
import SwitchyardQuery

// MARK: - Fetched properties

extension ObjectContext {
    /// Resolves fetched property `name` for many objects at once and caches each object's result, so later
    /// `fetchedProperty(name)` calls read the cache. Each call reads the stores again, replacing what the objects
    /// had cached (as `refresh(_:mergeChanges:)` would for this property): a second prefetch sees what was saved
    /// since the first.
    ///
    /// When the predicate compares a destination key with `$FETCH_SOURCE.path` (alone or inside an AND),
    /// this runs one query per destination store (`key IN {every source's value}`) instead of one per
    /// object; any other predicate falls back to one query per object.
    /// ```swift
    /// let messages = try context.fetch(FetchRequest(entityName: "Message"))
    /// try context.prefetchFetchedProperty("preview", for: messages)
    /// ```
    ///
    /// Every object must belong to this context: another context's object is `ContextError.foreignObject`, and
    /// nothing is cached.
    public func prefetchFetchedProperty(_ name: String, for objects: [ManagedObject]) throws {
        // Another context's object would be handed this context's objects, and one of another model's entity of
        // the same name this model's property.
        if let foreign = objects.first(where: { $0.context !== self }) {
            throw ContextError.foreignObject(foreign.objectID.description)
        }
        // Objects of one entity (the usual case) are one group, found without hashing a name per object.
        let groups: [(key: String, value: [ManagedObject])]
        if let first = objects.first, objects.allSatisfy({ $0.handle === first.handle }) {
            groups = [(first.handle.name, objects)]
        } else {
            groups = Dictionary(grouping: objects, by: { $0.handle.name }).sorted(by: { $0.key < $1.key })
        }
        for (_, members) in groups {
            guard let property = members[0].handle.fetchedProperty(named: name) else {
                throw ContextError.unknownKey(entity: members[0].handle.name, key: name)
            }
            // Every object, cached or not: a caller asking again wants what the stores hold now (skipping cached
            // objects gave a second prefetch the first one's results, a fifth user trial found).
            let template = try FetchPredicate(format: property.predicateFormat)
            if let join = Self.batchableJoin(in: template) {
                try resolveBatched(property, template: template, join: join, for: members)
            } else {
                for object in members { object.fetchedCache[name] = try resolve(property, for: object) }
            }
        }
    }

    /// Runs a fetched property's predicate with `$FETCH_SOURCE` bound to `object`, across every store that
    /// holds the destination entity.
    package func resolve(_ property: FetchedPropertyDescription, for object: ManagedObject) throws -> [ManagedObject] {
        let template = try FetchPredicate(format: property.predicateFormat)
        // A NaN key (a legacy REAL column's NaN or infinity read into a decimal, a server's NaN) joins nothing,
        // as SQLite binds NaN as NULL: the same answer `prefetchFetchedProperty` gives.
        if let join = Self.batchableJoin(in: template), try object.singleValue(at: join.sourcePath).isNaN { return [] }
        let predicate = try template.substituting { name, keyPath in
            try Self.variable(name, keyPath, source: object, property: property)
        }
        return try fetch(FetchRequest(entityName: property.destinationEntityName, predicate: predicate))
    }

    /// `$FETCH_SOURCE.path` reads the source object; `$FETCHED_PROPERTY.userInfo.KEY` reads the property's
    /// userInfo (Core Data binds the property description itself).
    private static func variable(
        _ name: String, _ keyPath: [String], source: ManagedObject, property: FetchedPropertyDescription
    ) throws -> AttributeValue {
        switch name {
        case "FETCH_SOURCE":
            let value = try source.singleValue(at: keyPath)
            guard !value.isNaN else {
                throw QueryError.unsupported(
                    "fetched property \(property.name) of \(source): $FETCH_SOURCE.\(keyPath.joined(separator: ".")) is NaN, which SQLite, PostgreSQL and Swift compare differently")
            }
            return value
        case "FETCHED_PROPERTY":
            if keyPath.count == 2, keyPath[0] == "userInfo" { return property.userInfo[keyPath[1]].map { .string($0) } ?? .null }
            if keyPath == ["name"] || keyPath.isEmpty { return .string(property.name) }
            throw QueryError.unknownKeyPath(entity: "fetched property \(property.name)", keyPath: keyPath.joined(separator: "."))
        default:
            throw QueryError.unboundVariable(name: name)
        }
    }

    // MARK: - Batching

    /// The destination key compared for equality with `$FETCH_SOURCE.path`, when that comparison is the whole
    /// predicate or one term of a top-level AND, and no other term mentions `$FETCH_SOURCE`.
    package struct Join {
        package let destinationKey: [String]
        package let sourcePath: [String]
        /// Index of the join term inside a top-level AND (nil: the predicate is the join itself).
        package let termIndex: Int?
    }

    package static func batchableJoin(in predicate: FetchPredicate) -> Join? {
        func join(_ p: FetchPredicate) -> (key: [String], path: [String])? {
            guard case .comparison(let c) = p, c.op == .equal, c.options.isEmpty, c.modifier == .direct else { return nil }
            switch (c.left, c.right) {
            case let (.keyPath(key), .variable("FETCH_SOURCE", path)), let (.variable("FETCH_SOURCE", path), .keyPath(key)):
                return key.contains("@count") || path.isEmpty ? nil : (key, path)
            default: return nil
            }
        }
        if let j = join(predicate) { return Join(destinationKey: j.key, sourcePath: j.path, termIndex: nil) }
        guard case .and(let terms) = predicate else { return nil }
        var found: Join?
        for (i, term) in terms.enumerated() {
            if found == nil, let j = join(term) {
                found = Join(destinationKey: j.key, sourcePath: j.path, termIndex: i)
            } else if term.variables.contains("FETCH_SOURCE") {
                return nil
            }
        }
        return found
    }

    private func resolveBatched(
        _ property: FetchedPropertyDescription, template: FetchPredicate, join: Join, for sources: [ManagedObject]
    ) throws {
        // Keys de-duplicated under storeEqual (1 and 1.0 are one key) with a hash index: linear in the sources.
        // (StoreEqualityIndex, not the generic map: unspecialized here, the map's metadata lookups were half of
        // this method's instructions in callgrind.)
        // The distinct keys, as the operands of the destination's `IN` list.
        var keys: [PredicateOperand] = []
        var seen = StoreEqualityIndex(capacity: sources.count)
        // Each source's key slot (nil: a null key, which matches nothing).
        var sourceSlots: [Int?] = []
        sourceSlots.reserveCapacity(sources.count)
        var sourceKey = KeyReader(path: join.sourcePath)
        for source in sources {
            let key = try sourceKey.value(of: source)
            // A null key matches nothing; nor does a NaN one (SQLite binds NaN as NULL).
            guard !key.isNull, !key.isNaN else {
                sourceSlots.append(nil)
                continue
            }
            let (slot, inserted) = seen.insert(key)
            sourceSlots.append(slot)
            if inserted { keys.append(.constant(key)) }
        }
        var results: [ManagedObject] = []
        if !keys.isEmpty {
            let membership = FetchPredicate.comparison(Comparison(.keyPath(join.destinationKey), .in, .list(keys)))
            var predicate = membership
            if let i = join.termIndex, case .and(var terms) = template {
                terms[i] = membership
                predicate = try FetchPredicate.and(terms).substituting { name, keyPath in
                    try Self.variable(name, keyPath, source: sources[0], property: property)
                }
            }
            results = try fetch(FetchRequest(entityName: property.destinationEntityName, predicate: predicate))
        }
        // Group destination objects under the key each matched (storeEqual, through the index: a key's group is
        // its slot in `seen`); `==` on a null source key matches nothing.
        var groups = [[ManagedObject]](repeating: [], count: seen.slotCount)
        var destinationKey = KeyReader(path: join.destinationKey)
        for object in results {
            let value = try destinationKey.value(of: object)
            guard !value.isNull, let slot = seen.slot(of: value) else { continue }
            // Most keys match one object: a one-element array made at once, not grown from empty (the growth
            // path was 400 instructions an append in callgrind).
            if groups[slot].isEmpty { groups[slot] = [object] } else { groups[slot].append(object) }
        }
        for (source, slot) in zip(sources, sourceSlots) {
            source.fetchedCache[property.name] = slot.map { groups[$0] } ?? []
        }
    }
}

/// Reads one key path on many objects: a lone attribute by its position, looked up once per entity rather than
/// by name per object (the name's hash was most of the reads in callgrind); a longer path through
/// `singleValue(at:)`.
private struct KeyReader {
    let path: [String]
    private var last: (handle: EntityHandle, position: Int?)?

    init(path: [String]) {
        self.path = path
    }

    mutating func value(of object: ManagedObject) throws -> AttributeValue {
        if path.count == 1 {
            if last?.handle !== object.handle { last = (object.handle, object.handle.position(ofAttribute: path[0])) }
            if let position = last?.position { return object.value(at: position) }
        }
        return try object.singleValue(at: path)
    }
}

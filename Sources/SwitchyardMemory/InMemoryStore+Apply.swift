import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Applying a change set

extension InMemoryStore {
    /// Applies inserts, updates and deletes to `contents`, checking versions and uniqueness as SQLite would.
    package func apply(_ changes: StoreChangeSet, to contents: inout Contents) throws {
        for insert in changes.inserts {
            let entity = try entityInStore(insert.entityName)
            var row = insert
            row.values = RowValues(try normalizedValues(insert.values, entity: entity))
            if contents.tables[entity.rootName]?[row.primaryKey] != nil {
                throw StoreError.uniquenessViolation(
                    path: displayPath, configuration: configurationName, entity: entity.name, properties: ["Z_PK"], values: ["\(row.primaryKey)"])
            }
            contents.tables[entity.rootName, default: [:]][row.primaryKey] = row
        }
        for update in changes.updates {
            let entity = try entityInStore(update.entityName)
            guard var row = contents.tables[entity.rootName]?[update.primaryKey], row.entityName == update.entityName,
                row.version == update.expectedVersion
            else {
                throw StoreError.conflict(
                    path: displayPath, configuration: configurationName,
                    objectID: ObjectID(store: identifier, entityName: update.entityName, primaryKey: update.primaryKey),
                    entity: update.entityName, primaryKey: update.primaryKey,
                    expectedVersion: update.expectedVersion,
                    actualVersion: contents.tables[entity.rootName]?[update.primaryKey]?.version)
            }
            for (key, value) in try normalizedValues(update.values, entity: entity) {
                row.values[key] = value.isNull ? nil : value
            }
            for (key, target) in update.toOne {
                guard entity.relationship(named: key) != nil else {
                    throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: entity.name, property: key)
                }
                row.toOne[key] = target
            }
            row.version += 1
            contents.tables[entity.rootName]![update.primaryKey] = row
        }
        for deletion in changes.deletes {
            let entity = try entityInStore(deletion.entityName)
            guard let row = contents.tables[entity.rootName]?[deletion.primaryKey], row.version == deletion.expectedVersion
            else {
                throw StoreError.conflict(
                    path: displayPath, configuration: configurationName,
                    objectID: ObjectID(store: identifier, entityName: deletion.entityName, primaryKey: deletion.primaryKey),
                    entity: deletion.entityName, primaryKey: deletion.primaryKey,
                    expectedVersion: deletion.expectedVersion,
                    actualVersion: contents.tables[entity.rootName]?[deletion.primaryKey]?.version)
            }
            contents.tables[entity.rootName]![row.primaryKey] = nil
            removeLinks(of: row, in: &contents)
        }
        for link in changes.linkDeletes {
            if let key = try link.endWithoutInverse(in: model, path: displayPath, configuration: configurationName)?.key {
                if contents.owners[key]?[link.destination.primaryKey] == link.source.primaryKey {
                    contents.owners[key]?[link.destination.primaryKey] = nil
                }
                continue
            }
            let (key, pairs) = try linkPairs(link)
            for pair in pairs { contents.links[key]?.remove(pair) }
        }
        for link in changes.linkInserts {
            if let key = try link.endWithoutInverse(in: model, path: displayPath, configuration: configurationName)?.key {
                // One owner per member: the new link replaces any other owner's.
                contents.owners[key, default: [:]][link.destination.primaryKey] = link.source.primaryKey
                continue
            }
            let (key, pairs) = try linkPairs(link)
            contents.links[key, default: []].formUnion(pairs)
        }
        for order in changes.orders {
            let end = try toManyEnd(order.relationship, of: order.source.entityName)
            guard end.relationship.isOrdered else {
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: order.source.entityName, property: order.relationship)
            }
            var positions: [Int64: Int64] = [:]
            for (i, member) in order.members.enumerated() { positions[member.primaryKey] = Int64(i + 1) }
            contents.positions[end.key, default: [:]][order.source.primaryKey] = positions
        }
        try checkUniqueness(of: changes, in: contents)
        for insert in changes.inserts {
            let root = model.entity(named: insert.entityName)!.rootName
            contents.maxKeys[root] = max(contents.maxKeys[root] ?? 0, insert.primaryKey)
        }
    }

    /// The pair key and the link as the pair's first end sees it — both ways round for a relationship that is
    /// its own inverse, so either row finds the other; `StoreError.unknownProperty` unless the relationship is a
    /// many-to-many of the source entity.
    private func linkPairs(_ link: RelationshipLink) throws -> (String, [LinkPair]) {
        guard let (first, second) = model.manyToManyEnds(of: link.relationship, from: link.source.entityName) else {
            throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: link.source.entityName, property: link.relationship)
        }
        let forward = LinkPair(first: link.source.primaryKey, second: link.destination.primaryKey)
        let backward = LinkPair(first: link.destination.primaryKey, second: link.source.primaryKey)
        if first.key == second.key { return (first.key, [forward, backward]) }
        let mine = model.end(of: link.relationship, from: link.source.entityName)
        return (first.key, [mine?.key == first.key ? forward : backward])
    }

    /// Drops every link of a deleted row, on whichever end its entity is.
    private func removeLinks(of row: StoreRow, in contents: inout Contents) {
        for end in toManysWithoutInverse {
            if model.entity(row.entityName, isKindOf: end.relationship.destinationEntityName) {
                contents.owners[end.key]?[row.primaryKey] = nil
            }
            if model.entity(row.entityName, isKindOf: end.entityName) {
                contents.owners[end.key] = contents.owners[end.key]?.filter { $0.value != row.primaryKey }
            }
        }
        for (first, second) in manyToManyPairs {
            if model.entity(row.entityName, isKindOf: first.entityName) {
                contents.links[first.key] = contents.links[first.key]?.filter { $0.first != row.primaryKey }
            }
            if model.entity(row.entityName, isKindOf: second.entityName) {
                contents.links[first.key] = contents.links[first.key]?.filter { $0.second != row.primaryKey }
            }
        }
    }

    /// Validates every value against its attribute and drops nulls (an absent key reads as null).
    private func normalizedValues(_ values: some Sequence<(key: String, value: AttributeValue)>, entity: EntityDescription) throws -> [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        for (key, value) in values {
            guard let attribute = entity.attribute(named: key), !attribute.isTransient else {
                throw StoreError.unknownProperty(path: displayPath, configuration: configurationName, entity: entity.name, property: key)
            }
            result[key] = try value.normalized(for: attribute, entity: entity.name, path: displayPath, configuration: configurationName)
        }
        return result
    }

    /// Rows touched by the change set must not share constrained values with another row of their table
    /// (NULLs never collide, as in SQLite's UNIQUE).
    private func checkUniqueness(of changes: StoreChangeSet, in contents: Contents) throws {
        let touched = changes.inserts.map(\.reference)
            + changes.updates.map { RowReference(entityName: $0.entityName, primaryKey: $0.primaryKey) }
        // Per table and constraint, the table's rows grouped by their values' hash keys, built once per save:
        // each touched row is checked against the few rows sharing its key, not against the whole table.
        var groups: [String: [[StoreEqualityKey]: [Int64]]] = [:]
        func value(_ row: StoreRow, _ key: String) -> AttributeValue {
            row.values[key] ?? row.toOne[key].map { .integer($0.primaryKey) } ?? .null
        }
        for reference in touched {
            guard let entity = model.entity(named: reference.entityName),
                let table = contents.tables[entity.rootName], let row = table[reference.primaryKey]
            else { continue }
            for constraint in entity.allUniquenessConstraints {
                let values = constraint.map { value(row, $0) }
                if values.contains(where: \.isNull) { continue }
                let group = entity.rootName + "\u{0}" + constraint.joined(separator: "\u{0}")
                if groups[group] == nil {
                    var byKey: [[StoreEqualityKey]: [Int64]] = [:]
                    for other in table.values {
                        byKey[constraint.map { StoreEqualityKey(value(other, $0)) }, default: []].append(other.primaryKey)
                    }
                    groups[group] = byKey
                }
                let candidates = groups[group]![values.map(StoreEqualityKey.init)] ?? []
                let clash = candidates.contains { key in
                    guard key != row.primaryKey, let other = table[key] else { return false }
                    return constraint.indices.allSatisfy { AttributeValue.storeEqual(value(other, constraint[$0]), values[$0]) }
                }
                if clash {
                    throw StoreError.uniquenessViolation(
                        path: displayPath, configuration: configurationName, entity: entity.name, properties: constraint, values: values.map(\.description))
                }
            }
        }
    }
}

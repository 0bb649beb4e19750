import Foundation
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - MemoryRowSubject

/// A memory-store row seen by the predicate evaluator: follows to-one references and finds to-many
/// members through the inverse to-one, the many-to-many links or the owners of a to-many without inverse, inside one snapshot of the store.
package struct MemoryRowSubject: PredicateSubject {
    package let row: StoreRow
    package let contents: InMemoryStore.Contents
    package let model: ObjectModel
    package let path: String
    package let configurationName: String

    package func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        try RowKeyPathWalk(
            isPersistentAttribute: { entity, key in
                guard let e = model.entity(named: entity) else { return nil }
                return e.attribute(named: key).map { !$0.isTransient } ?? false
            },
            relationship: { entity, key in model.entity(named: entity)?.relationship(named: key) },
            related: { item, relationship in
                try related(item, relationship, in: model.entity(named: item.entityName)!)
            }
        ).values(at: keyPath, from: row)
    }

    private func related(_ item: StoreRow, _ relationship: RelationshipDescription, in entity: EntityDescription) throws -> [StoreRow] {
        guard let destination = model.entity(named: relationship.destinationEntityName) else { return [] }
        let table = contents.tables[destination.rootName] ?? [:]
        if !relationship.isToMany {
            guard let ref = item.toOne[relationship.name] else { return [] }
            return table[ref.primaryKey].map { [$0] } ?? []
        }
        if let (first, _) = model.manyToManyEnds(of: relationship.name, from: item.entityName) {
            let mineIsFirst = model.end(of: relationship.name, from: item.entityName)?.key == first.key
            let family = Set(destination.selfAndDescendantNames)
            return (contents.links[first.key] ?? [])
                .compactMap { pair -> StoreRow? in
                    let (from, to) = mineIsFirst ? (pair.first, pair.second) : (pair.second, pair.first)
                    guard from == item.primaryKey, let row = table[to], family.contains(row.entityName) else { return nil }
                    return row
                }
                .sorted { $0.primaryKey < $1.primaryKey }
        }
        if let end = model.end(of: relationship.name, from: item.entityName), model.isToManyWithoutInverse(end.relationship) {
            let family = Set(destination.selfAndDescendantNames)
            return (contents.owners[end.key] ?? [:])
                .compactMap { member, owner -> StoreRow? in
                    guard owner == item.primaryKey, let row = table[member], family.contains(row.entityName) else { return nil }
                    return row
                }
                .sorted { $0.primaryKey < $1.primaryKey }
        }
        guard let inverse = relationship.inverseName, destination.relationship(named: inverse)?.isToMany == false else {
            throw StoreError.unsupportedPredicate(
                path: path, configuration: configurationName, reason: "to-many \(entity.name).\(relationship.name) has no to-one inverse to search by")
        }
        let family = Set(destination.selfAndDescendantNames)
        return table.values
            .filter { family.contains($0.entityName) && $0.toOne[inverse]?.primaryKey == item.primaryKey }
            .sorted { $0.primaryKey < $1.primaryKey }
    }
}

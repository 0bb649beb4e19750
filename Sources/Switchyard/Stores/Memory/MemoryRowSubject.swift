import Foundation

// MARK: - MemoryRowSubject

/// A memory-store row seen by the predicate evaluator: follows to-one references and finds to-many
/// members through the inverse to-one, inside one snapshot of the store.
struct MemoryRowSubject: PredicateSubject {
    let row: StoreRow
    let contents: InMemoryStore.Contents
    let model: ObjectModel
    let path: String

    func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        var current: [StoreRow] = [row]
        var isMany = false
        for (index, key) in keyPath.enumerated() {
            let isLast = index == keyPath.count - 1
            var next: [StoreRow] = []
            var values: [AttributeValue] = []
            for item in current {
                guard let entity = model.entity(named: item.entityName) else { continue }
                if let attribute = entity.attribute(named: key), !attribute.isTransient, isLast {
                    values.append(item[key])
                } else if let relationship = entity.relationship(named: key) {
                    let targets = try related(item, relationship, in: entity)
                    if relationship.isToMany { isMany = true }
                    if isLast {
                        if relationship.isToMany { values += targets.map { .integer($0.primaryKey) } }
                        else { values.append(targets.first.map { .integer($0.primaryKey) } ?? .null) }
                    } else {
                        next += targets
                    }
                } else {
                    throw QueryError.unknownKeyPath(entity: entity.name, keyPath: keyPath.joined(separator: "."))
                }
            }
            if isLast { return isMany ? .many(values) : .single(values.first ?? .null) }
            current = next
        }
        return .single(.integer(row.primaryKey))
    }

    private func related(_ item: StoreRow, _ relationship: RelationshipDescription, in entity: EntityDescription) throws -> [StoreRow] {
        guard let destination = model.entity(named: relationship.destinationEntityName) else { return [] }
        let table = contents.tables[destination.rootName] ?? [:]
        if !relationship.isToMany {
            guard let ref = item.toOne[relationship.name] else { return [] }
            return table[ref.primaryKey].map { [$0] } ?? []
        }
        guard let inverse = relationship.inverseName, destination.relationship(named: inverse)?.isToMany == false else {
            throw StoreError.unsupportedPredicate(
                path: path, reason: "to-many \(entity.name).\(relationship.name) has no to-one inverse to search by")
        }
        let family = Set(destination.selfAndDescendantNames)
        return table.values
            .filter { family.contains($0.entityName) && $0.toOne[inverse]?.primaryKey == item.primaryKey }
            .sorted { $0.primaryKey < $1.primaryKey }
    }
}

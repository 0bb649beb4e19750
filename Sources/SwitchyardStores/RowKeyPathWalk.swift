// MARK: - RowKeyPathWalk
import SwitchyardModel
import SwitchyardQuery

/// Reads a key path over store rows for the stores that evaluate predicates in memory (memory, LMDB):
/// attributes at the end of the path, to-one references followed, to-many members found by the store.
/// One walk, so both backends answer key paths by the same rules.
package struct RowKeyPathWalk {
    /// How the store describes a row's entity: is `key` a persistent attribute, or which relationship is it.
    package let isPersistentAttribute: (_ entity: String, _ key: String) -> Bool?
    package let relationship: (_ entity: String, _ key: String) -> RelationshipDescription?
    /// The rows at the other end of `relationship` from `row` (at most one for a to-one).
    package let related: (_ row: StoreRow, _ relationship: RelationshipDescription) throws -> [StoreRow]

    package init(isPersistentAttribute: @escaping (_ entity: String, _ key: String) -> Bool?, relationship: @escaping (_ entity: String, _ key: String) -> RelationshipDescription?, related: @escaping (_ row: StoreRow, _ relationship: RelationshipDescription) throws -> [StoreRow]) {
        self.isPersistentAttribute = isPersistentAttribute
        self.relationship = relationship
        self.related = related
    }

    /// The value(s) at `keyPath` from `row`; a relationship at the end yields primary keys, SELF the row's key.
    package func values(at keyPath: [String], from row: StoreRow) throws -> PredicateValue {
        var current: [StoreRow] = [row]
        var isMany = false
        for (index, key) in keyPath.enumerated() {
            let isLast = index == keyPath.count - 1
            var next: [StoreRow] = []
            var values: [AttributeValue] = []
            for item in current {
                // A row of an entity the store does not know contributes nothing (as a missing row would).
                guard let isAttribute = isPersistentAttribute(item.entityName, key) else { continue }
                if isAttribute, isLast {
                    values.append(item[key])
                } else if let relationship = relationship(item.entityName, key) {
                    let targets = try related(item, relationship)
                    if relationship.isToMany { isMany = true }
                    if isLast {
                        if relationship.isToMany { values += targets.map { .integer($0.primaryKey) } }
                        else { values.append(targets.first.map { .integer($0.primaryKey) } ?? .null) }
                    } else {
                        next += targets
                    }
                } else {
                    throw QueryError.unknownKeyPath(entity: item.entityName, keyPath: keyPath.joined(separator: "."))
                }
            }
            if isLast { return isMany ? .many(values) : .single(values.first ?? .null) }
            current = next
        }
        return .single(.integer(row.primaryKey))
    }
}

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
    /// A to-one that is nil partway along reads as one null at the end (SQL's LEFT JOIN gives a NULL row), so
    /// `ALL favorites.customer.name == "Ann"` fails for a favourite without a customer, unless a to-many
    /// follows it on the path: a missing row has no members (SQL's correlated subquery finds none).
    package func values(at keyPath: [String], from row: StoreRow) throws -> PredicateValue {
        var current: [StoreRow] = [row]
        var isMany = false
        var missing = 0  // nil to-ones passed so far, each one null at the end
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
                        if !relationship.isToMany, targets.isEmpty {
                            let crosses = Self.crossesToMany(
                                from: relationship.destinationEntityName, keyPath[(index + 1)...], relationship: self.relationship)
                            if crosses { isMany = true } else { missing += 1 }
                        }
                    }
                } else {
                    throw QueryError.unknownKeyPath(entity: item.entityName, keyPath: keyPath.joined(separator: "."))
                }
            }
            if isLast {
                values += repeatElement(.null, count: missing)
                return isMany ? .many(values) : .single(values.first ?? .null)
            }
            current = next
        }
        return .single(.integer(row.primaryKey))
    }

    /// Whether `path` from `entity` follows a to-many relationship: where a nil to-one before it reads as no
    /// value rather than one null (the rule the context's evaluator of unsaved objects shares).
    package static func crossesToMany(
        from entity: String, _ path: ArraySlice<String>,
        relationship: (_ entity: String, _ key: String) -> RelationshipDescription?
    ) -> Bool {
        var entity = entity
        for key in path {
            guard let relationship = relationship(entity, key) else { return false }
            if relationship.isToMany { return true }
            entity = relationship.destinationEntityName
        }
        return false
    }
}

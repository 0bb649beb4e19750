// MARK: - Key paths of fetches
import Foundation
import SwitchyardModel

extension ObjectModel {
    /// Checks a fetch against `entityName` before any row is read, by the rules every store applies.
    ///
    /// Key paths: an attribute (not transient) ends a path; a to-one may be followed into its destination; a
    /// to-many may end a path (membership, `ANY`), be followed into its destination (`ANY tags.name`), or end in
    /// `@count`; `SELF` is the object itself. A sort key may not end at a to-many, nor cross one. Anything else
    /// is `QueryError.unknownKeyPath`.
    ///
    /// Constants: a NaN (a Double, a Decimal or a date's interval) is `QueryError.unsupported`. No stored value
    /// is NaN (`set` refuses it) and the backends disagree on what a comparison with it means (SQLite binds it
    /// as NULL and selects nothing, PostgreSQL ranks it above every number, Swift's `!=` is true), so the fetch
    /// is refused on every backend alike rather than answered differently.
    public func validateFetch(predicate: FetchPredicate?, sortKeys: [SortKey], entityName: String) throws {
        if let predicate, !isAttributeComparedWithConstant(predicate, entityName: entityName) {
            // The walk only collects: a closure that used `self` copied the model's fields at every operand. The
            // first key path is kept apart, so the common predicate of one comparison allocates no array.
            var first: [String]?
            var more: [[String]] = []
            var hasNaN = false
            predicate.visitExpressions { operand in
                switch operand {
                case .keyPath(let path): if first == nil { first = path } else { more.append(path) }
                case .constant(let value): if value.isNaN { hasNaN = true }
                default: break
                }
            }
            if let first { try check(first, from: entityName, sorting: false) }
            for path in more { try check(path, from: entityName, sorting: false) }
            if hasNaN {
                throw QueryError.unsupported(
                    "a comparison with NaN (\(predicate)): no value is NaN, and SQLite, PostgreSQL and Swift disagree on what it selects; compare with nil or a number")
            }
        }
        for sortKey in sortKeys {
            try check(sortKey.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init), from: entityName, sorting: true)
        }
    }

    /// Whether `predicate` is one comparison of a stored attribute of `entityName` (a one-component key path)
    /// with a constant that is not NaN: what `validateFetch` then finds (nothing to refuse), found without
    /// walking the predicate or copying the path (about 450 of the 20,000 instructions of an indexed lookup,
    /// whose typed `\.name == x` is such a comparison). Anything else is left to the walk.
    private func isAttributeComparedWithConstant(_ predicate: FetchPredicate, entityName: String) -> Bool {
        guard case .comparison(let comparison) = predicate, case .keyPath(let path) = comparison.left, path.count == 1,
            case .constant(let value) = comparison.right, !value.isNaN,
            let entity = entityPosition(named: entityName),
            let attribute = attributePosition(path[0], inEntityAt: entity)
        else { return false }
        return !entities[entity].allAttributes[attribute].isTransient
    }

    /// The key path checks of `validateFetch(predicate:sortKeys:entityName:)`, under the name they had before
    /// that also refused NaN constants.
    @available(*, deprecated, renamed: "validateFetch(predicate:sortKeys:entityName:)")
    public func validateKeyPaths(of predicate: FetchPredicate?, sortKeys: [SortKey], entityName: String) throws {
        try validateFetch(predicate: predicate, sortKeys: sortKeys, entityName: entityName)
    }

    /// The entity a key path leads to when it ends at a relationship (or is `SELF`): the entity whose objects
    /// its values stand for. Nil for a path ending at an attribute or `@count`, or one that does not resolve.
    public func entityName(reachedBy path: [String], from entityName: String) -> String? {
        var current = entityName
        for component in path.first == "SELF" ? Array(path.dropFirst()) : path {
            guard let entity = entity(named: current), let relationship = entity.relationship(named: component) else { return nil }
            current = relationship.destinationEntityName
        }
        return current
    }

    private func check(_ path: [String], from entityName: String, sorting: Bool) throws {
        let components = path.first == "SELF" ? Array(path.dropFirst()) : path
        func unknown() -> QueryError {
            QueryError.unknownKeyPath(entity: entityName, keyPath: path.joined(separator: "."))
        }
        var current = entityName
        var index = 0
        while index < components.count {
            let component = components[index]
            let isLast = index == components.count - 1
            guard let position = entityPosition(named: current) else { throw unknown() }
            if let attribute = attributePosition(component, inEntityAt: position) {
                guard isLast, !entities[position].allAttributes[attribute].isTransient else { throw unknown() }
                return
            }
            guard let relationship = entities[position].relationship(named: component), !relationship.isTransient else { throw unknown() }
            if relationship.isToMany {
                let rest = Array(components[(index + 1)...])
                if rest == ["@count"] { return }
                if sorting { throw unknown() }
            } else if sorting, isLast {
                // Objects have no order of their own: SQLite would order by the foreign key, LMDB and memory
                // would not order at all, and an unsaved object has no key yet.
                throw QueryError.unsupported(
                    "sorting \(entityName) by the to-one relationship '\(path.joined(separator: "."))' itself: sort by an attribute of its destination, such as '\(path.joined(separator: ".")).<attribute>'")
            }
            current = relationship.destinationEntityName
            index += 1
        }
    }
}

extension AttributeValue {
    /// Whether the value is a NaN: a Double, a Decimal, or a date whose interval is NaN.
    package var isNaN: Bool {
        switch self {
        case .double(let d): return d.isNaN
        case .decimal(let d): return d.isNaN
        case .date(let date): return date.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }
}

// MARK: - Object arguments
import SwitchyardModel

extension FetchPredicate {
    /// The key that matches no row: primary keys are positive, so no foreign key or `Z_PK` ever holds it.
    package static let unmatchedObjectKey: Int64 = .min

    /// True when an object argument (`chat == %@` with an object) appears anywhere in the predicate.
    public var hasObjectArguments: Bool {
        switch self {
        case .constant: return false
        case .and(let parts), .or(let parts): return parts.contains { $0.hasObjectArguments }
        case .not(let inner): return inner.hasObjectArguments
        case .comparison(let c): return c.left.hasObjects || c.right.hasObjects
        }
    }

    /// Replaces every object argument with the key that stands for it where the predicate is evaluated.
    ///
    /// `key` returns the object's key in this store (or context), or nil when it does not hold the object; such
    /// an object, and one whose entity is not the kind the other side's key path leads to, becomes a key no
    /// row has — so `chat == %@` matches nothing and `chat != %@` every row with a chat, as for an object no
    /// row references. `entityName` is the entity the predicate is evaluated on.
    public func bindingObjects(
        entityName: String, model: ObjectModel, key: (ObjectID) -> Int64?
    ) -> FetchPredicate {
        guard hasObjectArguments else { return self }
        switch self {
        case .constant:
            return self
        case .and(let parts):
            return .and(parts.map { $0.bindingObjects(entityName: entityName, model: model, key: key) })
        case .or(let parts):
            return .or(parts.map { $0.bindingObjects(entityName: entityName, model: model, key: key) })
        case .not(let inner):
            return .not(inner.bindingObjects(entityName: entityName, model: model, key: key))
        case .comparison(var c):
            let (left, right) = (c.left, c.right)
            c.left = left.binding(against: right, entityName: entityName, model: model, key: key)
            c.right = right.binding(against: left, entityName: entityName, model: model, key: key)
            return .comparison(c)
        }
    }
}

extension PredicateOperand {
    fileprivate var hasObjects: Bool {
        switch self {
        case .object: return true
        case .list(let elements): return elements.contains { $0.hasObjects }
        case .keyPath, .constant, .variable: return false
        }
    }

    /// This operand with its objects bound; `other` is the comparison's other side, whose key path says which
    /// entity an object must be of to match.
    fileprivate func binding(
        against other: PredicateOperand, entityName: String, model: ObjectModel, key: (ObjectID) -> Int64?
    ) -> PredicateOperand {
        switch self {
        case .object(let id):
            if case .keyPath(let path) = other, let wanted = model.entityName(reachedBy: path, from: entityName),
                !model.entity(id.entityName, isKindOf: wanted)
            {
                return .constant(.integer(FetchPredicate.unmatchedObjectKey))
            }
            return .constant(.integer(key(id) ?? FetchPredicate.unmatchedObjectKey))
        case .list(let elements):
            return .list(elements.map { $0.binding(against: other, entityName: entityName, model: model, key: key) })
        case .keyPath, .constant, .variable:
            return self
        }
    }
}

// MARK: - Substitution
import SwitchyardModel

extension FetchPredicate {
    /// Replaces every `$NAME` with `variables["NAME"]`. A variable with a key path, `$FETCH_SOURCE.uuid`, is
    /// looked up under its dotted spelling `"FETCH_SOURCE.uuid"`; use `substituting(_:)` with a closure to
    /// resolve key paths yourself. A variable with no entry throws `QueryError.unboundVariable`.
    ///
    /// ```swift
    /// let p = try FetchPredicate(format: "colorID == $COLOR").substituting(["COLOR": 7])
    /// ```
    public func substituting(_ variables: [String: AttributeValue]) throws -> FetchPredicate {
        try substituting { name, keyPath in
            let key = ([name] + keyPath).joined(separator: ".")
            guard let value = variables[key] else { throw QueryError.unboundVariable(name: key) }
            return value
        }
    }

    /// Replaces every `$NAME.key.path` with `resolve(NAME, [key, path])`, so a caller can read the key path
    /// off the object the variable stands for (Core Data's `$FETCH_SOURCE`). Errors from `resolve` propagate.
    public func substituting(_ resolve: (String, [String]) throws -> AttributeValue) rethrows -> FetchPredicate {
        switch self {
        case .constant:
            return self
        case .and(let parts):
            return .and(try parts.map { try $0.substituting(resolve) })
        case .or(let parts):
            return .or(try parts.map { try $0.substituting(resolve) })
        case .not(let inner):
            return .not(try inner.substituting(resolve))
        case .comparison(var comparison):
            comparison.left = try comparison.left.substituting(resolve)
            comparison.right = try comparison.right.substituting(resolve)
            return .comparison(comparison)
        }
    }

    /// The names of the `$VARIABLE`s the predicate uses (`"FETCH_SOURCE"` for `$FETCH_SOURCE.uuid`).
    public var variables: Set<String> {
        var names: Set<String> = []
        visitExpressions { expression in
            if case .variable(let name, _) = expression { names.insert(name) }
        }
        return names
    }

    /// Every key path the predicate reads, as written (`SELF` is `[]`; a final `@count` is kept), so a store
    /// can check them against its entity before running the predicate.
    public var keyPaths: Set<[String]> {
        var paths: Set<[String]> = []
        visitExpressions { expression in
            if case .keyPath(let path) = expression { paths.insert(path) }
        }
        return paths
    }

    /// Calls `visit` on every expression, aggregates and their elements included.
    func visitExpressions(_ visit: (PredicateOperand) -> Void) {
        switch self {
        case .constant:
            break
        case .and(let parts), .or(let parts):
            for part in parts { part.visitExpressions(visit) }
        case .not(let inner):
            inner.visitExpressions(visit)
        case .comparison(let comparison):
            comparison.left.visit(visit)
            comparison.right.visit(visit)
        }
    }
}

// MARK: - PredicateOperand substitution

extension PredicateOperand {
    /// The expression with its variables (also inside aggregates) replaced by constants from `resolve`.
    public func substituting(_ resolve: (String, [String]) throws -> AttributeValue) rethrows -> PredicateOperand {
        switch self {
        case .keyPath, .constant, .object:
            return self
        case .list(let elements):
            return .list(try elements.map { try $0.substituting(resolve) })
        case .variable(let name, let keyPath):
            return .constant(try resolve(name, keyPath))
        }
    }

    fileprivate func visit(_ body: (PredicateOperand) -> Void) {
        body(self)
        if case .list(let elements) = self {
            for element in elements { element.visit(body) }
        }
    }
}

import Foundation
internal import GRDB
import SwitchyardModel
import SwitchyardQuery
import SwitchyardStores

// MARK: - SQLFragment

/// A piece of SQL and the values its `?` placeholders take, in order. Fragments are combined, never
/// interpolated with values.
package struct SQLFragment {
    package var sql: String
    var arguments: [DatabaseValue]
    /// Whether a list is bound as one JSON text longer than `SQLPredicateCompiler.cachedJSONLength` (see
    /// `jsonArray(of:hint:)`): such a statement is not cached, so no cached statement keeps the text bound
    /// after it ran. Shorter lists share one cached statement whatever their length.
    var bindsLongJSONList = false

    init(_ sql: String, _ arguments: [DatabaseValue] = [], bindsLongJSONList: Bool = false) {
        self.sql = sql
        self.arguments = arguments
        self.bindsLongJSONList = bindsLongJSONList
    }

    package static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(
            lhs.sql + rhs.sql, lhs.arguments + rhs.arguments, bindsLongJSONList: lhs.bindsLongJSONList || rhs.bindsLongJSONList)
    }

    package static func + (lhs: SQLFragment, rhs: String) -> SQLFragment {
        SQLFragment(lhs.sql + rhs, lhs.arguments, bindsLongJSONList: lhs.bindsLongJSONList)
    }
    package static func + (lhs: String, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs + rhs.sql, rhs.arguments, bindsLongJSONList: rhs.bindsLongJSONList)
    }

    /// `parts` joined by `separator`.
    package static func joined(_ parts: [SQLFragment], separator: String) -> SQLFragment {
        var result = SQLFragment("")
        for (i, part) in parts.enumerated() {
            if i > 0 { result.sql += separator }
            result.sql += part.sql
            result.arguments += part.arguments
            result.bindsLongJSONList = result.bindsLongJSONList || part.bindsLongJSONList
        }
        return result
    }

    /// `parts` joined by `separator` (` AND ` or ` OR `) in parenthesised groups of at most `groupSize`, groups
    /// of groups beyond that. SQLite parses `a OR b OR c` as a chain as deep as it is long and refuses an
    /// expression deeper than 1,000 levels (`SQLITE_MAX_EXPR_DEPTH`), which an OR of a user's selection or an
    /// `IN[c]` list of a thousand names reached; AND and OR are associative in three-valued logic, so grouping
    /// selects the same rows. Short lists are joined as they are.
    package static func grouped(_ parts: [SQLFragment], separator: String) -> SQLFragment {
        let groupSize = 64
        guard parts.count > groupSize else { return joined(parts, separator: separator) }
        let groups = stride(from: 0, to: parts.count, by: groupSize).map { start in
            "(" + joined(Array(parts[start..<min(start + groupSize, parts.count)]), separator: separator) + ")"
        }
        return grouped(groups, separator: separator)
    }
}

// MARK: - SQLQuery

/// A compiled `SELECT`: its fragment, and the index a long `IN` list drives it through (`INDEXED BY`; see
/// `SQLPredicateCompiler.drivingList`), for the store to forget should SQLite refuse it.
package struct SQLQuery {
    package var fragment: SQLFragment
    package var drivingIndex: SQLiteLeadingIndexes.Index?
    /// The statement has no `ORDER BY`: its rows are to be sorted by primary key once read, which is the whole
    /// order asked for. Set for a driving list without sort keys, limit or offset (see `select(_:projection:)`).
    package var sortsRowsByPrimaryKey = false
}

// MARK: - SQLPredicateCompiler

/// Compiles a `StoreFetchRequest` into one SQL statement over Core Data's tables: attributes become columns,
/// to-one key paths LEFT JOINs, to-many comparisons correlated subqueries on the inverse foreign key or, for a
/// many-to-many, through its join table.
///
/// ```swift
/// let compiler = SQLPredicateCompiler(schema: schema, model: model, path: path, configurationName: configurationName)
/// let select = try compiler.select(request, projection: projection)   // select.fragment.sql, .arguments
/// ```
package struct SQLPredicateCompiler {
    /// The name of the SQL function every connection registers for `[c]`/`[d]`, BEGINSWITH, ENDSWITH,
    /// CONTAINS and LIKE, so SQL agrees with in-memory evaluation (`StringMatching`).
    package static let matchFunctionName = "SWITCHYARD_MATCH"
    /// Operator codes passed to the match function (an index into this table).
    package static let matchOperators: [ComparisonOperator] = [
        .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .beginsWith, .endsWith, .contains, .like,
    ]

    package let schema: SQLiteSchema
    package let model: ObjectModel
    /// The store file, for error messages.
    package let path: String
    /// The store's configuration, for errors.
    package var configurationName: String = ConfigurationDescription.defaultName
    /// The file's indexes by the column they lead with: a long `IN` list on such a column drives the query
    /// (see `drivingList`). Empty: every list is an `IN`.
    package var leadingIndexes = SQLiteLeadingIndexes()

    // MARK: - Statements

    /// `SELECT <projection> FROM ... WHERE ... ORDER BY ... LIMIT ? OFFSET ?`.
    ///
    /// A driving list (see `drivingList`) with no sort key, limit or offset leaves out the `ORDER BY t0.Z_PK`
    /// and has the store sort the rows by primary key instead (`SQLQuery.sortsRowsByPrimaryKey`): SQLite's
    /// sorter copied every row, each column, into a record and back, about a seventh of the statement's time for
    /// a 5,000-key prefetch, where sorting the decoded rows by their keys costs a fraction of that.
    package func select(_ request: StoreFetchRequest, projection: SQLiteProjection) throws -> SQLQuery {
        try select(request, columns: projection.selectList, sortingInStore: true)
    }

    /// `select(_:projection:)` reading only each row's `Z_PK` and `Z_ENT` (in that order), for
    /// `PersistentStore.fetchReferences`.
    package func selectReferences(_ request: StoreFetchRequest) throws -> SQLQuery {
        try select(request, columns: "t0.\"Z_PK\", t0.\"Z_ENT\"", sortingInStore: false)
    }

    private func select(_ request: StoreFetchRequest, columns: String, sortingInStore: Bool) throws -> SQLQuery {
        let state = State(requestEntity: request.entityName)
        let (root, filter) = try base(request, state: state, driving: true)
        var order: [String] = []
        for descriptor in request.sortKeys {
            let components = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard case .value(let fragment, _) = try resolve(components, in: root, state: state) else {
                throw QueryError.unknownKeyPath(entity: request.entityName, keyPath: descriptor.key)
            }
            order.append(fragment.sql + (descriptor.ascending ? " ASC" : " DESC"))
        }
        order.append("t0.\"Z_PK\" ASC")
        var sql = SQLFragment("SELECT \(columns) FROM ") + from(root) + whereClause(filter)
        let limited = request.fetchLimit != nil || request.fetchOffset > 0
        let sortedByStore = sortingInStore && root.driver != nil && order.count == 1 && !limited
        if !sortedByStore { sql.sql += " ORDER BY " + order.joined(separator: ", ") }
        if limited {
            sql = sql + SQLFragment(
                " LIMIT ? OFFSET ?",
                [Int64(request.fetchLimit ?? -1).databaseValue, Int64(max(0, request.fetchOffset)).databaseValue])
        }
        return SQLQuery(fragment: sql, drivingIndex: root.driver?.index, sortsRowsByPrimaryKey: sortedByStore)
    }

    /// `SELECT COUNT(*) FROM ... WHERE ...`.
    package func count(_ request: StoreFetchRequest) throws -> SQLQuery {
        let state = State(requestEntity: request.entityName)
        let (root, filter) = try base(request, state: state, driving: true)
        return SQLQuery(fragment: SQLFragment("SELECT COUNT(*) FROM ") + from(root) + whereClause(filter), drivingIndex: root.driver?.index)
    }

    /// What a batch statement on the request's table needs: the ` WHERE ...` clause over the table named `t0`
    /// when the predicate needs no join (`UPDATE <table> AS t0 ... WHERE ...` then), else the keys of the matching
    /// rows (`SELECT t0.Z_PK FROM ... WHERE ...`, for `WHERE Z_PK IN (...)`).
    package func batchFilter(_ request: StoreFetchRequest) throws -> (whereClause: SQLFragment?, matchingKeys: SQLFragment?) {
        let state = State(requestEntity: request.entityName)
        let (root, filter) = try base(request, state: state)
        if root.joins.isEmpty { return (whereClause(filter), nil) }
        return (nil, SQLFragment("SELECT t0.\"Z_PK\" FROM ") + from(root) + whereClause(filter))
    }

    /// The fetched table's scope and the WHERE clause's condition. `driving`: a long `IN` list on an indexed
    /// column may drive the query (see `drivingList`; not for a batch's `UPDATE ... WHERE`).
    private func base(_ request: StoreFetchRequest, state: State, driving: Bool = false) throws -> (Scope, SQLFragment?) {
        guard let entity = schema.entities[request.entityName] else {
            throw StoreError.unsupportedPredicate(path: path, configuration: configurationName, reason: "entity \(request.entityName) has no table here")
        }
        let root = Scope(alias: "t0", entity: entity)
        var parts: [SQLFragment] = []
        var predicate = request.predicate
        if driving, let whole = predicate, let driver = drivingList(whole, in: root) {
            root.driver = (driver.list, driver.index)
            parts.append(SQLFragment(driver.condition))
            predicate = driver.remaining
        }
        if let filter = entityFilter(entity, alias: "t0", includesSubentities: request.includesSubentities) {
            parts.append(SQLFragment(filter))
        }
        if let predicate {
            let compiled = try compile(predicate, in: root, state: state)
            if compiled.sql != "1" { parts.append(compiled) }
        }
        return (root, parts.isEmpty ? nil : SQLFragment.joined(parts, separator: " AND "))
    }

    private func from(_ scope: Scope) -> SQLFragment {
        let table = SQLiteNames.quote(schema.table(of: scope.entity).name) + " AS " + scope.alias
        let joins = scope.joins.map { " " + $0 }.joined()
        guard let (list, index) = scope.driver else { return SQLFragment(table + joins) }
        return list + " CROSS JOIN " + table + " INDEXED BY " + SQLiteNames.quote(index.name) + joins
    }

    /// The alias of the driving list's rows (see `drivingList`); the scopes' aliases are `t<n>`.
    private static var drivingAlias: String { "l0" }

    /// A long `IN` list of texts or integers on an indexed column of the fetched table, alone or one term of a
    /// top-level AND, as the rows that drive the query: `json_each(?) AS l0 CROSS JOIN <table> AS t0 INDEXED BY
    /// <index>` with `t0.<column> = l0.value`, the rest of the predicate as it was. SQLite otherwise copies
    /// the list into a temporary index before probing the column's (for a prefetch's 5,000 keys that copy
    /// was 40% of the statement's time); the join probes the column's index with each value as it reads it.
    /// `INDEXED BY` pins that plan: without an index the table would be scanned once per value, and should the
    /// index be gone (or unusable) SQLite refuses to prepare the statement rather than run it slowly (the store
    /// then compiles it again without). The values are de-duplicated, as a join would return a row once per
    /// equal value (see `distinctJSONList`); the `=` gives the rows `IN` gives: each value has the column's
    /// storage class, so no affinity changes it either way, and both compare with the column's collation.
    private func drivingList(
        _ predicate: FetchPredicate, in root: Scope
    ) -> (list: SQLFragment, index: SQLiteLeadingIndexes.Index, condition: String, remaining: FetchPredicate?)? {
        let table = schema.table(of: root.entity).name
        func driver(_ term: FetchPredicate) -> (list: SQLFragment, index: SQLiteLeadingIndexes.Index, condition: String)? {
            guard case .comparison(let c) = term, c.op == .in, c.options.isEmpty, c.modifier == .direct,
                  case .keyPath(let path) = c.left, path.count == 1, case .list(let items) = c.right,
                  let position = root.entity.attributeIndex[path[0]]
            else { return nil }
            let attribute = root.entity.attributes[position]
            guard !attribute.isExternal, let index = leadingIndexes.index(table: table, column: attribute.column),
                  let json = Self.distinctJSONList(items, type: attribute.type)
            else { return nil }
            let list = SQLFragment(
                "json_each(?) AS \(Self.drivingAlias)", [json.databaseValue],
                bindsLongJSONList: json.utf8.count > Self.cachedJSONLength)
            return (list, index, "\(root.alias).\(SQLiteNames.quote(attribute.column)) = \(Self.drivingAlias).value")
        }
        if let found = driver(predicate) { return (found.list, found.index, found.condition, nil) }
        guard case .and(let terms) = predicate else { return nil }
        for (i, term) in terms.enumerated() {
            guard let found = driver(term) else { continue }
            var rest = terms
            rest.remove(at: i)
            return (found.list, found.index, found.condition, rest.count == 1 ? rest[0] : .and(rest))
        }
        return nil
    }

    private func whereClause(_ filter: SQLFragment?) -> SQLFragment {
        filter.map { " WHERE " + $0 } ?? SQLFragment("")
    }

    /// `alias.Z_ENT IN (...)`, or nothing when every row of the table qualifies anyway. Entity numbers are
    /// the schema's own, never caller input.
    package func entityFilter(_ entity: SQLiteEntityLayout, alias: String, includesSubentities: Bool) -> String? {
        schema.entityFilter(entity, alias: alias, includesSubentities: includesSubentities)
    }

    // MARK: - Scopes

    /// Mutable compilation state: the next alias.
    private final class State {
        var nextAlias = 1
        let requestEntity: String
        init(requestEntity: String) { self.requestEntity = requestEntity }
        func alias() -> String {
            defer { nextAlias += 1 }
            return "t\(nextAlias)"
        }
    }

    /// A FROM item (the fetched table, or a subquery's table) and the LEFT JOINs its to-one paths need.
    private final class Scope {
        let alias: String
        let entity: SQLiteEntityLayout
        var joins: [String] = []
        var joinAliases: [String: (String, SQLiteEntityLayout)] = [:]
        /// `json_each(?) AS l0` and the index it probes when a long `IN` list drives the query (see `drivingList`).
        var driver: (list: SQLFragment, index: SQLiteLeadingIndexes.Index)?
        init(alias: String, entity: SQLiteEntityLayout) {
            self.alias = alias
            self.entity = entity
        }
    }

    // MARK: - Key paths

    private enum Resolved {
        /// A scalar: a column (with its attribute type; `nil` for keys) or a computed value such as `@count`.
        case value(SQLFragment, AttributeType?)
        /// A path that crosses a to-many relationship: the rest is evaluated per destination row.
        case toMany(base: String, entity: SQLiteEntityLayout, relationship: RelationshipDescription, rest: [String])
    }

    private func resolve(_ path: [String], in scope: Scope, state: State) throws -> Resolved {
        var entity = scope.entity
        var alias = scope.alias
        let components = path.first == "SELF" ? Array(path.dropFirst()) : path
        func unknown() -> QueryError {
            QueryError.unknownKeyPath(entity: state.requestEntity, keyPath: path.joined(separator: "."))
        }
        for (i, component) in components.enumerated() {
            let isLast = i == components.count - 1
            if let index = entity.attributeIndex[component] {
                guard isLast else { throw unknown() }
                let mapping = entity.attributes[index]
                return .value(SQLFragment("\(alias).\(SQLiteNames.quote(mapping.column))"), mapping.type)
            }
            if let index = entity.toOneIndex[component] {
                let mapping = entity.toOnes[index]
                let fk = "\(alias).\(SQLiteNames.quote(mapping.column))"
                if isLast { return .value(SQLFragment(fk), nil) }
                guard let destination = schema.entities[mapping.destination] else {
                    throw StoreError.unsupportedPredicate(
                        path: self.path, configuration: configurationName,
                        reason: "key path \(path.joined(separator: ".")): relationship \(entity.name).\(component) "
                            + "leads to \(mapping.destination), which is not in this store")
                }
                let key = "\(alias).\(mapping.column)"
                if let (joined, joinedEntity) = scope.joinAliases[key] {
                    (alias, entity) = (joined, joinedEntity)
                } else {
                    let next = state.alias()
                    scope.joins.append("LEFT JOIN \(SQLiteNames.quote(schema.table(of: destination).name)) AS \(next) ON \(next).\"Z_PK\" = \(fk)")
                    scope.joinAliases[key] = (next, destination)
                    (alias, entity) = (next, destination)
                }
                continue
            }
            if let relationship = model.entity(named: entity.name)?.relationship(named: component),
                relationship.isToMany, !relationship.isTransient
            {
                let rest = Array(components[(i + 1)...])
                if rest == ["@count"] {
                    let (sub, correlation) = try subquery(base: alias, entity: entity, relationship: relationship, state: state)
                    return .value(
                        SQLFragment("(SELECT COUNT(*) FROM ") + from(sub) + " WHERE " + correlation + ")", .integer64)
                }
                return .toMany(base: alias, entity: entity, relationship: relationship, rest: rest)
            }
            throw unknown()
        }
        return .value(SQLFragment("\(alias).\"Z_PK\""), nil)
    }

    /// A scope over the destination table of a to-many, correlated to `base` through the inverse foreign key
    /// or the join table.
    private func subquery(
        base: String, entity: SQLiteEntityLayout, relationship: RelationshipDescription, state: State
    ) throws -> (Scope, SQLFragment) {
        let name = "\(entity.name).\(relationship.name)"
        if let end = model.end(of: relationship.name, from: entity.name), let side = schema.join(end.key) {
            // Many-to-many: the destination rows whose keys the join table pairs with the source row.
            guard let destination = schema.entities[relationship.destinationEntityName] else {
                throw StoreError.unsupportedPredicate(
                    path: path, configuration: configurationName, reason: "relationship \(name) leads to \(relationship.destinationEntityName), which is not in this store")
            }
            let sub = Scope(alias: state.alias(), entity: destination)
            let j = state.alias()
            var correlation = "\(sub.alias).\"Z_PK\" IN (SELECT \(j).\(SQLiteNames.quote(side.memberColumn)) FROM "
                + "\(SQLiteNames.quote(side.table)) AS \(j) WHERE \(j).\(SQLiteNames.quote(side.sourceColumn)) = \(base).\"Z_PK\")"
            if let filter = entityFilter(destination, alias: sub.alias, includesSubentities: true) {
                correlation += " AND " + filter
            }
            return (sub, SQLFragment(correlation))
        }
        // A to-many without inverse correlates through the members' hidden key, one with a to-one inverse
        // through that foreign key.
        let foreignKey: String, destination: SQLiteEntityLayout
        if let end = model.end(of: relationship.name, from: entity.name), let hidden = schema.hiddenKeys[end.key] {
            guard let layout = schema.entities[relationship.destinationEntityName] else {
                throw StoreError.unsupportedPredicate(
                    path: path, configuration: configurationName, reason: "relationship \(name) leads to \(relationship.destinationEntityName), which is not in this store")
            }
            (foreignKey, destination) = (hidden.column, layout)
        } else {
            guard let inverseName = relationship.inverseName,
                let destinationModel = model.entity(named: relationship.destinationEntityName),
                let inverse = destinationModel.relationship(named: inverseName)
            else {
                throw StoreError.unsupportedPredicate(
                    path: path, configuration: configurationName, reason: "to-many relationship \(name) has no inverse to-one; such key paths are not supported yet")
            }
            guard !inverse.isToMany else {
                throw StoreError.unsupportedPredicate(
                    path: path, configuration: configurationName, reason: "to-many relationship \(name) is many-to-many; such key paths are not supported yet")
            }
            guard let layout = schema.entities[destinationModel.name], let fkIndex = layout.toOneIndex[inverseName] else {
                throw StoreError.unsupportedPredicate(
                    path: path, configuration: configurationName, reason: "relationship \(name) leads to \(destinationModel.name), which is not in this store")
            }
            (foreignKey, destination) = (layout.toOnes[fkIndex].column, layout)
        }
        let sub = Scope(alias: state.alias(), entity: destination)
        var correlation = "\(sub.alias).\(SQLiteNames.quote(foreignKey)) = \(base).\"Z_PK\""
        if let filter = entityFilter(destination, alias: sub.alias, includesSubentities: true) {
            correlation += " AND " + filter
        }
        return (sub, SQLFragment(correlation))
    }

    // MARK: - Predicates

    // Three-valued logic throughout, as SQL has it and as `PredicateEvaluator` documents it: a comparison with
    // a NULL operand is unknown (NULL), NOT of unknown stays unknown, and only a true WHERE selects a row.

    /// `predicate`'s SQL, or its negation's. NOTs are pushed down to the comparisons (De Morgan's laws and
    /// NOT NOT p = p hold in three-valued logic too), an AND inside an AND and an OR inside an OR are flattened,
    /// and the most deeply nested part of a compound comes first: SQLite's parser keeps a small stack (100
    /// entries in Debian's 3.40) that `NOT (NOT (...` and `a AND (b OR (c AND (...` filled at 23 levels, where
    /// `((... AND c) OR b) AND a` takes one entry a level (about 90 levels).
    private func compile(_ predicate: FetchPredicate, negated: Bool = false, in scope: Scope, state: State) throws -> SQLFragment {
        let (predicate, negated) = Self.pastNots(predicate, negated: negated)
        switch predicate {
        case .constant(let value):
            return SQLFragment(value != negated ? "1" : "0")
        case .comparison(let comparison):
            let sql = try compile(comparison, in: scope, state: state)
            return negated ? "NOT (" + sql + ")" : sql
        case .and, .not, .or:
            guard let top = Self.connective(predicate, negated: negated) else { preconditionFailure("a compound has a connective") }
            var flat: [(FetchPredicate, Bool)] = []
            var pending = top.parts.reversed().map { ($0, top.negated) }
            while let (part, partNegated) = pending.popLast() {
                if let nested = Self.connective(part, negated: partNegated), nested.isAnd == top.isAnd {
                    pending.append(contentsOf: nested.parts.reversed().map { ($0, nested.negated) })
                } else {
                    flat.append((part, partNegated))
                }
            }
            // An empty AND is true, an empty OR false.
            if flat.isEmpty { return SQLFragment(top.isAnd ? "1" : "0") }
            // Everyday predicates keep the order they were written in (as traces show them).
            let depths = flat.map { Self.nesting($0.0) }
            if let deepest = depths.indices.max(by: { depths[$0] < depths[$1] }), deepest > 0, depths[deepest] >= 4 {
                flat.insert(flat.remove(at: deepest), at: 0)
            }
            let parts = try flat.map { try compile($0.0, negated: $0.1, in: scope, state: state) }
            return "(" + SQLFragment.grouped(parts, separator: top.isAnd ? " AND " : " OR ") + ")"
        }
    }

    /// What `predicate` compiles to with `negated`, past its NOTs: an AND (`isAnd`) or an OR of `parts`, each
    /// compiled with `negated`; nil for a comparison or a constant.
    private static func connective(_ predicate: FetchPredicate, negated: Bool) -> (isAnd: Bool, parts: [FetchPredicate], negated: Bool)? {
        let (predicate, negated) = pastNots(predicate, negated: negated)
        switch predicate {
        case .and(let parts): return (!negated, parts, negated)
        case .or(let parts): return (negated, parts, negated)
        case .not, .comparison, .constant: return nil
        }
    }

    /// `predicate` without its leading NOTs, and whether it is negated once they are taken away.
    private static func pastNots(_ predicate: FetchPredicate, negated: Bool) -> (FetchPredicate, Bool) {
        var predicate = predicate, negated = negated
        while case .not(let inner) = predicate {
            predicate = inner
            negated.toggle()
        }
        return (predicate, negated)
    }

    /// How many ANDs and ORs `predicate` nests, at most.
    private static func nesting(_ predicate: FetchPredicate) -> Int {
        switch predicate {
        case .not(let inner): return nesting(inner)
        case .and(let parts), .or(let parts): return 1 + (parts.lazy.map(nesting).max() ?? 0)
        case .comparison, .constant: return 0
        }
    }

    enum Operand {
        case value(SQLFragment, AttributeType?)
        case constant(AttributeValue)
        case list([PredicateOperand])
        case toMany(base: String, entity: SQLiteEntityLayout, relationship: RelationshipDescription, rest: [String])

        var isNull: Bool {
            if case .constant(.null) = self { return true }
            return false
        }
        var columnType: AttributeType? {
            if case .value(_, let type) = self { return type }
            return nil
        }
        /// Holds text: a string-typed column, or a string (or URI) constant.
        var isStringLike: Bool {
            switch self {
            case .value(_, let type): return type == .string || type == .uri || type == .objectID
            case .constant(.string), .constant(.uri): return true
            default: return false
            }
        }
    }

    private func operand(_ expression: PredicateOperand, in scope: Scope, state: State) throws -> Operand {
        switch expression {
        case .keyPath(let path):
            switch try resolve(path, in: scope, state: state) {
            case .value(let fragment, let type): return .value(fragment, type)
            case let .toMany(base, entity, relationship, rest):
                return .toMany(base: base, entity: entity, relationship: relationship, rest: rest)
            }
        case .constant(let value): return .constant(value)
        case .list(let items): return .list(items)
        case .variable(let name, let keyPath):
            throw QueryError.unboundVariable(name: ([name] + keyPath).joined(separator: "."))
        case .object(let id):
            throw QueryError.unsupported("the object \(id) was not bound to a store (FetchPredicate.bindingObjects)")
        }
    }

    private func compile(_ c: Comparison, in scope: Scope, state: State) throws -> SQLFragment {
        let left = try operand(c.left, in: scope, state: state)
        if case let .toMany(base, entity, relationship, rest) = left {
            // `tags CONTAINS x` with no modifier is membership, not a substring test on each element.
            if c.op == .contains, c.modifier == .direct {
                let needle = try operand(c.right, in: scope, state: state)
                return try membership(needle, rest: rest, options: c.options, base: base, entity: entity,
                                      relationship: relationship, state: state)
            }
            // ALL holds for every element at the end of the path, so a further to-many inside is ALL too
            // (ALL a.b.x is every x of every b of every a, as the evaluator in memory flattens it); ANY and
            // NONE ask whether some element anywhere matches, so the inner one is ANY.
            let inner = Comparison(.keyPath(rest), c.op, c.right, options: c.options, modifier: c.modifier == .all ? .all : .direct)
            return try quantified(c.modifier, inner, base: base, entity: entity, relationship: relationship, state: state)
        }
        let right = try operand(c.right, in: scope, state: state)
        if case let .toMany(base, entity, relationship, rest) = right {
            guard c.op == .in else {
                throw QueryError.unsupported("a to-many key path on the right of \(c.op.rawValue)")
            }
            return try membership(left, rest: rest, options: c.options, base: base, entity: entity,
                                  relationship: relationship, state: state)
        }
        // A modifier on a single value changes nothing, as in memory.
        return try compare(left, c.op, right, options: c.options, scope: scope, state: state)
    }

    /// ANY/ALL/NONE over the rows of a to-many relationship, as [NOT] EXISTS over the destination table: an
    /// element counts only when its comparison is true, so the result is never unknown.
    private func quantified(
        _ modifier: ComparisonModifier, _ inner: Comparison, base: String, entity: SQLiteEntityLayout,
        relationship: RelationshipDescription, state: State
    ) throws -> SQLFragment {
        let (sub, correlation) = try subquery(base: base, entity: entity, relationship: relationship, state: state)
        let condition = try compile(inner, in: sub, state: state)
        func exists(_ cond: SQLFragment) -> SQLFragment {
            "EXISTS (SELECT 1 FROM " + from(sub) + " WHERE " + correlation + " AND " + cond + ")"
        }
        switch modifier {
        case .any, .direct: return exists(condition)
        case .none: return "NOT " + exists(condition)
        case .all: return "NOT " + exists("(" + condition + ") IS NOT 1")
        }
    }

    /// `needle IN toMany.key` with SQL `IN` semantics: false for no elements, unknown for a NULL needle, true on
    /// a match, else unknown when some element is NULL, else false.
    private func membership(
        _ needle: Operand, rest: [String], options: ComparisonOptions, base: String, entity: SQLiteEntityLayout,
        relationship: RelationshipDescription, state: State
    ) throws -> SQLFragment {
        let (sub, correlation) = try subquery(base: base, entity: entity, relationship: relationship, state: state)
        guard case .value(let element, let type) = try resolve(rest, in: sub, state: state) else {
            throw QueryError.unsupported("membership in a key path that crosses two to-many relationships")
        }
        let elementOperand = Operand.value(element, type)
        let n = try sql(needle, hint: type)
        let match = !options.isEmpty && needle.isStringLike && elementOperand.isStringLike
            ? matchCall(.equal, options, element, n) : element + " = " + n
        func exists(_ cond: SQLFragment?) -> SQLFragment {
            "EXISTS (SELECT 1 FROM " + from(sub) + " WHERE " + correlation + (cond.map { " AND " + $0 } ?? SQLFragment("")) + ")"
        }
        return "(CASE WHEN NOT " + exists(nil) + " THEN 0 WHEN " + n + " IS NULL THEN NULL WHEN " + exists(match)
            + " THEN 1 WHEN " + exists(element + " IS NULL") + " THEN NULL ELSE 0 END)"
    }

    /// One side as SQL; constants become bound parameters encoded for the other side's column type.
    private func sql(_ operand: Operand, hint: AttributeType?) throws -> SQLFragment {
        switch operand {
        case .value(let fragment, _): return fragment
        case .constant(.string(let text)) where AttributeValue.string(text).holdsNUL:
            // GRDB binds text as a C string, cut at the first U+0000: the UTF-8 bytes go in as a BLOB and SQLite
            // turns them into TEXT of their full length.
            return SQLFragment(Self.textFromBytes, [Data(text.utf8).databaseValue])
        case .constant(let value): return SQLFragment("?", [SQLiteValueCoding.bind(value, hint: hint)])
        case .list: throw QueryError.unsupported("a list where a single value is expected")
        case .toMany: throw QueryError.unsupported("a to-many key path where a single value is expected")
        }
    }

    /// SQLite applies a column's affinity to a constant compared with it: a number compared with a TEXT column
    /// becomes text (`name < 20` is `name < '20'`), a numeric string compared with a numeric column a number.
    /// The evaluator of the other stores compares storage classes (numbers before text), so a column compared
    /// with a constant of the other class loses its affinity (unary `+`) and SQLite compares classes too.
    /// Found by the predicate fuzz target's parity check.
    private func withoutAffinity(_ column: Operand, against other: Operand) -> Operand {
        guard case .value(let fragment, let type) = column, case .constant(let value) = other,
            !fragment.sql.hasPrefix("+")
        else { return column }
        let textColumn = type == .string || type == .uri || type == .objectID
        // A switch, not `[...].contains(type)`: an IN list runs this once per element, and the array literal
        // was allocated each time. No type is a primary or foreign key (`SELF`, a to-one): an INTEGER column,
        // so `friend == "06"` is not `ZFRIEND = 6` (found by the predicate fuzz target).
        let numericColumn: Bool
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .decimal, .boolean, .date, nil: numericColumn = true
        default: numericColumn = false
        }
        let numericConstant: Bool, textConstant: Bool
        switch value {
        case .integer, .double, .decimal, .bool, .date: (numericConstant, textConstant) = (true, false)
        case .string, .uri: (numericConstant, textConstant) = (false, true)
        default: (numericConstant, textConstant) = (false, false)
        }
        guard (textColumn && numericConstant) || (numericColumn && textConstant) else { return column }
        return .value("+" + fragment, type)
    }

    /// A string constant holding U+0000, bound as its UTF-8 bytes (see `sql(_:hint:)`).
    /// The unary `+` takes away the TEXT affinity a CAST has, which SQLite would apply to a numeric column
    /// compared with it (`+age > CAST(x'00' AS TEXT)` is true; found by fuzzing).
    private static let textFromBytes = "+CAST(? AS TEXT)"

    private func matchCall(
        _ op: ComparisonOperator, _ options: ComparisonOptions, _ l: SQLFragment, _ r: SQLFragment
    ) -> SQLFragment {
        let code = Self.matchOperators.firstIndex(of: op) ?? 0
        // The match function reads TEXT arguments as C strings too, but a BLOB whole: pass such a constant's bytes.
        func bytes(_ f: SQLFragment) -> SQLFragment { f.sql == Self.textFromBytes ? SQLFragment("?", f.arguments) : f }
        return "\(Self.matchFunctionName)(\(code), \(options.rawValue), " + bytes(l) + ", " + bytes(r) + ")"
    }

    private func compare(
        _ left: Operand, _ op: ComparisonOperator, _ right: Operand, options: ComparisonOptions, scope: Scope,
        state: State
    ) throws -> SQLFragment {
        let left = withoutAffinity(left, against: right), right = withoutAffinity(right, against: left)
        // Options apply when both sides are text, as in memory; otherwise plain SQL (binary collation).
        let stringy = !options.isEmpty && left.isStringLike && right.isStringLike
        switch op {
        case .equal, .notEqual:
            let equal = op == .equal
            // A literal nil is IS NULL / IS NOT NULL: never unknown.
            if left.isNull && right.isNull { return SQLFragment(equal ? "1" : "0") }
            if left.isNull || right.isNull {
                let other = left.isNull ? right : left
                return try sql(other, hint: nil) + (equal ? " IS NULL" : " IS NOT NULL")
            }
            let l = try sql(left, hint: right.columnType), r = try sql(right, hint: left.columnType)
            if stringy { return matchCall(op, options, l, r) }
            return l + (equal ? " = " : " <> ") + r
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let l = try sql(left, hint: right.columnType), r = try sql(right, hint: left.columnType)
            if stringy { return matchCall(op, options, l, r) }
            return l + " \(op.rawValue) " + r
        case .between:
            guard case .list(let bounds) = right, bounds.count == 2 else {
                throw QueryError.unsupported("BETWEEN needs a two-element list {low, high}")
            }
            let low = try operand(bounds[0], in: scope, state: state)
            let high = try operand(bounds[1], in: scope, state: state)
            let l = try sql(withoutAffinity(withoutAffinity(left, against: low), against: high), hint: nil)
            let lo = try sql(low, hint: left.columnType), hi = try sql(high, hint: left.columnType)
            if !options.isEmpty && left.isStringLike && low.isStringLike && high.isStringLike {
                return "(" + matchCall(.greaterOrEqual, options, l, lo) + " AND " + matchCall(.lessOrEqual, options, l, hi) + ")"
            }
            return "(" + l + " BETWEEN " + lo + " AND " + hi + ")"
        case .in:
            let values: [Operand]
            switch right {
            case .list(let list): values = try list.map { try operand($0, in: scope, state: state) }
            case .constant, .value: values = [right]   // a single right-hand value is a one-element list
            case .toMany: throw QueryError.unsupported("IN with a to-many key path")
            }
            if values.isEmpty { return SQLFragment("0") }
            let l = try sql(values.reduce(left) { withoutAffinity($0, against: $1) }, hint: nil)
            if !options.isEmpty && left.isStringLike {
                // Each element compared as `==` would be; OR keeps SQL's IN semantics for NULLs.
                let terms = try values.map { value -> SQLFragment in
                    let r = try sql(value, hint: left.columnType)
                    return value.isStringLike ? matchCall(.equal, options, l, r) : l + " = " + r
                }
                return "(" + SQLFragment.grouped(terms, separator: " OR ") + ")"
            }
            if let list = Self.longList(l, values, hint: left.columnType) { return list }
            // Built in place: a fragment per element (its own argument array) cost more than SQLite's parsing of
            // the list.
            var list = l + " IN ("
            list.sql.reserveCapacity(list.sql.utf8.count + 3 * values.count)
            list.arguments.reserveCapacity(list.arguments.count + values.count)
            for (i, value) in values.enumerated() {
                if i > 0 { list.sql += ", " }
                if case .constant(let constant) = value, !constant.isNull, !constant.holdsNUL {
                    list.sql += "?"
                    list.arguments.append(SQLiteValueCoding.bind(constant, hint: left.columnType))
                } else {
                    let element = try sql(value, hint: left.columnType)
                    list.sql += element.sql
                    list.arguments += element.arguments
                }
            }
            list.sql += ")"
            return list
        case .beginsWith, .endsWith, .contains, .like:
            if left.isNull || right.isNull { return SQLFragment("NULL") }
            for side in [left, right] where !side.isStringLike {
                throw QueryError.unsupported("\(op.rawValue) compares strings; one side here is not a string")
            }
            return matchCall(op, options, try sql(left, hint: nil), try sql(right, hint: nil))
        }
    }
}

// MARK: - Match function

extension SQLPredicateCompiler {
    /// `SWITCHYARD_MATCH(op, options, lhs, rhs)`: pure and deterministic, so SQLite may use it anywhere.
    /// NULL on either side is unknown (NULL), as for the SQL operators.
    static let matchFunction = DatabaseFunction(matchFunctionName, argumentCount: 4, pure: true) { values in
        guard case .int64(let code) = values[0].storage, code >= 0, code < Int64(matchOperators.count),
            case .int64(let rawOptions) = values[1].storage,
            let l = SQLiteValueCoding.text(values[2]), let r = SQLiteValueCoding.text(values[3])
        else { return nil }
        return StringMatching.matches(
            matchOperators[Int(code)], l, r, options: ComparisonOptions(rawValue: Int(rawOptions)))
    }
}

extension AttributeValue {
    /// Text holding U+0000, which `SQLPredicateCompiler` binds as its bytes rather than as a parameter of text.
    var holdsNUL: Bool {
        guard case .string(let text) = self else { return false }
        // memchr over the contiguous bytes: a prefetch checks thousands of keys here, and the generic
        // `contains` cost more per key than binding it.
        return text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0, bytes.count) != nil
        } ?? text.utf8.contains(0)
    }
}

import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - Foundation's #Predicate

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension TypedPredicate {
    /// Translates a Foundation `#Predicate` over the entity type into the same `FetchPredicate` (and so the same
    /// SQL and in-memory evaluation) as the key-path operators and format strings.
    ///
    /// ```swift
    /// let cutoff = Date(timeIntervalSinceNow: -3600)
    /// let recent = try context.fetch(Message.self, where: #Predicate<Message> { $0.sentAt > cutoff && $0.text.contains("hi") })
    /// ```
    /// Understood: `&&`, `||`, `!`; `==`, `!=`, `<`, `<=`, `>`, `>=` between a property and a value (either side);
    /// `== nil` / `!= nil` on optional properties; `objectID` (of the object or of a to-one: `$0.chat?.objectID
    /// == chatID`, as SwiftData compares `persistentModelID`s; an entity value itself cannot be captured, as it
    /// is neither `Sendable` nor `Codable`); a `Bool` property on its own; `property.contains(string)`,
    /// `property.starts(with: string)`; `values.contains(property)` (`IN`); `true` and `false`. The properties
    /// are those the entity types list in `keyPathNames`, followed through to-one relationships with optional
    /// chaining (`$0.chat?.title == "Team"` is `chat.title == "Team"`, nil when there is no chat); a chained
    /// test that yields `Bool?` is written `== true` or `?? false` (`$0.link?.starts(with: "https") == true`).
    /// Anything else — arithmetic, a comparison between two properties, a method Switchyard cannot run in
    /// SQL — throws `QueryError.unsupported` naming the expression, rather than being evaluated in memory
    /// behind the user's back.
    public init(_ predicate: Predicate<Root>) throws {
        let translator = FoundationPredicateTranslator(entity: Root.entityName, input: predicate.variable.key)
        self.init(try translator.predicate(predicate.expression))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ObjectContext {
    /// Fetches objects of `type`'s entity with a Foundation `#Predicate` (see `TypedPredicate.init(_:)` for what
    /// it may contain).
    /// ```swift
    /// let unread = try context.fetch(Message.self, where: #Predicate { !$0.isRead }, sortedBy: [.ascending(\.sentAt)])
    /// ```
    public func fetch<E: EntityObject>(
        _ type: E.Type, where predicate: Predicate<E>, sortedBy sortKeys: [TypedSortKey<E>] = [], limit: Int? = nil,
        offset: Int = 0
    ) throws -> [E] {
        try fetch(type, where: TypedPredicate(predicate), sortedBy: sortKeys, limit: limit, offset: offset)
    }

    /// The number of objects `fetch(_:where:...)` would return for a Foundation `#Predicate`.
    public func count<E: EntityObject>(_ type: E.Type, where predicate: Predicate<E>) throws -> Int {
        try count(type, where: TypedPredicate(predicate))
    }
}

// MARK: - Translation

/// What one node of a Foundation predicate expression becomes.
package enum TranslatedTerm {
    /// A truth value.
    case predicate(FetchPredicate)
    /// A property of the entity, or one reached through to-one relationships; `nullable` when Swift may read
    /// it as nil (an optional property, or any property at the end of an optional chain).
    case keyPath([String], nullable: Bool)
    /// A value to compare with.
    case value(PredicateOperand)
}

/// Walks a Foundation predicate expression tree; each node type it understands conforms to
/// `TranslatablePredicateExpression` (conditionally on its children), so anything else is found by a failed cast.
package struct FoundationPredicateTranslator {
    /// The entity, for error messages.
    package let entity: String
    /// The key path each variable in scope stands for: the predicate's input is the object itself (empty), the
    /// variable of an optional chain the chained property (`$0.chat?.title`: the chain's variable is `chat`).
    private var bindings: [PredicateExpressions.VariableID: [String]]

    package init(entity: String, input: PredicateExpressions.VariableID) {
        self.entity = entity
        self.bindings = [input: []]
    }

    /// The key path `variable` stands for, nil for a variable the translator did not bind.
    package func path(of variable: PredicateExpressions.VariableID) -> [String]? { bindings[variable] }

    /// A translator in which `variable` also stands for `path`.
    package func binding(_ variable: PredicateExpressions.VariableID, to path: [String]) -> Self {
        var copy = self
        copy.bindings[variable] = path
        return copy
    }

    /// The model name of a key path on an entity type, nil for one the type does not list (or no entity type).
    package static func name(of keyPath: AnyKeyPath) -> String? {
        (type(of: keyPath).rootType as? any EntityObject.Type)?.listedName(of: keyPath)
    }

    /// True for `\E.objectID` on an entity type.
    package static func isObjectID(_ keyPath: AnyKeyPath) -> Bool {
        (type(of: keyPath).rootType as? any EntityObject.Type)?.isObjectIDKeyPath(keyPath) ?? false
    }

    package func predicate(_ expression: Any) throws -> FetchPredicate {
        switch try term(expression) {
        case .predicate(let p): return p
        case .keyPath(let path, let nullable): return comparison(path, nullable: nullable, .equal, .constant(.bool(true)))
        case .value(.constant(.bool(let b))): return .constant(b)
        case .value: throw unsupported(expression, "a value that is not a truth value")
        }
    }

    package func term(_ expression: Any) throws -> TranslatedTerm {
        guard let node = expression as? any TranslatablePredicateExpression else {
            throw unsupported(expression, "this kind of expression")
        }
        return try node.translate(self)
    }

    package func compare(_ lhs: Any, _ op: ComparisonOperator, _ rhs: Any, node: Any) throws -> FetchPredicate {
        switch (try term(lhs), try term(rhs)) {
        case (.keyPath(let path, let nullable), .value(let value)):
            return comparison(path, nullable: nullable, op, value)
        case (.value(let value), .keyPath(let path, let nullable)):
            return comparison(path, nullable: nullable, op.swapped, value)
        case (.predicate(let p), .value(.constant(.bool(true)))) where op == .equal,
            (.value(.constant(.bool(true))), .predicate(let p)) where op == .equal:
            // A chained test, `$0.link?.starts(with: "x") == true`: nil (no link) is not true, and the test
            // is already false on a null property (see `comparison`).
            return p
        case (.keyPath, .keyPath):
            throw unsupported(node, "a comparison between two properties")
        case (.predicate, .value), (.value, .predicate):
            // `$0.title.contains("a") == false`: only `== true` reads as the test itself.
            throw unsupported(node, "a test compared with a value other than true (write `!` before the test, as in `!$0.title.contains(\"a\")`)")
        default:
            throw unsupported(node, "a comparison that does not read a property")
        }
    }

    /// `path op value` with Swift's reading of nil rather than SQL's: where the property may be nil, a
    /// comparison with a value is false for nil (`!=` true), never unknown, so `!($0.chat?.title == "x")`
    /// selects the messages without a chat, as Swift evaluating the closure would.
    package func comparison(_ path: [String], nullable: Bool, _ op: ComparisonOperator, _ value: PredicateOperand) -> FetchPredicate {
        let test = FetchPredicate.comparison(Comparison(.keyPath(path), op, value))
        guard nullable, value != .constant(.null) else { return test }
        if op == .notEqual { return .or([test, .comparison(Comparison(.keyPath(path), .equal, .constant(.null)))]) }
        return .and([test, .comparison(Comparison(.keyPath(path), .notEqual, .constant(.null)))])
    }

    package func unsupported(_ expression: Any, _ what: String) -> QueryError {
        .unsupported("#Predicate on \(entity): \(what) cannot be translated (\(Self.describe(expression)))")
    }

    /// A short form of the node's type (`Comparison<KeyPath<Variable<Message>, Int64>, Value<Int64>>`).
    package static func describe(_ expression: Any) -> String {
        String(describing: type(of: expression)).replacingOccurrences(of: "Foundation.PredicateExpressions.", with: "")
            .replacingOccurrences(of: "PredicateExpressions.", with: "")
    }

    /// A Swift value as a predicate operand: an attribute value, an optional one, or a sequence of them.
    package func operand(_ value: Any, node: Any) throws -> PredicateOperand {
        if let stored = AttributeValue(converting: value) { return .constant(stored) }
        if let entity = value as? any EntityObject { return .object(entity.managedObject.objectID) }
        if let id = value as? ObjectID { return .object(id) }
        if let optional = value as? any SwiftOptional, optional.isNone { return .constant(.null) }      // an ObjectID? nil
        if let character = value as? Character { return .constant(.string(String(character))) }
        if let sequence = value as? any Sequence {
            return .list(try Self.elements(of: sequence).map { try operand($0, node: node) })
        }
        throw unsupported(node, "a value of type \(type(of: value))")
    }

    private static func elements<S: Sequence>(of sequence: S) -> [Any] { sequence.map { $0 } }
}

extension ComparisonOperator {
    /// The operator with its operands exchanged (`3 < x` is `x > 3`).
    fileprivate var swapped: ComparisonOperator {
        switch self {
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return self
        }
    }
}

/// A predicate expression node the translator understands.
protocol TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm
}

/// A variable of the predicate: its input `$0`, or the variable of an optional chain.
package protocol PredicateInputVariable {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var variableKey: PredicateExpressions.VariableID { get }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Variable: PredicateInputVariable {
    package var variableKey: PredicateExpressions.VariableID { key }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.KeyPath: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard let variable = root as? any PredicateInputVariable, let prefix = translator.path(of: variable.variableKey) else {
            throw translator.unsupported(
                self, "a key path on something other than the object or a to-one chain (a nested value, or a to-many's "
                    + "isEmpty, count or first: write the typed predicate .count(\\.members, .equal, 0) or the format "
                    + "'members.@count == 0' instead)")
        }
        if FoundationPredicateTranslator.isObjectID(keyPath) {
            // `$0.objectID` is the object itself (SELF), `$0.chat?.objectID` the to-one `chat`.
            return .keyPath(prefix, nullable: !prefix.isEmpty)
        }
        guard let name = FoundationPredicateTranslator.name(of: keyPath) else {
            let root = type(of: keyPath).rootType
            if !(root is any EntityObject.Type) {
                // `$0.nickname?.isEmpty`: a property of the value, not of the entity.
                throw translator.unsupported(
                    self, "a property of a \(root) value (\(type(of: keyPath).valueType)), such as isEmpty or count: predicates read "
                        + "the entity's own properties; compare the property itself (`$0.nickname == \"\"`) or use contains, starts(with:) or ==")
            }
            throw translator.unsupported(self, "\(keyPath) is not one of the type's keyPathNames")
        }
        return .keyPath(prefix + [name], nullable: !prefix.isEmpty || type(of: keyPath).valueType is any SwiftOptional.Type)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Variable: TranslatablePredicateExpression {
    /// A chain's variable on its own is the chained property (`$0.link?.starts(with: "x")`: `link`).
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard let path = translator.path(of: key), !path.isEmpty else {
            throw translator.unsupported(self, "the object itself or a variable outside the predicate's chains")
        }
        return .keyPath(path, nullable: true)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.OptionalFlatMap: TranslatablePredicateExpression {
    /// `$0.chat?.title`: the transform read with its variable standing for the wrapped property.
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard case .keyPath(let path, _) = try translator.term(wrapped) else {
            throw translator.unsupported(self, "optional chaining on something other than a property")
        }
        return try translator.binding(variable.key, to: path).term(transform)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NilCoalesce: TranslatablePredicateExpression {
    /// `chainedTest ?? false` (or `$0.chat?.isMuted ?? false`): nil is not true, as `== true` reads it.
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard case .value(.constant(.bool(false))) = try translator.term(rhs) else {
            throw translator.unsupported(self, "?? other than a chained test ?? false")
        }
        return .predicate(try translator.predicate(lhs))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Value: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        .value(try translator.operand(value, node: self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NilLiteral: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm { .value(.constant(.null)) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Conjunction: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        .predicate(.and([try translator.predicate(lhs), try translator.predicate(rhs)]))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Disjunction: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        .predicate(.or([try translator.predicate(lhs), try translator.predicate(rhs)]))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Negation: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        .predicate(.not(try translator.predicate(wrapped)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Equal: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        .predicate(try translator.compare(lhs, .equal, rhs, node: self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NotEqual: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        .predicate(try translator.compare(lhs, .notEqual, rhs, node: self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Comparison: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        let mapped: ComparisonOperator
        switch op {
        case .lessThan: mapped = .less
        case .lessThanOrEqual: mapped = .lessOrEqual
        case .greaterThan: mapped = .greater
        case .greaterThanOrEqual: mapped = .greaterOrEqual
        @unknown default: throw translator.unsupported(self, "the comparison \(op)")
        }
        return .predicate(try translator.compare(lhs, mapped, rhs, node: self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.CollectionContainsCollection: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard case .keyPath(let path, let nullable) = try translator.term(base), case .value(let needle) = try translator.term(other) else {
            throw translator.unsupported(self, "contains(_:) other than property.contains(value)")
        }
        return .predicate(translator.comparison(path, nullable: nullable, .contains, needle))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceStartsWith: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard case .keyPath(let path, let nullable) = try translator.term(base), case .value(let prefix) = try translator.term(prefix) else {
            throw translator.unsupported(self, "starts(with:) other than property.starts(with: value)")
        }
        return .predicate(translator.comparison(path, nullable: nullable, .beginsWith, prefix))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContains: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        switch (try translator.term(sequence), try translator.term(element)) {
        case (.value(let list), .keyPath(let path, let nullable)):
            return .predicate(translator.comparison(path, nullable: nullable, .in, list))
        case (.keyPath(let path, let nullable), .value(let needle)):
            // A String property's contains(Character), say.
            return .predicate(translator.comparison(path, nullable: nullable, .contains, needle))
        default:
            throw translator.unsupported(self, "contains(_:) other than values.contains(property)")
        }
    }
}

/// Any `Optional`, to tell an optional property's key path from others.
private protocol SwiftOptional {
    var isNone: Bool { get }
}
extension Optional: SwiftOptional {
    var isNone: Bool { self == nil }
}

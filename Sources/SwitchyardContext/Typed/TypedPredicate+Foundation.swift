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
    /// `== nil` / `!= nil` on optional properties; a `Bool` property on its own; `property.contains(string)`,
    /// `property.starts(with: string)`; `values.contains(property)` (`IN`); `true` and `false`. The properties
    /// are the type's attributes (those its `keyPathNames` lists). Anything else — a to-one chain (`$0.chat?.title`),
    /// arithmetic, a comparison between two properties, a method Switchyard cannot run in SQL — throws
    /// `QueryError.unsupported` naming the expression, rather than being evaluated in memory behind the user's back.
    public init(_ predicate: Predicate<Root>) throws {
        let translator = FoundationPredicateTranslator(entity: Root.entityName) { keyPath in
            (keyPath as? PartialKeyPath<Root>).flatMap { Root.keyPathNames[$0] }
        }
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
    /// An attribute of the entity.
    case keyPath(String)
    /// A value to compare with.
    case value(PredicateOperand)
}

/// Walks a Foundation predicate expression tree; each node type it understands conforms to
/// `TranslatablePredicateExpression` (conditionally on its children), so anything else is found by a failed cast.
package struct FoundationPredicateTranslator {
    /// The entity, for error messages.
    package let entity: String
    /// The model name of a key path on the entity type, nil for one the type does not list.
    package let name: (AnyKeyPath) -> String?

    package func predicate(_ expression: Any) throws -> FetchPredicate {
        switch try term(expression) {
        case .predicate(let p): return p
        case .keyPath(let name): return .comparison(Comparison(.keyPath([name]), .equal, .constant(.bool(true))))
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
        case (.keyPath(let name), .value(let value)):
            return .comparison(Comparison(.keyPath([name]), op, value))
        case (.value(let value), .keyPath(let name)):
            return .comparison(Comparison(.keyPath([name]), op.swapped, value))
        case (.keyPath, .keyPath):
            throw unsupported(node, "a comparison between two properties")
        default:
            throw unsupported(node, "a comparison that does not read a property")
        }
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

/// The predicate's input, `$0`.
package protocol PredicateInputVariable {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Variable: PredicateInputVariable {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.KeyPath: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard root is any PredicateInputVariable else {
            throw translator.unsupported(self, "a key path on something other than the object itself (a chain or a nested value)")
        }
        guard let name = translator.name(keyPath) else {
            throw translator.unsupported(self, "\(keyPath) is not one of the type's keyPathNames")
        }
        return .keyPath(name)
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
        guard case .keyPath(let name) = try translator.term(base), case .value(let needle) = try translator.term(other) else {
            throw translator.unsupported(self, "contains(_:) other than property.contains(value)")
        }
        return .predicate(.comparison(Comparison(.keyPath([name]), .contains, needle)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceStartsWith: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        guard case .keyPath(let name) = try translator.term(base), case .value(let prefix) = try translator.term(prefix) else {
            throw translator.unsupported(self, "starts(with:) other than property.starts(with: value)")
        }
        return .predicate(.comparison(Comparison(.keyPath([name]), .beginsWith, prefix)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContains: TranslatablePredicateExpression {
    func translate(_ translator: FoundationPredicateTranslator) throws -> TranslatedTerm {
        switch (try translator.term(sequence), try translator.term(element)) {
        case (.value(let list), .keyPath(let name)):
            return .predicate(.comparison(Comparison(.keyPath([name]), .in, list)))
        case (.keyPath(let name), .value(let needle)):
            // A String property's contains(Character), say.
            return .predicate(.comparison(Comparison(.keyPath([name]), .contains, needle)))
        default:
            throw translator.unsupported(self, "contains(_:) other than values.contains(property)")
        }
    }
}

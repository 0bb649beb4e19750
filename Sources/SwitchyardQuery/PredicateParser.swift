import Foundation
import SwitchyardModel

// MARK: - Public entry points

extension FetchPredicate {
    /// Parses NSPredicate's format language, replacing `%@ %K %d %f …` with `arguments` in order.
    ///
    /// ```swift
    /// let p = try FetchPredicate(format: "age > %d AND name ==[c] %@", 30, "Ann")
    /// let q = try FetchPredicate(format: "ANY messages.sender.uuid == $FETCH_SOURCE.uuid")
    /// ```
    /// Throws `QueryError.syntax` (with the 0-based character position of the offending token) or
    /// `QueryError.badArgument` (missing, surplus or ill-typed arguments).
    public init(format: String, _ arguments: any PredicateArgumentConvertible...) throws {
        try self.init(format: format, arguments: arguments.map(\.predicateArgument))
    }

    /// Parses NSPredicate's format language with an array of arguments (see `init(format:_:)`).
    public init(format: String, arguments: [PredicateArgument]) throws {
        var parser = try PredicateParser(format: format, arguments: arguments)
        self = try parser.parse()
    }
}

// MARK: - PredicateParser

/// A recursive-descent parser over `PredicateLexer`'s tokens.
///
/// Grammar (keywords case-insensitive; precedence NOT > AND > OR, as NSPredicate):
/// ```
/// predicate  := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := ["ANY" | "SOME" | "ALL" | "NONE"] expr operator ["[" c|d|cd "]"] expr
/// expr       := keypath | "SELF"[.keypath] | $VAR[.keypath] | %K[.keypath] | %@ | %d | %f | literal
///             | "{" [expr ("," expr)*] "}" | "CAST" "(" literal "," string ")"
/// ```
/// `a AND b AND c` becomes one `.and([a, b, c])`; parentheses are kept as nesting, so printing a parsed
/// predicate and parsing it again gives back the same tree.
package struct PredicateParser {
    /// Nesting limit for parentheses, `NOT`s and aggregates, so hostile input cannot overflow the stack.
    package static let maxDepth = 256

    package let format: String
    package let tokens: [PredicateToken]
    package let arguments: [PredicateArgument]
    private var index = 0
    private var argumentIndex = 0
    private var depth = 0

    package init(format: String, arguments: [PredicateArgument]) throws(QueryError) {
        self.format = format
        self.tokens = try PredicateLexer(format).tokenize()
        self.arguments = arguments
    }

    /// Parses the whole format; anything left over, or unused arguments, is an error.
    package mutating func parse() throws(QueryError) -> FetchPredicate {
        let predicate = try parseOr()
        guard case .end = current.kind else {
            throw error(at: current, "expected AND, OR or the end of the predicate, found \(describe(current))")
        }
        if argumentIndex < arguments.count {
            throw QueryError.badArgument(
                format: format, position: current.position,
                reason: "\(arguments.count) arguments given but the format uses \(argumentIndex)")
        }
        return predicate
    }

    // MARK: - Token access

    private var current: PredicateToken { tokens[min(index, tokens.count - 1)] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func error(at token: PredicateToken, _ reason: String) -> QueryError {
        .syntax(format: format, position: token.position, reason: reason)
    }

    private func describe(_ token: PredicateToken) -> String {
        if case .end = token.kind { return "the end of the predicate" }
        return "'\(token.text)'"
    }

    private func isSymbol(_ symbol: PredicateSymbol) -> Bool { current.kind == .symbol(symbol) }

    private func isKeyword(_ keyword: PredicateKeyword) -> Bool { current.kind == .keyword(keyword) }

    private mutating func expect(_ symbol: PredicateSymbol, _ what: String) throws(QueryError) {
        guard isSymbol(symbol) else { throw error(at: current, "expected \(what), found \(describe(current))") }
        advance()
    }

    private mutating func nest() throws(QueryError) {
        depth += 1
        if depth > Self.maxDepth { throw error(at: current, "nested more than \(Self.maxDepth) levels deep") }
    }

    // MARK: - Logical operators

    private mutating func parseOr() throws(QueryError) -> FetchPredicate {
        var parts = [try parseAnd()]
        while isKeyword(.or) || isSymbol(.orOr) {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws(QueryError) -> FetchPredicate {
        var parts = [try parseNot()]
        while isKeyword(.and) || isSymbol(.andAnd) {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws(QueryError) -> FetchPredicate {
        if isKeyword(.not) || isSymbol(.bang) {
            advance()
            try nest()
            defer { depth -= 1 }
            return .not(try parseNot())
        }
        if isSymbol(.openParen) {
            advance()
            try nest()
            defer { depth -= 1 }
            let inner = try parseOr()
            try expect(.closeParen, "')'")
            return inner
        }
        if isKeyword(.truePredicate) { advance(); return .constant(true) }
        if isKeyword(.falsePredicate) { advance(); return .constant(false) }
        return .comparison(try parseComparison())
    }

    // MARK: - Comparisons

    private mutating func parseComparison() throws(QueryError) -> Comparison {
        var modifier = ComparisonModifier.direct
        if case .keyword(let k) = current.kind {
            switch k {
            case .any, .some: modifier = .any
            case .all: modifier = .all
            case .none: modifier = .none
            default: break
            }
            if modifier != .direct { advance() }
        }
        let left = try parseExpression()
        let op = try parseOperator()
        let options = try parseOptions()
        let rightToken = current
        let right = try parseExpression()
        if op == .between, case .list(let bounds) = right, bounds.count != 2 {
            let reason = "BETWEEN needs two bounds {low, high}, found \(bounds.count)"
            if case .argument = rightToken.kind { throw badArgument(rightToken, reason) }
            throw error(at: rightToken, reason)
        }
        return Comparison(left, op, right, options: options, modifier: modifier)
    }

    private mutating func parseOperator() throws(QueryError) -> ComparisonOperator {
        let token = current
        let op: ComparisonOperator
        switch token.kind {
        case .symbol(let s):
            switch s {
            case .equal, .assign: op = .equal
            case .notEqual, .notEqualAlt: op = .notEqual
            case .less: op = .less
            case .lessOrEqual, .lessOrEqualAlt: op = .lessOrEqual
            case .greater: op = .greater
            case .greaterOrEqual, .greaterOrEqualAlt: op = .greaterOrEqual
            default: throw error(at: token, "expected a comparison operator, found \(describe(token))")
            }
        case .keyword(let k):
            switch k {
            case .between: op = .between
            case .in: op = .in
            case .beginsWith: op = .beginsWith
            case .endsWith: op = .endsWith
            case .contains: op = .contains
            case .like: op = .like
            case .matches: throw error(at: token, "MATCHES (regular expressions) is not supported")
            default: throw error(at: token, "expected a comparison operator, found \(describe(token))")
            }
        default:
            throw error(at: token, "expected a comparison operator, found \(describe(token))")
        }
        advance()
        return op
    }

    /// `[c]`, `[d]`, `[cd]` (any order, case-insensitive letters) right after the operator.
    private mutating func parseOptions() throws(QueryError) -> ComparisonOptions {
        guard isSymbol(.openBracket) else { return [] }
        advance()
        let token = current
        guard case .identifier(let letters) = token.kind else {
            throw error(at: token, "expected comparison options c, d or cd, found \(describe(token))")
        }
        var options: ComparisonOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default: throw error(at: token, "unknown comparison option '\(letter)' (expected c, d or cd)")
            }
        }
        advance()
        try expect(.closeBracket, "']'")
        return options
    }

    // MARK: - Expressions

    private mutating func parseExpression() throws(QueryError) -> PredicateOperand {
        let token = current
        switch token.kind {
        case .identifier(let name):
            advance()
            return .keyPath(try parseKeyPathTail([name]))
        case .collectionOperator:
            advance()
            return .keyPath(try parseKeyPathTail([try collectionComponent(token)]))
        case .string(let s):
            advance()
            return .constant(.string(s))
        case .number(let text):
            advance()
            return .constant(try number(text, negative: false, token: token))
        case .symbol(.minus), .symbol(.plus):
            advance()
            guard case .number(let text) = current.kind else {
                throw error(at: current, "expected a number after '\(token.text)', found \(describe(current))")
            }
            let numberToken = current
            advance()
            return .constant(try number(text, negative: token.kind == .symbol(.minus), token: numberToken))
        case .symbol(.openBrace):
            return try parseAggregate()
        case .variable(let name):
            advance()
            return .variable(name, keyPath: try parseKeyPathTail([]))
        case .argument(let specifier):
            advance()
            return try argumentExpression(specifier, token: token)
        case .keyword(let k):
            return try parseKeywordExpression(k, token: token)
        case .symbol, .end:
            throw error(at: token, "expected an expression, found \(describe(token))")
        }
    }

    private mutating func parseKeywordExpression(
        _ keyword: PredicateKeyword, token: PredicateToken
    ) throws(QueryError) -> PredicateOperand {
        switch keyword {
        case .nil, .null: advance(); return .constant(.null)
        case .true, .yes: advance(); return .constant(.bool(true))
        case .false, .no: advance(); return .constant(.bool(false))
        case .self:
            advance()
            return .keyPath(try parseKeyPathTail([]))
        case .cast:
            return try parseCast()
        case .first, .last, .size, .anyKey:
            // Reserved by NSPredicate only for array subscripts, which Switchyard does not parse; as keys
            // they are common attribute names (`size > 100`), so read them as keys rather than fail.
            advance()
            return .keyPath(try parseKeyPathTail([token.text]))
        case .subquery, .function, .fetch, .matches:
            throw error(at: token, "\(token.text.uppercased()) is not supported")
        default:
            throw error(
                at: token,
                "expected an expression, found the reserved word \(describe(token)) (escape a key named so as #\(token.text))")
        }
    }

    /// `{a, b, c}`; `{}` is the empty list.
    private mutating func parseAggregate() throws(QueryError) -> PredicateOperand {
        advance()
        try nest()
        defer { depth -= 1 }
        var elements: [PredicateOperand] = []
        if isSymbol(.closeBrace) {
            advance()
            return .list(elements)
        }
        while true {
            elements.append(try parseExpression())
            if isSymbol(.closeBrace) {
                advance()
                return .list(elements)
            }
            try expect(.comma, "',' or '}'")
        }
    }

    // MARK: - Key paths

    /// The `.component` chain after a key path's first part (or after `SELF`, `$VAR`, `%K`).
    private mutating func parseKeyPathTail(_ start: [String]) throws(QueryError) -> [String] {
        var path = start
        while isSymbol(.dot) {
            if let last = path.last, last.hasPrefix("@") {
                throw error(at: current, "\(last) must be the last component of a key path")
            }
            advance()
            let token = current
            switch token.kind {
            case .identifier(let name): path.append(name)
            // After a dot a reserved word can only be a key, so `chat.in` needs no `#`.
            case .keyword: path.append(token.text)
            case .collectionOperator: path.append(try collectionComponent(token))
            default: throw error(at: token, "expected a key after '.', found \(describe(token))")
            }
            advance()
        }
        return path
    }

    /// Only `@count` is supported: the AST and the stores know how to count a to-many, not to sum it.
    private func collectionComponent(_ token: PredicateToken) throws(QueryError) -> String {
        guard case .collectionOperator(let name) = token.kind, name.lowercased() == "count" else {
            throw error(at: token, "collection operator \(token.text) is not supported (only @count)")
        }
        return "@count"
    }

    // MARK: - Literals

    /// A number literal, with the sign folded in before conversion so `-9223372036854775808` stays an integer.
    /// Decimal integers too large for Int64 become doubles, as NSNumber would hold them.
    private func number(_ text: String, negative: Bool, token: PredicateToken) throws(QueryError) -> AttributeValue {
        let lower = text.lowercased()
        let radix: Int? = lower.hasPrefix("0x") ? 16 : lower.hasPrefix("0o") ? 8 : lower.hasPrefix("0b") ? 2 : nil
        if let radix {
            guard let magnitude = UInt64(text.dropFirst(2), radix: radix) else {
                throw error(at: token, "invalid or out-of-range number '\(text)'")
            }
            if !negative, let value = Int64(exactly: magnitude) { return .integer(value) }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            throw error(at: token, "number '\(text)' does not fit in 64 bits")
        }
        let signed = negative ? "-" + text : text
        if !lower.contains("."), !lower.contains("e"), let value = Int64(signed) { return .integer(value) }
        guard let value = Double(signed) else { throw error(at: token, "invalid number '\(text)'") }
        return .double(value)
    }

    /// `CAST(value, "Class")`. NSPredicate's own casts are `NSDate` (from seconds since 2001), `NSNumber` and
    /// `NSString`; `NSDecimalNumber`, `NSUUID`, `NSURL` and `NSData` (base64) are Switchyard extensions so
    /// every `AttributeValue` has a spelling that `FetchPredicate.format` can print and this parser read back.
    private mutating func parseCast() throws(QueryError) -> PredicateOperand {
        advance()
        try expect(.openParen, "'(' after CAST")
        try nest()
        defer { depth -= 1 }
        let valueToken = current
        guard case .constant(let value) = try parseExpression() else {
            throw error(at: valueToken, "CAST needs a literal value")
        }
        try expect(.comma, "','")
        let typeToken = current
        guard case .string(let type) = typeToken.kind else {
            throw error(at: typeToken, "expected a class name string such as \"NSDate\", found \(describe(typeToken))")
        }
        advance()
        try expect(.closeParen, "')'")
        guard let result = Self.cast(value, to: type) else {
            throw error(at: typeToken, "cannot CAST \(value) to \(type)")
        }
        return .constant(result)
    }

    private static func cast(_ value: AttributeValue, to type: String) -> AttributeValue? {
        switch (type, value) {
        case ("NSDate", _):
            return value.numericValue.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case ("NSNumber", .string(let s)):
            if let i = Int64(s) { return .integer(i) }
            return Double(s).map { .double($0) }
        case ("NSNumber", .integer), ("NSNumber", .double), ("NSNumber", .bool), ("NSNumber", .decimal):
            return value
        case ("NSString", .string):
            return value
        case ("NSString", .integer(let i)):
            return .string(String(i))
        case ("NSString", .double(let d)):
            return .string(String(d))
        case ("NSDecimalNumber", .string(let s)):
            return Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case ("NSDecimalNumber", .integer(let i)):
            return .decimal(Decimal(i))
        case ("NSUUID", .string(let s)):
            return UUID(uuidString: s).map { .uuid($0) }
        case ("NSURL", .string(let s)):
            return URL(string: s).map { .uri($0) }
        case ("NSData", .string(let s)):
            return Data(base64Encoded: s).map { .binary($0) }
        default:
            return nil
        }
    }

    // MARK: - Arguments

    private mutating func argumentExpression(
        _ specifier: PredicateFormatSpecifier, token: PredicateToken
    ) throws(QueryError) -> PredicateOperand {
        guard argumentIndex < arguments.count else {
            throw badArgument(token, "no argument left for \(token.text) (\(arguments.count) given)")
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        switch (specifier, argument) {
        case (.object, .value(let v)):
            return .constant(v)
        case (.object, .list(let vs)):
            return .list(vs.map { .constant($0) })
        case (.object, .object(let id)):
            return .object(id)
        case (.object, .objects(let ids)):
            return .list(ids.map { .object($0) })
        case (.keyPath, .keyPath(let s)), (.keyPath, .value(.string(let s))):
            let path = try keyPath(from: s, token: token)
            return .keyPath(try parseKeyPathTail(path))
        case (.integer, .value(.integer(let i))):
            return .constant(.integer(i))
        case (.integer, .value(.bool(let b))):
            return .constant(.integer(b ? 1 : 0))
        case (.double, .value(.double(let d))):
            return .constant(.double(d))
        case (.double, .value(.integer(let i))):
            return .constant(.double(Double(i)))
        case (.double, .value(.decimal(let d))):
            return .constant(.double(NSDecimalNumber(decimal: d).doubleValue))
        case (.object, .keyPath(let s)):
            throw badArgument(token, "%@ takes a value, not the key path '\(s)'; use %K for key paths")
        case (.keyPath, _):
            throw badArgument(token, "%K takes a key path (a string), not \(argument)")
        case (.integer, _):
            throw badArgument(token, "\(token.text) takes an integer, not \(argument)")
        case (.double, _):
            throw badArgument(token, "\(token.text) takes a number, not \(argument)")
        }
    }

    /// Splits a `%K` argument on dots; an empty component or a collection operator other than a final
    /// `@count` is an argument error (the key path came from the caller, not the format).
    private func keyPath(from string: String, token: PredicateToken) throws(QueryError) -> [String] {
        let components = string.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (i, component) in components.enumerated() {
            if component.isEmpty { throw badArgument(token, "%K key path '\(string)' has an empty component") }
            if component.hasPrefix("@"), component.lowercased() != "@count" || i != components.count - 1 {
                throw badArgument(token, "%K key path '\(string)': only a final @count is supported")
            }
        }
        return components.map { $0.lowercased() == "@count" ? "@count" : $0 }
    }

    private func badArgument(_ token: PredicateToken, _ reason: String) -> QueryError {
        .badArgument(format: format, position: token.position, reason: reason)
    }
}

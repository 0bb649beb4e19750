import Foundation

// MARK: - Normalization for storage

extension AttributeValue {
    /// The value converted to the canonical case for `type`, so every backend stores and returns the same kind
    /// (`Boolean` -> `.bool`, integers -> `.integer`, `Double`/`Float` -> `.double`, ...); `nil` when the value
    /// cannot be stored in an attribute of that type (wrong kind, integer out of range).
    public func normalized(for type: AttributeType) -> AttributeValue? {
        if case .null = self { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            guard let i = integerValue, type.integerRange!.contains(i) else { return nil }
            if case .double = self { return .integer(i) }
            if case .bool = self { return nil }
            return .integer(i)
        case .boolean:
            switch self {
            case .bool: return self
            case .integer(let i) where i == 0 || i == 1: return .bool(i == 1)
            default: return nil
            }
        case .double, .float:
            switch self {
            case .double: return self
            case .integer(let i): return .double(Double(i))
            case .decimal(let d): return .double(NSDecimalNumber(decimal: d).doubleValue)
            default: return nil
            }
        case .decimal:
            switch self {
            case .decimal: return self
            case .integer(let i): return .decimal(Decimal(i))
            case .double(let d): return Decimal(string: String(d)).map { .decimal($0) }
            default: return nil
            }
        case .string:
            if case .string = self { return self }
            return nil
        case .date:
            if case .date = self { return self }
            return nil
        case .binary, .transformable:
            if case .binary = self { return self }
            return nil
        case .uuid:
            switch self {
            case .uuid: return self
            case .string(let s): return UUID(uuidString: s).map { .uuid($0) }
            case .binary(let d): return UUID(bytes: d).map { .uuid($0) }
            default: return nil
            }
        case .uri, .objectID:
            switch self {
            case .uri: return self
            case .string(let s): return URL(string: s).map { .uri($0) }
            default: return nil
            }
        case .undefined:
            return nil
        }
    }

    /// Normalizes for `attribute` or throws `StoreError.invalidValue` naming the store, its configuration, the
    /// entity and the attribute.
    public func normalized(
        for attribute: AttributeDescription, entity: String, path: String, configuration: String
    ) throws -> AttributeValue {
        guard let value = normalized(for: attribute.type) else {
            throw StoreError.invalidValue(
                path: path, configuration: configuration, entity: entity, attribute: attribute.name, value: "\(self) (\(kindName))",
                expected: attribute.type.rawValue)
        }
        return value
    }
}

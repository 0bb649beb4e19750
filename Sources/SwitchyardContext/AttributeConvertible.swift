import Foundation
import SwitchyardModel

// MARK: - AttributeConvertible

/// A Swift type that reads and writes attribute values: `try message.get("text", as: String.self)`.
public protocol AttributeConvertible {
    /// Builds the Swift value; `nil` when the stored value is of another kind.
    init?(attributeValue: AttributeValue)
    /// The stored form.
    var attributeValue: AttributeValue { get }
}

extension String: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .string(let s) = attributeValue else { return nil }
        self = s
    }
    @inlinable
    public var attributeValue: AttributeValue { .string(self) }
}

extension Bool: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let b) = attributeValue else { return nil }
        self = b
    }
    @inlinable
    public var attributeValue: AttributeValue { .bool(self) }
}

extension Double: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .double(let d): self = d
        case .integer(let i): self = Double(i)
        default: return nil
        }
    }
    @inlinable
    public var attributeValue: AttributeValue { .double(self) }
}

extension Float: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard let d = Double(attributeValue: attributeValue) else { return nil }
        self = Float(d)
    }
    @inlinable
    public var attributeValue: AttributeValue { .double(Double(self)) }
}

extension Date: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .date(let d) = attributeValue else { return nil }
        self = d
    }
    @inlinable
    public var attributeValue: AttributeValue { .date(self) }
}

extension Data: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .binary(let d) = attributeValue else { return nil }
        self = d
    }
    @inlinable
    public var attributeValue: AttributeValue { .binary(self) }
}

extension UUID: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let u) = attributeValue else { return nil }
        self = u
    }
    @inlinable
    public var attributeValue: AttributeValue { .uuid(self) }
}

extension URL: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .uri(let u) = attributeValue else { return nil }
        self = u
    }
    @inlinable
    public var attributeValue: AttributeValue { .uri(self) }
}

extension Decimal: AttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        switch attributeValue {
        case .decimal(let d): self = d
        case .integer(let i): self = Decimal(i)
        default: return nil
        }
    }
    @inlinable
    public var attributeValue: AttributeValue { .decimal(self) }
}

/// Integers of every width convert through Int64; a stored value out of the type's range reads as `nil`.
public protocol IntegerAttributeConvertible: AttributeConvertible, FixedWidthInteger {}

extension IntegerAttributeConvertible {
    @inlinable
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let i) = attributeValue, let v = Self(exactly: i) else { return nil }
        self = v
    }
    @inlinable
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int: IntegerAttributeConvertible {}
extension Int16: IntegerAttributeConvertible {}
extension Int32: IntegerAttributeConvertible {}
extension Int64: IntegerAttributeConvertible {}

import Foundation
import SwitchyardModel

extension AttributeValue {
    /// Normalizes for `attribute` or throws `StoreError.invalidValue` naming the store, its configuration, the
    /// entity and the attribute.
    public func normalized(
        for attribute: AttributeDescription, entity: String, path: String, configuration: String
    ) throws -> AttributeValue {
        guard let value = normalized(for: attribute.type) else {
            throw StoreError.invalidValue(
                path: path, configuration: configuration, entity: entity, attribute: attribute.name, value: "\(self) (\(kindName))",
                expected: storageRefusal(for: attribute.type).map { "\(attribute.type.rawValue) (\($0))" } ?? attribute.type.rawValue)
        }
        return value
    }
}

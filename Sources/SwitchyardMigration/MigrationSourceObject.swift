// MARK: - MigrationSourceObject
import SwitchyardContext
import SwitchyardModel
import SwitchyardStores

/// One row of the old store as a custom migration step reads it: attribute values and to-one targets by the
/// names the old version gives them.
public struct MigrationSourceObject: Sendable {
    /// The old version's name.
    public let versionName: String
    /// The old version's description of the row's entity.
    public let entity: EntityDescription
    package let row: StoreRow

    /// The row's entity and primary key in the old store (and, for rows a step keeps, in the new one).
    public var reference: RowReference { row.reference }
    /// The row's entity name in the old version.
    public var entityName: String { row.entityName }
    /// The row's primary key.
    public var primaryKey: Int64 { row.primaryKey }

    /// The value of attribute `name` (`.null` when unset); a name the entity lacks is an error.
    public func value(_ name: String) throws -> AttributeValue {
        guard entity.attribute(named: name) != nil else {
            throw MigrationError.unknownProperty(version: versionName, entity: entity.name, property: name)
        }
        return row[name]
    }

    /// The value of attribute `name` as `T`, nil when unset or of another kind.
    public func value<T: AttributeConvertible>(_ name: String, as type: T.Type) throws -> T? {
        T(attributeValue: try value(name))
    }

    /// The row to-one relationship `name` points at, nil when it points nowhere.
    public func related(_ name: String) throws -> RowReference? {
        guard let relationship = entity.relationship(named: name), !relationship.isToMany else {
            throw MigrationError.unknownProperty(version: versionName, entity: entity.name, property: name)
        }
        return row.toOne[name]
    }
}

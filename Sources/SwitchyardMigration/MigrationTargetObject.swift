// MARK: - MigrationTargetObject
import SwitchyardContext
import SwitchyardModel
import SwitchyardStores

/// One row of the new store as a custom migration step writes it. It arrives filled by the default copy; the
/// step's transform may change values, re-point to-one relationships, drop the row, or insert rows of other
/// entities.
public final class MigrationTargetObject {
    /// The new version's name.
    public let versionName: String
    /// The new version's description of the row's entity.
    public let entity: EntityDescription
    package var row: StoreRow
    /// Whether the transform dropped the row.
    public private(set) var isDropped = false
    /// The new version's model, for relationship destinations and inserted entities.
    package let model: ObjectModel
    /// Entities of the new version's configuration.
    package let served: Set<String>
    /// Reserves a primary key for a new row of an entity and queues the row for the batch's transaction.
    package let insertRow: (StoreRow) throws -> Void
    package let allocateKey: (String) throws -> Int64

    package init(
        versionName: String, entity: EntityDescription, row: StoreRow, model: ObjectModel, served: Set<String>,
        allocateKey: @escaping (String) throws -> Int64, insertRow: @escaping (StoreRow) throws -> Void
    ) {
        self.versionName = versionName
        self.entity = entity
        self.row = row
        self.model = model
        self.served = served
        self.allocateKey = allocateKey
        self.insertRow = insertRow
    }

    /// The row's entity and primary key in the new store.
    public var reference: RowReference { row.reference }

    /// The value of attribute `name` as it stands (`.null` when unset).
    public func value(_ name: String) throws -> AttributeValue {
        _ = try attribute(name)
        return row[name]
    }

    /// Sets attribute `name`; the value must fit the attribute's type in the new version.
    public func set(_ name: String, _ value: AttributeValue) throws {
        row.values[name] = try Self.normalized(value, for: try attribute(name), entity: entity.name, version: versionName)
    }

    /// Sets attribute `name` from a Swift value (`nil` clears it).
    public func set<T: AttributeConvertible>(_ name: String, _ value: T?) throws {
        try set(name, value?.attributeValue ?? .null)
    }

    /// Sets the attribute behind `keyPath` of the new version's typed entity (`try new.set(\Person.firstName, "Ada")`).
    public func set<E: EntityObject, Value: AttributeConvertible>(_ keyPath: KeyPath<E, Value>, _ value: Value) throws {
        try set(try typedName(keyPath), value)
    }

    /// Sets the optional attribute behind `keyPath` of the new version's typed entity (nil clears it).
    public func set<E: EntityObject, Value: AttributeConvertible>(_ keyPath: KeyPath<E, Value?>, _ value: Value?) throws {
        try set(try typedName(keyPath), value)
    }

    private func typedName<E: EntityObject>(_ keyPath: PartialKeyPath<E>) throws -> String {
        guard model.entity(entity.name, isKindOf: E.entityName) else {
            throw MigrationError.invalidValue(
                version: versionName, entity: entity.name, attribute: "\(keyPath)", value: "a key path of \(E.self)",
                expected: "a key path of a type for \(entity.name)")
        }
        return try E.name(of: keyPath)
    }

    /// The row to-one relationship `name` points at.
    public func related(_ name: String) throws -> RowReference? {
        _ = try toOne(name)
        return row.toOne[name]
    }

    /// Points to-one relationship `name` at `target` (a row of the new store: one the step keeps, under its old
    /// primary key, or one it inserted); nil clears it.
    public func setRelated(_ name: String, to target: RowReference?) throws {
        let relationship = try toOne(name)
        if let target {
            guard model.entity(target.entityName, isKindOf: relationship.destinationEntityName) else {
                throw MigrationError.invalidValue(
                    version: versionName, entity: entity.name, attribute: name, value: target.description,
                    expected: "a row of \(relationship.destinationEntityName)")
            }
        }
        row.toOne[name] = target
    }

    /// Leaves this row out of the new store. To-one relationships that pointed at it are cleared, and it is
    /// left out of links and orders.
    public func drop() {
        isDropped = true
    }

    /// Inserts a new row of `entityName` (an entity of the new version's configuration) with these values and
    /// to-one targets, and returns its reference so other rows can point at it.
    @discardableResult
    public func insert(
        _ entityName: String, values: [String: AttributeValue] = [:], related: [String: RowReference] = [:]
    ) throws -> RowReference {
        guard let target = model.entity(named: entityName), served.contains(entityName), !target.isAbstract else {
            throw MigrationError.unknownEntity(version: versionName, configuration: "of this store", entity: entityName)
        }
        var inserted = StoreRow(entityName: entityName, primaryKey: try allocateKey(entityName))
        for (name, value) in values {
            guard let attribute = target.attribute(named: name), !attribute.isTransient else {
                throw MigrationError.unknownProperty(version: versionName, entity: entityName, property: name)
            }
            inserted.values[name] = try Self.normalized(value, for: attribute, entity: entityName, version: versionName)
        }
        for (name, reference) in related {
            guard let relationship = target.relationship(named: name), !relationship.isToMany, !relationship.isTransient else {
                throw MigrationError.unknownProperty(version: versionName, entity: entityName, property: name)
            }
            guard model.entity(reference.entityName, isKindOf: relationship.destinationEntityName) else {
                throw MigrationError.invalidValue(
                    version: versionName, entity: entityName, attribute: name, value: reference.description,
                    expected: "a row of \(relationship.destinationEntityName)")
            }
            inserted.toOne[name] = reference
        }
        try insertRow(inserted)
        return inserted.reference
    }

    // MARK: - Private

    private func attribute(_ name: String) throws -> AttributeDescription {
        guard let attribute = entity.attribute(named: name), !attribute.isTransient else {
            throw MigrationError.unknownProperty(version: versionName, entity: entity.name, property: name)
        }
        return attribute
    }

    private func toOne(_ name: String) throws -> RelationshipDescription {
        guard let relationship = entity.relationship(named: name), !relationship.isToMany, !relationship.isTransient else {
            throw MigrationError.unknownProperty(version: versionName, entity: entity.name, property: name)
        }
        return relationship
    }

    package static func normalized(_ value: AttributeValue, for attribute: AttributeDescription, entity: String, version: String) throws -> AttributeValue {
        if value.isNull { return .null }
        guard let normalized = value.normalized(for: attribute.type) else {
            throw MigrationError.invalidValue(
                version: version, entity: entity, attribute: attribute.name, value: "\(value) (\(value.kindName))",
                expected: value.storageRefusal(for: attribute.type).map { "\(attribute.type.rawValue) (\($0))" } ?? attribute.type.rawValue)
        }
        return normalized
    }
}

@available(*, unavailable)
extension MigrationTargetObject: Sendable {}

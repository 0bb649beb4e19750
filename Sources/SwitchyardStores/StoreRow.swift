// MARK: - StoreRow
import SwitchyardModel

/// One object's persistent state as a store holds it: entity, primary key (`Z_PK`), optimistic-lock version
/// (`Z_OPT`), attribute values and to-one references.
public struct StoreRow: Sendable, Hashable {
    /// The row's concrete entity (its `Z_ENT`).
    public var entityName: String
    /// The row's primary key (`Z_PK`).
    public var primaryKey: Int64
    /// `Z_OPT`: 1 after insert, incremented by every update.
    public var version: Int64
    /// Persistent attribute values by attribute name; an absent key reads as `.null`.
    package var values: RowValues
    /// To-one relationship targets by relationship name; an absent key is a nil relationship.
    public var toOne: [String: RowReference]

    package init(
        entityName: String, primaryKey: Int64, version: Int64 = 1, values: RowValues = [:],
        toOne: [String: RowReference] = [:]
    ) {
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.version = version
        self.values = values
        self.toOne = toOne
    }

    /// A row whose values come from a dictionary (null entries are dropped).
    public init(
        entityName: String, primaryKey: Int64, version: Int64 = 1, values: [String: AttributeValue],
        toOne: [String: RowReference] = [:]
    ) {
        self.init(entityName: entityName, primaryKey: primaryKey, version: version, values: RowValues(values), toOne: toOne)
    }

    /// The value of `attribute`, `.null` when unset.
    public subscript(attribute: String) -> AttributeValue {
        values[attribute] ?? .null
    }

    /// This row as a reference.
    public var reference: RowReference { RowReference(entityName: entityName, primaryKey: primaryKey) }
}

/// Identifies a row inside one store: concrete entity and primary key.
public struct RowReference: Sendable, Hashable, CustomStringConvertible {
    /// The row's concrete entity.
    public var entityName: String
    /// The row's primary key (`Z_PK`).
    public var primaryKey: Int64

    /// A reference to the row `primaryKey` of `entityName`.
    public init(entityName: String, primaryKey: Int64) {
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    public var description: String { "\(entityName)/p\(primaryKey)" }
}

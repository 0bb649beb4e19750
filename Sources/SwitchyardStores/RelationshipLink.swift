// MARK: - RelationshipLink
import SwitchyardModel

/// One member of a many-to-many relationship or of a to-many without inverse: `source`'s `relationship`
/// contains `destination` (for a many-to-many, the inverse of `destination` then contains `source`). A store
/// keeps each link once, whichever end names it.
public struct RelationshipLink: Sendable, Hashable {
    /// The row whose relationship holds `destination`.
    public var source: RowReference
    /// A many-to-many relationship, or a to-many without inverse, of `source`'s entity.
    public var relationship: String
    /// The member row.
    public var destination: RowReference

    /// A link from `source` through `relationship` to `destination`.
    public init(source: RowReference, relationship: String, destination: RowReference) {
        self.source = source
        self.relationship = relationship
        self.destination = destination
    }
}

extension RelationshipLink {
    /// The declaring end of the link's relationship when it is a to-many without inverse, after checking the
    /// member is of its destination entity (`StoreError.unknownProperty` naming the store otherwise); nil for
    /// any other relationship.
    package func endWithoutInverse(in model: ObjectModel, path: String, configuration: String) throws -> RelationshipEnd? {
        guard let end = model.end(of: relationship, from: source.entityName), model.isToManyWithoutInverse(end.relationship)
        else { return nil }
        guard model.entity(destination.entityName, isKindOf: end.relationship.destinationEntityName) else {
            throw StoreError.unknownProperty(
                path: path, configuration: configuration, entity: destination.entityName,
                property: "\(end.key) (its destination is \(end.relationship.destinationEntityName))")
        }
        return end
    }
}

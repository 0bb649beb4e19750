// MARK: - RelationshipLink

/// One member of a many-to-many relationship: `source`'s `relationship` contains `destination` (and so the
/// inverse of `destination` contains `source`). A store keeps each link once, whichever end names it.
public struct RelationshipLink: Sendable, Hashable {
    /// The row whose relationship holds `destination`.
    public var source: RowReference
    /// A many-to-many relationship of `source`'s entity.
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

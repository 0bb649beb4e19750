// MARK: - RelationshipLink

/// One member of a many-to-many relationship: `source`'s `relationship` contains `destination` (and so the
/// inverse of `destination` contains `source`). A store keeps each link once, whichever end names it.
public struct RelationshipLink: Sendable, Hashable {
    public var source: RowReference
    /// A many-to-many relationship of `source`'s entity.
    public var relationship: String
    public var destination: RowReference

    public init(source: RowReference, relationship: String, destination: RowReference) {
        self.source = source
        self.relationship = relationship
        self.destination = destination
    }
}

// MARK: - RelationshipOrder

/// The order of an ordered to-many relationship of `source`: `members` first to last. Members not in the
/// relationship after the save are ignored; members left out keep no position and read after the others.
public struct RelationshipOrder: Sendable, Hashable {
    public var source: RowReference
    public var relationship: String
    public var members: [RowReference]

    public init(source: RowReference, relationship: String, members: [RowReference]) {
        self.source = source
        self.relationship = relationship
        self.members = members
    }
}

// MARK: - Member ordering

enum RelationshipMembers {
    /// `members` in stored order: those with a position by position, then the rest by primary key.
    static func sorted(_ members: [RowReference], positions: [Int64: Int64]) -> [RowReference] {
        members.sorted { a, b in
            switch (positions[a.primaryKey], positions[b.primaryKey]) {
            case let (x?, y?): return x != y ? x < y : a.primaryKey < b.primaryKey
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.primaryKey < b.primaryKey
            }
        }
    }
}

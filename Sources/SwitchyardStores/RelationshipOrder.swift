// MARK: - RelationshipOrder

/// The order of an ordered to-many relationship of `source`: `members` first to last. Members not in the
/// relationship after the save are ignored; members left out keep no position and read after the others.
public struct RelationshipOrder: Sendable, Hashable {
    /// The row whose relationship is ordered.
    public var source: RowReference
    /// An ordered to-many relationship of `source`'s entity.
    public var relationship: String
    /// The members, first to last.
    public var members: [RowReference]

    /// The order of `source`'s `relationship`.
    public init(source: RowReference, relationship: String, members: [RowReference]) {
        self.source = source
        self.relationship = relationship
        self.members = members
    }
}

// MARK: - Member ordering

/// Sorting members by stored position, the same way on every backend that keeps positions apart from rows.
package enum RelationshipMembers {
    /// `members` in stored order: those with a position by position, then the rest by primary key.
    package static func sorted(_ members: [RowReference], positions: [Int64: Int64]) -> [RowReference] {
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

// MARK: - DeleteRule

/// What deleting the source object does to the objects at the other end.
public enum DeleteRule: String, Sendable, Hashable, Codable {
    /// Deleting the source clears the relationship on the destinations.
    case nullify = "Nullify"
    /// Deleting the source deletes the destinations.
    case cascade = "Cascade"
    /// The source cannot be deleted while it has destinations.
    case deny = "Deny"
    /// Nothing happens to the destinations (their inverse is left pointing at the deleted object).
    case noAction = "No Action"
}

// MARK: - RelationshipDescription

/// A relationship from one entity to another inside the same store.
///
/// ```swift
/// let chat = RelationshipDescription(name: "chat", destination: "Chat", inverse: "messages")
/// let messages = RelationshipDescription(name: "messages", destination: "Message", inverse: "chat", isToMany: true)
/// ```
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name.
    public var name: String
    /// Name of the destination entity.
    public var destinationEntityName: String
    /// Name of the inverse relationship on the destination entity, if any.
    public var inverseName: String?
    /// A to-many relationship (otherwise to-one).
    public var isToMany: Bool
    /// Ordered to-many (Core Data's `NSOrderedSet`).
    public var isOrdered: Bool
    /// Minimum count (0 = none); for a to-one, 1 means required.
    public var minCount: Int
    /// Maximum count (0 = unbounded). A to-one has 1.
    public var maxCount: Int
    /// What deleting the source does to the destinations.
    public var deleteRule: DeleteRule
    /// Whether the relationship may be empty at save.
    public var isOptional: Bool
    /// A transient relationship is never stored.
    public var isTransient: Bool
    /// Renaming identifier (`elementID`): the former name. `storesplit` also matches a crossing relationship by it.
    public var renamingIdentifier: String?
    /// Changes the version hash without another change.
    public var versionHashModifier: String?
    /// The model file's user info for the relationship.
    public var userInfo: [String: String]

    /// Creates a relationship; a to-one unless `isToMany` is set.
    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false, isOrdered: Bool = false,
        minCount: Int = 0, maxCount: Int? = nil, deleteRule: DeleteRule = .nullify, isOptional: Bool = true,
        isTransient: Bool = false, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

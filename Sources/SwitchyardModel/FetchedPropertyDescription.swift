// MARK: - FetchedPropertyDescription

/// A lazily evaluated fetch that finds objects of another entity, possibly in another store.
///
/// ```swift
/// let preview = FetchedPropertyDescription(
///     name: "preview", destination: "LinkPreview", predicate: "url == $FETCH_SOURCE.link")
/// ```
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The fetched property's name.
    public var name: String
    /// Name of the entity the fetch looks for.
    public var destinationEntityName: String
    /// The predicate in NSPredicate format; `$FETCH_SOURCE` is the object the property belongs to.
    public var predicateFormat: String
    /// The name the property had in an earlier model version, for migration.
    public var renamingIdentifier: String?
    /// Changes the version hash without another change.
    public var versionHashModifier: String?
    /// The model file's user info for the property.
    public var userInfo: [String: String]

    /// Creates a fetched property from its destination and predicate format.
    public init(
        name: String, destination: String, predicate: String, renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.predicateFormat = predicate
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

// MARK: - IndexDescription

/// A fetch index (Xcode's `fetchIndex`): named, over one or more properties.
public struct IndexDescription: Sendable, Hashable {
    /// One property of an index and its order.
    public struct Element: Sendable, Hashable {
        /// The attribute an index element covers.
        public var property: String
        /// Whether the element is in ascending order.
        public var ascending: Bool
        /// An index element on `property`.
        public init(property: String, ascending: Bool = true) {
            self.property = property
            self.ascending = ascending
        }
    }
    /// The index's name (the SQLite index is named after it).
    public var name: String
    /// The attributes the index covers, in order.
    public var elements: [Element]

    /// Creates an index over `properties`, all ascending.
    public init(name: String, properties: [String]) {
        self.name = name
        self.elements = properties.map { Element(property: $0) }
    }

    /// An index `name` over `elements`.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}

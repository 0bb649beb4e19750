// MARK: - AttributeDescription

/// One attribute of an entity, as the model declares it.
///
/// ```swift
/// var title = AttributeDescription(name: "title", type: .string)
/// title.isOptional = false
/// title.defaultValue = "Untitled"
/// ```
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name (also its key in `ManagedObject` and its `Z<NAME>` column in SQLite).
    public var name: String
    /// The storage type.
    public var type: AttributeType
    /// `false` means a save without a value (and without a default) fails validation.
    public var isOptional: Bool
    /// Transient attributes live on objects only; no store holds them.
    public var isTransient: Bool
    /// The value a newly inserted object starts with.
    public var defaultValue: AttributeValue?
    /// The renaming identifier (`elementID` in Xcode's XML): the attribute's former name for migration.
    public var renamingIdentifier: String?
    /// Changes the version hash without changing the structure, as Core Data's `versionHashModifier` does.
    public var versionHashModifier: String?
    /// Free-form key/value pairs from the model (`storesplit.key` is read from here).
    public var userInfo: [String: String]
    /// Legacy per-attribute index flag (`indexed="YES"`).
    public var isIndexed: Bool
    /// Xcode's "Allows External Storage"; kept for round-tripping, stored inline here.
    public var allowsExternalBinaryDataStorage: Bool
    /// A derived attribute's expression (for example `photos.@count`); kept, not evaluated.
    public var derivationExpression: String?
    /// The value transformer of a Transformable attribute; kept for round-tripping.
    public var valueTransformerName: String?

    /// Creates an attribute; every flag not named takes Core Data's default (optional, persistent, no default).
    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: AttributeValue? = nil, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:], isIndexed: Bool = false, allowsExternalBinaryDataStorage: Bool = false,
        derivationExpression: String? = nil, valueTransformerName: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.isIndexed = isIndexed
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.derivationExpression = derivationExpression
        self.valueTransformerName = valueTransformerName
    }
}

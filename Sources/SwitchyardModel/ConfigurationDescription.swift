// MARK: - ConfigurationDescription

/// A named subset of a model's entities: the entities one store holds.
///
/// ```swift
/// let cloud = ConfigurationDescription(name: "Cloud", entityNames: ["Account", "Chat", "Message"])
/// ```
public struct ConfigurationDescription: Sendable, Hashable {
    /// The name Core Data uses for the configuration that holds every entity.
    public static let defaultName = "Default"

    public var name: String
    public var entityNames: [String]
    /// Free-form flags from the model (for example Xcode's `usedWithCloudKit`), kept for round-tripping.
    public var userInfo: [String: String]

    public init(name: String, entityNames: [String], userInfo: [String: String] = [:]) {
        self.name = name
        self.entityNames = entityNames
        self.userInfo = userInfo
    }
}

// MARK: - ConfigurationDescription

/// A named subset of a model's entities: the entities one store holds.
///
/// ```swift
/// let cloud = ConfigurationDescription(name: "Cloud", entityNames: ["Account", "Chat", "Message"])
/// ```
public struct ConfigurationDescription: Sendable, Hashable {
    /// The name Core Data uses for the configuration that holds every entity.
    public static let defaultName = "Default"

    /// The configuration's name, which stores are added under.
    public var name: String
    /// The entities a store of this configuration holds.
    public var entityNames: [String]
    /// Free-form flags from the model (for example Xcode's `usedWithCloudKit`), kept for round-tripping.
    public var userInfo: [String: String]

    /// A configuration `name` holding `entityNames`, with optional user info.
    public init(name: String, entityNames: [String], userInfo: [String: String] = [:]) {
        self.name = name
        self.entityNames = entityNames
        self.userInfo = userInfo
    }
}

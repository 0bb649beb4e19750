// MARK: - ModelVersion
import SwitchyardModel

/// One named version of a model: an `.xcdatamodel` of a versioned bundle, or a model built in code.
public struct ModelVersion: Sendable {
    /// The version's name ("Messenger 2"); a `MigrationChain` names its steps by it.
    public var name: String
    /// The model of this version.
    public var model: ObjectModel

    /// A version named `name`.
    public init(name: String, model: ObjectModel) {
        self.name = name
        self.model = model
    }
}

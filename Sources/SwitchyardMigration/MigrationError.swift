import Foundation

// MARK: - MigrationError

/// Why a migration chain or one of its custom steps cannot run. Each case names the version, entity and
/// property at fault; `stepFailed` also names the store.
public enum MigrationError: Error, Sendable, Hashable, LocalizedError {
    /// A chain needs at least one version, and every version a distinct name.
    case invalidChain(reason: String)
    /// The chain's last version is not the coordinator's model.
    case chainDoesNotEndAtModel(lastVersion: String, reason: String)
    /// No version of the chain has this name.
    case unknownVersion(name: String, available: [String])
    /// An entity named by a custom step is not in that version's configuration.
    case unknownEntity(version: String, configuration: String, entity: String)
    /// A custom step read or wrote a property that the entity does not have in that version.
    case unknownProperty(version: String, entity: String, property: String)
    /// A custom step wrote a value the attribute cannot hold.
    case invalidValue(version: String, entity: String, attribute: String, value: String, expected: String)
    /// A non-optional attribute or to-one relationship has no value after the step.
    case missingValue(version: String, entity: String, property: String, primaryKey: Int64)
    /// Rows of several inheritance hierarchies would land in one hierarchy, whose primary keys could collide.
    case conflictingKeys(version: String, entity: String, sources: [String])
    /// A step failed on a store; the store is left at the version it had before the step.
    case stepFailed(path: String, configuration: String, from: String, to: String, reason: String)

    public var errorDescription: String? {
        switch self {
        case let .invalidChain(reason):
            return "invalid migration chain: \(reason)"
        case let .chainDoesNotEndAtModel(last, reason):
            return "the migration chain ends at version \(last), which is not the coordinator's model: \(reason)"
        case let .unknownVersion(name, available):
            return "no model version named \(name) in the migration chain (versions: \(available.joined(separator: ", ")))"
        case let .unknownEntity(version, configuration, entity):
            return "custom migration step to \(version): entity \(entity) is not in configuration \(configuration) of that version"
        case let .unknownProperty(version, entity, property):
            return "custom migration step (version \(version)): entity \(entity) has no property \(property)"
        case let .invalidValue(version, entity, attribute, value, expected):
            return "custom migration step to \(version): \(entity).\(attribute) cannot hold \(value); expected \(expected)"
        case let .missingValue(version, entity, property, primaryKey):
            return "custom migration step to \(version): \(entity) p\(primaryKey) has no value for non-optional \(property)"
        case let .conflictingKeys(version, entity, sources):
            return "custom migration step to \(version): entity \(entity) would take rows of several inheritance hierarchies "
                + "(\(sources.joined(separator: ", "))) whose primary keys can collide"
        case let .stepFailed(path, configuration, from, to, reason):
            return "migrating \(path) (configuration \(configuration)) from \(from) to \(to) failed, the store is left at \(from): \(reason)"
        }
    }
}

import Foundation
import SwitchyardModel
import SwitchyardModelFiles

// MARK: - MigrationChain

/// The versions a store may have been written with, oldest first, and how to go from each to the next.
///
/// When a store opens, the coordinator finds the version that wrote it (from its version hashes, else its
/// model cache) and runs every later step in turn: V1 → V2 → V3. A step is inferred (the same in-place migration
/// a single model change gets) unless a `CustomMigration` is set for it. Each step is atomic: a process killed
/// during a step leaves the store at the version before it, and the next open continues from there.
///
/// ```swift
/// var chain = try MigrationChain(versions: ModelLoader.loadVersions(ofBundle: bundleURL))
/// var split = CustomMigration()
/// split.transform("Person") { old, new in
///     let parts = try old.value("name", as: String.self)?.split(separator: " ") ?? []
///     try new.set("firstName", parts.first.map(String.init))
///     try new.set("lastName", parts.dropFirst().joined(separator: " "))
/// }
/// try chain.setCustomStep(to: "Model 3", split)
/// try coordinator.setMigrationChain(chain)
/// try coordinator.addStore(.sqlite, configuration: "Cloud", at: url)   // migrates V1 → V2 → V3
/// ```
public struct MigrationChain: Sendable {
    /// The versions, oldest first; the last is the model the coordinator opens stores with.
    public let versions: [ModelVersion]
    /// Custom steps by the name of the version they lead to.
    package private(set) var customSteps: [String: CustomMigration] = [:]

    /// A chain through `versions`, oldest first, every step inferred until `setCustomStep` says otherwise.
    public init(versions: [ModelVersion]) throws {
        guard !versions.isEmpty else { throw MigrationError.invalidChain(reason: "a chain needs at least one version") }
        var seen = Set<String>()
        for version in versions where !seen.insert(version.name).inserted {
            throw MigrationError.invalidChain(reason: "two versions are named \(version.name)")
        }
        self.versions = versions
    }

    /// The version the chain ends at.
    public var current: ModelVersion { versions[versions.count - 1] }

    /// Makes the step that leads to version `name` (from the version before it) run `step` instead of an
    /// inferred migration.
    public mutating func setCustomStep(to name: String, _ step: CustomMigration) throws {
        guard let index = versions.firstIndex(where: { $0.name == name }) else {
            throw MigrationError.unknownVersion(name: name, available: versions.map(\.name))
        }
        guard index > 0 else {
            throw MigrationError.invalidChain(reason: "version \(name) is the first of the chain: no step leads to it")
        }
        customSteps[name] = step
    }

    /// The custom step that leads to version `name`, if one is set.
    public func customStep(to name: String) -> CustomMigration? { customSteps[name] }

    /// The index of the version that wrote a store with these version hashes and model cache, for one
    /// configuration: equal hashes first, else a cached model identical to the version's configuration.
    package func versionIndex(hashes: [String: Data], storedModel: ObjectModel?, configuration: String) -> Int? {
        if let i = versions.lastIndex(where: { $0.model.versionHashes == hashes }) { return i }
        guard let storedModel else { return nil }
        return versions.lastIndex { version in
            guard version.model.configurationNames.contains(configuration) else { return false }
            return ModelDiff.compare(from: storedModel, to: version.model, configuration: configuration).verdict == .identical
        }
    }
}

import Foundation
import SwitchyardModel

// MARK: - ServerStoreOpeners

/// How a store kind that lives in a product of its own (PostgreSQL) opens. That product registers its opener
/// when it is first used (`StoreCoordinator.registerPostgreSQL()`), so the layers that open stores by
/// description — the coordinator, the split and inspection tools — never link it.
package enum ServerStoreOpeners {
    /// Opens the store at `url` for `configuration` of `model` with `options`, migrating it with `progress`.
    package typealias Opener = @Sendable (
        _ url: URL, _ model: ObjectModel, _ configuration: String, _ options: StoreOptions, _ progress: MigrationProgressHandler?
    ) throws -> any PersistentStore

    package static let registry = Locked<[StoreType: Opener]>([:])

    /// The opener of `type`, or `StoreError.openFailed` saying which product to import.
    package static func opener(for type: StoreType, url: URL, configuration: String) throws -> Opener {
        guard let opener = registry.withLock({ $0[type] }) else {
            throw StoreError.openFailed(
                path: StoreDescription.displayLocation(type: type, url: url, configuration: configuration), configuration: configuration,
                reason: "\(type.rawValue) stores come with the Switchyard\(type.rawValue) product: import it and call "
                    + "StoreCoordinator.register\(type.rawValue)() (addStore(.\(type == .postgreSQL ? "postgreSQL" : type.rawValue), configuration:, url:) does)")
        }
        return opener
    }
}

/// A store that records which configuration it was created for (LMDB, PostgreSQL), so a tool opening it without
/// knowing can open it as that configuration.
package protocol ConfigurationRecordingStore: PersistentStore {
    /// The configuration the store was created for; nil when it does not say.
    var createdConfiguration: String? { get }
}

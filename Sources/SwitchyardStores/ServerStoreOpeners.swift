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

    /// How the split tool finds, replaces and removes stores of the kind, by store type (registered with the
    /// opener).
    package static let locations = Locked<[StoreType: ServerStoreLocations]>([:])

    /// The registered locations of `type`, or the same error as a missing opener.
    package static func locations(for type: StoreType, url: URL, configuration: String) throws -> ServerStoreLocations {
        _ = try opener(for: type, url: url, configuration: configuration)
        guard let found = locations.withLock({ $0[type] }) else {
            throw StoreError.openFailed(
                path: StoreDescription.displayLocation(type: type, url: url, configuration: configuration), configuration: configuration,
                reason: "\(type.rawValue) stores registered no way to replace a store")
        }
        return found
    }

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

/// What writing a whole store under a temporary name and then putting it in place needs of a server store kind:
/// the split tool's equivalent of a file's existence, `rename(2)` and removal. Each connects with the store's
/// options (TLS), as opening the store does.
package struct ServerStoreLocations: Sendable {
    /// Whether a store is at the URL.
    package var exists: @Sendable (_ url: URL, _ options: StoreOptions) throws -> Bool
    /// Removes the store at the URL, if any.
    package var remove: @Sendable (_ url: URL, _ options: StoreOptions) throws -> Void
    /// Replaces whatever store is at `final` with the one at `temporary`, in one transaction.
    package var replace: @Sendable (_ final: URL, _ temporary: URL, _ options: StoreOptions) throws -> Void

    /// A store's sibling location for one being written in its place: for PostgreSQL, the same database with
    /// `suffix` added to the schema's name (the name cut so the whole stays within PostgreSQL's 63 bytes).
    package static func sibling(of url: URL, type: StoreType, suffix: String) -> URL {
        precondition(type == .postgreSQL, "sibling(of:) is for server stores")
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        let schema = parts.queryItems?.first { $0.name.lowercased() == "schema" }?.value ?? "public"
        var cut = ""
        for scalar in schema.unicodeScalars where cut.utf8.count + String(scalar).utf8.count + suffix.utf8.count <= 63 {
            cut.unicodeScalars.append(scalar)
        }
        parts.queryItems = (parts.queryItems ?? []).filter { $0.name.lowercased() != "schema" } + [URLQueryItem(name: "schema", value: cut + suffix)]
        return parts.url ?? url
    }

    package init(
        exists: @escaping @Sendable (URL, StoreOptions) throws -> Bool, remove: @escaping @Sendable (URL, StoreOptions) throws -> Void,
        replace: @escaping @Sendable (URL, URL, StoreOptions) throws -> Void
    ) {
        self.exists = exists
        self.remove = remove
        self.replace = replace
    }
}

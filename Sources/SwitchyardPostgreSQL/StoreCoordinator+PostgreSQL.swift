import Foundation
import SwitchyardCoordinator
import SwitchyardModel
import SwitchyardStores

// MARK: - Adding a PostgreSQL store

extension StoreCoordinator {
    /// Opens (or creates) the PostgreSQL store at `url` for `configuration` and adds it: the same model, context
    /// API and tools as the embedded stores, for the configuration several processes or machines share.
    ///
    /// ```swift
    /// import Switchyard
    /// import SwitchyardPostgreSQL
    ///
    /// try coordinator.addStore(.sqlite, configuration: "Local", at: dir.appendingPathComponent("Local.sqlite"))
    /// try coordinator.addStore(.postgreSQL, configuration: "Cloud",
    ///                          url: URL(string: "postgres://app@db.internal/switchyard?schema=cloud&sslmode=require")!)
    /// ```
    ///
    /// The URL is libpq's: `postgres://user[:password]@host[:port]/database`, with the query parameters `schema`
    /// (default `public`), `sslmode` (`disable`, `prefer` — unverified TLS when offered —, `require` — verified
    /// TLS always), `sslrootcert` (a PEM file of trusted roots), `pool_size` (default 4) and `connect_timeout`
    /// (seconds, default 10). `StoreOptions/connectionPoolSize` and `StoreOptions/tls` win over the URL's.
    /// Errors, logs and traces show it without the password.
    ///
    /// After this call the coordinator also reopens PostgreSQL stores by description (`addStore(_:)` with a
    /// `StoreDescription` of type `.postgreSQL`).
    @discardableResult
    public func addStore(
        _ type: StoreType, configuration: String, url: URL, options: StoreOptions = .default
    ) throws -> any PersistentStore {
        if type == .postgreSQL { Self.registerPostgreSQL() }
        return try addStore(StoreDescription(type, configuration: configuration, url: url, options: options))
    }

    /// Lets the coordinator open PostgreSQL stores from a `StoreDescription` (what `addStore(_:configuration:url:options:)`
    /// does first), and the split and inspection tools open them by URL; call it before `loadStores` or
    /// `addStore(_:)` with PostgreSQL descriptions.
    public static func registerPostgreSQL() {
        ServerStoreOpeners.registry.withLock { openers in
            openers[.postgreSQL] = { url, model, configuration, options, progress in
                try PostgreSQLStore(url: url, model: model, configuration: configuration, options: options, migrationProgress: progress)
            }
        }
        ServerStoreOpeners.locations.withLock { locations in
            locations[.postgreSQL] = PostgreSQLStore.locations
        }
    }
}

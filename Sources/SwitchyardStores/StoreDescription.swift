import Foundation

// MARK: - StoreDescription

/// Describes a store to load: its type, configuration, location and options.
///
/// ```swift
/// let cloud = StoreDescription(.sqlite, configuration: "Cloud", url: dir.appendingPathComponent("Cloud.sqlite"))
/// ```
public struct StoreDescription: Sendable, Hashable {
    /// The kind of store.
    public var type: StoreType
    /// The configuration whose entities the store holds.
    public var configuration: String
    /// The store's file (SQLite) or directory (LMDB); nil for memory.
    public var url: URL?
    /// How the store opens (read-only, disposable, ...).
    public var options: StoreOptions

    /// Where the store is, for messages: its path, `memory:<configuration>`, or for PostgreSQL its URL without
    /// the password (credentials never appear in errors or logs).
    public var displayLocation: String { Self.displayLocation(type: type, url: url, configuration: configuration) }

    /// The one place that spells a store's location for messages (see `displayLocation`).
    package static func displayLocation(type: StoreType, url: URL?, configuration: String) -> String {
        guard let url else { return "memory:\(configuration)" }
        guard type == .postgreSQL else { return url.path }
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "postgres://(unreadable URL)" }
        parts.password = nil
        parts.queryItems = parts.queryItems?.filter { $0.name.lowercased() != "password" }
        if parts.queryItems?.isEmpty == true { parts.queryItems = nil }
        return parts.string ?? "postgres://(unreadable URL)"
    }

    /// A store of `type` for `configuration`, at `url` (none for memory), opened with `options`.
    public init(_ type: StoreType, configuration: String, url: URL? = nil, options: StoreOptions = .default) {
        self.type = type
        self.configuration = configuration
        self.url = url
        self.options = options
    }
}

extension StoreDescription: CustomStringConvertible, CustomDebugStringConvertible {
    /// The description without a PostgreSQL URL's password (see `displayLocation`).
    public var description: String {
        "StoreDescription(\(type.rawValue), configuration: \(configuration), at: \(displayLocation), options: \(options))"
    }

    /// The same as `description`: printing a description never shows a password.
    public var debugDescription: String { description }
}

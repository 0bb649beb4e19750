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

    /// A store of `type` for `configuration`, at `url` (none for memory), opened with `options`.
    public init(_ type: StoreType, configuration: String, url: URL? = nil, options: StoreOptions = .default) {
        self.type = type
        self.configuration = configuration
        self.url = url
        self.options = options
    }
}

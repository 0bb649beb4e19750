import Foundation

// MARK: - StoreDescription

/// Describes a store to load: its type, configuration, location and options.
///
/// ```swift
/// let cloud = StoreDescription(.sqlite, configuration: "Cloud", url: dir.appendingPathComponent("Cloud.sqlite"))
/// ```
public struct StoreDescription: Sendable, Hashable {
    public var type: StoreType
    public var configuration: String
    /// The store's file (SQLite) or directory (LMDB); nil for memory.
    public var url: URL?
    public var options: StoreOptions

    public init(_ type: StoreType, configuration: String, url: URL? = nil, options: StoreOptions = .default) {
        self.type = type
        self.configuration = configuration
        self.url = url
        self.options = options
    }
}

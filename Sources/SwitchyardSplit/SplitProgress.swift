// MARK: - SplitProgress

/// Where a running split is: the entity being copied and the totals.
public struct SplitProgress: Sendable, Hashable {
    /// The target entity being copied.
    public var entity: String
    /// The target model configuration this store receives.
    public var configuration: String
    /// Rows of this entity copied so far.
    public var entityRowsCopied: Int
    /// Rows of this entity in the source.
    public var entityRowCount: Int
    /// Rows copied so far, all entities.
    public var rowsCopied: Int
    /// Rows the split copies, all entities.
    public var rowCount: Int
}

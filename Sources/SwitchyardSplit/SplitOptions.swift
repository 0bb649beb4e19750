// MARK: - SplitOptions

/// How a split runs.
public struct SplitOptions: Sendable, Hashable {
    /// Rows read and written per transaction: bounds memory whatever the source size.
    public var batchSize: Int
    /// Re-read every output and compare content checksums with the source's (row counts are always compared).
    public var verifyContent: Bool
    /// Replace outputs that already exist.
    public var force: Bool

    /// Options with the defaults: 5,000-row batches, counts verified, existing outputs refused.
    public init(batchSize: Int = 5_000, verifyContent: Bool = false, force: Bool = false) {
        self.batchSize = batchSize
        self.verifyContent = verifyContent
        self.force = force
    }
}

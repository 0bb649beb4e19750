import Foundation

// MARK: - SplitReport

/// What a split wrote: per output, per entity rows and checksums; totals, timing and verification.
public struct SplitReport: Sendable, Codable {
    public struct EntityResult: Sendable, Codable, Hashable {
        public var sourceEntity: String
        public var targetEntity: String
        public var rows: Int
        /// Content checksum of the rows as written (`SplitChecksum.hex`); nil when SQLite copied them directly
        /// and no `verifyContent` pass read them.
        public var checksum: String?
    }
    public struct Output: Sendable, Codable, Hashable {
        public var configuration: String
        public var path: String
        public var type: StoreType
        public var entities: [EntityResult]
        /// `Z_MAX` per inheritance root, as copied from the source.
        public var primaryKeyMaxima: [String: Int64]
    }

    public var source: String
    public var sourceType: StoreType
    public var sourceModel: String
    public var outputs: [Output]
    public var rowsCopied: Int
    public var seconds: Double
    public var rowsPerSecond: Double
    /// Whether outputs were re-read and their content checksums compared with the source's.
    public var contentVerified: Bool
    public var conversions: [SplitPlan.Conversion]
    public var skipped: [SplitPlan.Skipped]
    public var warnings: [String]
}

import Foundation
import SwitchyardStores

// MARK: - SplitReport

/// What a split wrote: per output, per entity rows and checksums; totals, timing and verification.
public struct SplitReport: Sendable, Codable {
    /// One entity copied into one output.
    public struct EntityResult: Sendable, Codable, Hashable {
        /// The entity's name in the source model.
        public var sourceEntity: String
        /// The entity's name in the target model.
        public var targetEntity: String
        /// Rows written.
        public var rows: Int
        /// Content checksum of the rows as written (`SplitChecksum.hex`); nil when SQLite copied them directly
        /// and no `verifyContent` pass read them.
        public var checksum: String?
    }
    /// One relationship's links copied into one output.
    public struct LinkResult: Sendable, Codable, Hashable {
        /// The target entity declaring the relationship.
        public var entity: String
        /// The relationship (target model).
        public var relationship: String
        /// Links (many-to-many) or positioned members (ordered to-many) written.
        public var links: Int
        /// Checksum of (relationship, owner, member, position) over both ends as written (`SplitChecksum.hex`);
        /// nil when SQLite copied them directly and no `verifyContent` pass read them.
        public var checksum: String?
    }
    /// One output store.
    public struct Output: Sendable, Codable, Hashable {
        /// The configuration the output holds.
        public var configuration: String
        /// The output's final path.
        public var path: String
        /// The output's backend.
        public var type: StoreType
        /// Its entities, in copy order.
        public var entities: [EntityResult]
        /// Its copied many-to-many and ordered to-many relationships.
        public var links: [LinkResult]
        /// `Z_MAX` per inheritance root, as copied from the source (or raised, see `raisedPrimaryKeyMaxima`).
        public var primaryKeyMaxima: [String: Int64]
        /// Inheritance roots whose source `Z_MAX` lay below their largest primary key: root -> the source's
        /// `Z_MAX`. The output's `Z_MAX` (in `primaryKeyMaxima`) was raised to that key. Empty normally.
        public var raisedPrimaryKeyMaxima: [String: Int64]
        /// Files in an SQLite output's `_EXTERNAL_DATA` folder: "Allows External Storage" values of 100 KiB or
        /// more (an LMDB output keeps every value inline: 0). Verification reads each one.
        public var externalDataFiles: Int = 0
    }

    /// The source store's path.
    public var source: String
    /// The source's backend.
    public var sourceType: StoreType
    /// Where the source model came from.
    public var sourceModel: String
    /// Every output, in `--store` order.
    public var outputs: [Output]
    /// Rows written, all outputs.
    public var rowsCopied: Int
    /// Wall time of the run (copy, verification, renames).
    public var seconds: Double
    /// `rowsCopied / seconds`.
    public var rowsPerSecond: Double
    /// Whether outputs were re-read and their content checksums compared with the source's.
    public var contentVerified: Bool
    /// The plan's relationship conversions.
    public var conversions: [SplitPlan.Conversion]
    /// What was not copied.
    public var skipped: [SplitPlan.Skipped]
    /// The plan's warnings.
    public var warnings: [String]
    /// The process's peak resident memory when the split finished (Linux `VmHWM`), in bytes; nil where the
    /// system does not say. What an operator sizes a machine by: the split streams, so it does not grow with the
    /// source.
    public var peakMemoryBytes: Int?
}

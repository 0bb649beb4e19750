import Foundation
import SwitchyardStores

// MARK: - LMDBRowBuilder

/// Decodes encoded rows into `StoreRow`s.
///
/// Values go straight into slots ordered by the entity's attribute positions (`LMDBEntityLayout.rowLayout`),
/// taken from blocks shared by many rows (`RowArena`), so no attribute name is hashed and there is no allocation
/// per row: for a fetch of 100,000 rows, filling a dictionary per row cost more than LMDB and the decoding
/// together.
package struct LMDBRowBuilder {
    package let schema: LMDBSchema
    package let path: String
    package let arena = RowArena()

    /// The row encoded in `bytes`; damage is `StoreError.notAStore` naming the store.
    package func row(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64) throws -> StoreRow {
        try LMDBRowCoding.reportingDamage(path: path, primaryKey: primaryKey) { try build(bytes, primaryKey: primaryKey) }
    }

    private func build(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64) throws -> StoreRow {
        var r = LMDBByteReader(bytes)
        let (layout, version) = try LMDBRowCoding.readHeader(&r, primaryKey: primaryKey, schema: schema)
        let width = layout.attributeNames.count
        let (storage, row) = arena.allocate(layout.rowLayout.slots)
        for (position, value) in layout.implicitDefaults { storage[row, position] = value }
        // The encoded size bounds the text and data the row stores: one addition per row, not a check per value.
        arena.noteStored(bytes: bytes.count)
        // `LMDBRowCoding.nextAttribute`, inlined: this loop runs for every value of every fetched row.
        try layout.attributeTypes.withUnsafeBufferPointer { types in
            while true {
                let tagged = Int(truncatingIfNeeded: try r.unsigned())
                if tagged == 0 { break }
                guard tagged > 0, tagged <= width else {
                    throw LMDBRowCoding.DecodingError(description: "\(layout.name)/p\(primaryKey) names attribute \(tagged - 1) of \(width)")
                }
                // Retired positions (properties the model dropped) are read past, never returned.
                if types[tagged - 1] != .undefined {
                    try LMDBRowCoding.decodeValue(&r, into: storage, row: row, position: tagged - 1)
                } else {
                    _ = try LMDBRowCoding.decodeValue(&r)
                }
            }
        }
        var toOne: [String: RowReference] = [:]
        while let (position, target, key) = try LMDBRowCoding.nextToOne(&r, layout: layout, primaryKey: primaryKey, schema: schema) {
            if !layout.toOneDestinations[position].isEmpty {
                toOne[layout.toOneNames[position]] = RowReference(entityName: target.name, primaryKey: key)
            }
        }
        return StoreRow(
            entityName: layout.name, primaryKey: primaryKey, version: version,
            values: RowValues(layout: layout.rowLayout, storage: storage, row: row), toOne: toOne)
    }
}

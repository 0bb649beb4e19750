import Foundation

// MARK: - LMDBRowBuilder

/// Decodes encoded rows into `StoreRow`s.
///
/// Values go straight into slots ordered by the entity's attribute positions (`LMDBEntityLayout.rowLayout`),
/// taken from blocks shared by many rows (`RowArena`), so no attribute name is hashed and there is no allocation
/// per row: for a fetch of 100,000 rows, filling a dictionary per row cost more than LMDB and the decoding
/// together.
struct LMDBRowBuilder {
    let schema: LMDBSchema
    let path: String
    let arena = RowArena()

    /// The row encoded in `bytes`; damage is `StoreError.notAStore` naming the store.
    func row(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64) throws -> StoreRow {
        do {
            return try build(bytes, primaryKey: primaryKey)
        } catch let error as LMDBRowCoding.DecodingError {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "damaged row: \(error)")
        } catch is LMDBByteReader.Overrun {
            throw StoreError.notAStore(path: path, expected: .lmdb, reason: "damaged row p\(primaryKey): it ends early")
        }
    }

    private func build(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64) throws -> StoreRow {
        var r = LMDBByteReader(bytes)
        let (layout, version) = try LMDBRowCoding.readHeader(&r, primaryKey: primaryKey, schema: schema)
        let (storage, base) = arena.allocate(width: layout.attributeNames.count)
        let types = layout.attributeTypes
        while let position = try LMDBRowCoding.nextAttribute(&r, layout: layout, primaryKey: primaryKey) {
            let value = try LMDBRowCoding.decodeValue(&r)
            // Retired positions (properties the model dropped) are read past, never returned.
            if types[position] != .undefined { storage[base + position] = value }
        }
        var toOne: [String: RowReference] = [:]
        while let (position, target, key) = try LMDBRowCoding.nextToOne(&r, layout: layout, primaryKey: primaryKey, schema: schema) {
            if !layout.toOneDestinations[position].isEmpty {
                toOne[layout.toOneNames[position]] = RowReference(entityName: target.name, primaryKey: key)
            }
        }
        return StoreRow(
            entityName: layout.name, primaryKey: primaryKey, version: version,
            values: RowValues(layout: layout.rowLayout, storage: storage, base: base), toOne: toOne)
    }
}

import Foundation

// MARK: - LMDBRowBuilder

/// Decodes rows into `StoreRow`s for one read, without hashing attribute names for every row.
///
/// Filling a `[String: AttributeValue]` key by key hashes every name of every row, and for a fetch of
/// 100,000 rows that hashing costs more than LMDB and the decoding together. But rows of one entity mostly have
/// the same attributes set, so there is, per (entity, set of present attributes), a *prototype* dictionary
/// holding those keys, and the dictionary index of each. A row copies its prototype (a copy duplicates the
/// table as is, without hashing) and stores its values through the indexes. Prototypes are made on a
/// pattern's second sighting and shared through the entity's layout, so single-row lookups profit too; the
/// builder keeps the ones it used at hand, without locking. An entity with more than 64 attributes, or more
/// distinct patterns than the cache holds, is decoded the plain way.
final class LMDBRowBuilder {
    typealias Prototype = LMDBEntityLayout.Prototype

    private let schema: LMDBSchema
    private let path: String
    // Unchecked exclusivity: a builder is used by one reader at a time, and the run-time check per row cost
    // more than the decoding it guarded.
    @exclusivity(unchecked) private var prototypes: [Prototype] = []
    @exclusivity(unchecked) private var lastHit = 0
    /// Decoded values by attribute position; cleared again after each row.
    @exclusivity(unchecked) private var scratch: [AttributeValue] = []

    init(schema: LMDBSchema, path: String) {
        self.schema = schema
        self.path = path
    }

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
        let count = layout.attributeNames.count
        guard count <= 64 else { return try LMDBRowCoding.decode(bytes, primaryKey: primaryKey, schema: schema) }
        // Work on a local: every access to a class's stored property is checked for exclusivity at run time.
        var scratch = self.scratch
        self.scratch = []
        defer { self.scratch = scratch }
        if scratch.count < count { scratch += Array(repeating: .null, count: count - scratch.count) }
        var mask: UInt64 = 0
        while let position = try LMDBRowCoding.nextAttribute(&r, layout: layout, primaryKey: primaryKey) {
            scratch[position] = try LMDBRowCoding.decodeValue(&r)
            mask |= 1 << UInt64(position)
        }
        // Retired positions (properties the model dropped) are read past, never returned.
        var retired = mask & ~layout.liveAttributes
        while retired != 0 {
            scratch[retired.trailingZeroBitCount] = .null
            retired &= retired - 1
        }
        mask &= layout.liveAttributes
        var toOne: [String: RowReference] = [:]
        while let (position, target, key) = try LMDBRowCoding.nextToOne(&r, layout: layout, primaryKey: primaryKey, schema: schema) {
            if !layout.toOneDestinations[position].isEmpty {
                toOne[layout.toOneNames[position]] = RowReference(entityName: target.name, primaryKey: key)
            }
        }
        var values: [String: AttributeValue]
        if let prototype = prototype(for: layout, mask: mask) {
            values = prototype.values
            var bits = mask
            while bits != 0 {
                let position = bits.trailingZeroBitCount
                bits &= bits - 1
                values.values[prototype.slots[position]!] = scratch[position]
                scratch[position] = .null
            }
        } else {
            values = Dictionary(minimumCapacity: mask.nonzeroBitCount)
            var bits = mask
            while bits != 0 {
                let position = bits.trailingZeroBitCount
                bits &= bits - 1
                values[layout.attributeNames[position]] = scratch[position]
                scratch[position] = .null
            }
        }
        return StoreRow(entityName: layout.name, primaryKey: primaryKey, version: version, values: values, toOne: toOne)
    }

    /// The prototype for rows of `layout` with exactly the attributes in `mask`, if there is one.
    private func prototype(for layout: LMDBEntityLayout, mask: UInt64) -> Prototype? {
        if lastHit < prototypes.count, prototypes[lastHit].layout === layout, prototypes[lastHit].mask == mask {
            return prototypes[lastHit]
        }
        if let i = prototypes.firstIndex(where: { $0.layout === layout && $0.mask == mask }) {
            lastHit = i
            return prototypes[i]
        }
        guard let shared = layout.prototype(mask: mask) else { return nil }
        prototypes.append(shared)
        lastHit = prototypes.count - 1
        return shared
    }
}

// MARK: - Shared prototypes

extension LMDBEntityLayout {
    /// A dictionary with the keys of one pattern of present attributes, and where each key lives in it.
    struct Prototype: @unchecked Sendable {
        let layout: LMDBEntityLayout
        let mask: UInt64
        let values: [String: AttributeValue]
        /// Dictionary index of each attribute position present in `mask` (plain integers in a value that is
        /// never mutated: safe to share, though the standard library does not say so).
        let slots: [Dictionary<String, AttributeValue>.Index?]
    }

    /// Patterns seen (made into prototypes from their second sighting) and the prototypes made.
    struct PrototypeCache: Sendable {
        var seen: Set<UInt64> = []
        var made: [UInt64: Prototype] = [:]
    }

    static let prototypeLimit = 64

    /// The shared prototype for `mask`, made now if the pattern was seen before; `nil` on its first sighting
    /// (a single row is cheaper to hash than a prototype to build) or once the cache is full.
    func prototype(mask: UInt64) -> Prototype? {
        prototypeCache.withLock { cache -> Prototype? in
            if let made = cache.made[mask] { return made }
            guard cache.made.count < Self.prototypeLimit else { return nil }
            guard cache.seen.contains(mask) else {
                if cache.seen.count < 4 * Self.prototypeLimit { cache.seen.insert(mask) }
                return nil
            }
            var values = [String: AttributeValue](minimumCapacity: mask.nonzeroBitCount)
            var bits = mask
            while bits != 0 {
                let position = bits.trailingZeroBitCount
                bits &= bits - 1
                values[attributeNames[position]] = .null
            }
            var slots = [Dictionary<String, AttributeValue>.Index?](repeating: nil, count: attributeNames.count)
            bits = mask
            while bits != 0 {
                let position = bits.trailingZeroBitCount
                bits &= bits - 1
                slots[position] = values.index(forKey: attributeNames[position])
            }
            let prototype = Prototype(layout: self, mask: mask, values: values, slots: slots)
            cache.made[mask] = prototype
            return prototype
        }
    }
}

@available(*, unavailable, message: "a row builder belongs to one read")
extension LMDBRowBuilder: Sendable {}

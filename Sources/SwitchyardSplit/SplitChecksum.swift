import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - SplitChecksum

/// An order-independent content checksum of an entity's rows: the wrapping sum of a 64-bit FNV-1a hash per
/// row over a canonical encoding (entity, primary key, `Z_OPT`, every persistent attribute normalized to its
/// type, every to-one reference), so the same rows read from any backend give the same checksum. The same sum
/// over (relationship, owner, member, position) checksums a to-many relationship's links.
package struct SplitChecksum: Sendable, Hashable, Codable {
    /// Rows added.
    public private(set) var rows: Int = 0
    /// Wrapping sum of the per-row hashes.
    public private(set) var sum: UInt64 = 0

    /// An empty checksum (no rows).
    public init() {}

    /// The checksum as 16 hex digits.
    public var hex: String {
        let digits = String(sum, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Adds `row`, read as an object of `entity`.
    package mutating func add(_ row: StoreRow, entity: EntityDescription) {
        var h = FNV()
        h.add(row.entityName)
        h.add(UInt64(bitPattern: row.primaryKey))
        h.add(UInt64(bitPattern: row.version))
        for attribute in entity.persistentAttributes {
            let value = row.values[attribute.name] ?? .null
            h.add(value.normalized(for: attribute.type) ?? value)
        }
        for relationship in entity.persistentToOneRelationships {
            if let reference = row.toOne[relationship.name] {
                h.add(reference.entityName)
                h.add(UInt64(bitPattern: reference.primaryKey))
            } else {
                h.byte(0)
            }
        }
        rows += 1
        sum &+= h.value
    }

    /// Adds one member of `owner`'s to-many `relationship` ("Entity.name"): `position` is its 1-based place in
    /// an ordered relationship, 0 where order is not compared.
    package mutating func add(member: RowReference, of owner: RowReference, relationship: String, position: Int) {
        var h = FNV()
        h.add(relationship)
        h.add(owner.entityName)
        h.add(UInt64(bitPattern: owner.primaryKey))
        h.add(member.entityName)
        h.add(UInt64(bitPattern: member.primaryKey))
        h.add(UInt64(position))
        rows += 1
        sum &+= h.value
    }
}

// MARK: - FNV

private struct FNV {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func byte(_ b: UInt8) {
        value = (value ^ UInt64(b)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ v: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { byte(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    mutating func add(_ s: String) {
        add(UInt64(s.utf8.count))
        for b in s.utf8 { byte(b) }
    }

    mutating func add(_ bytes: Data) {
        add(UInt64(bytes.count))
        for b in bytes { byte(b) }
    }

    mutating func add(_ value: AttributeValue) {
        switch value {
        case .null: byte(0)
        case .integer(let i): byte(1); add(UInt64(bitPattern: i))
        case .double(let d): byte(2); add(d.bitPattern)
        case .decimal(let d): byte(3); add(NSDecimalNumber(decimal: d).stringValue)
        case .string(let s): byte(4); add(s)
        case .bool(let b): byte(5); byte(b ? 1 : 0)
        case .date(let d): byte(6); add(d.timeIntervalSinceReferenceDate.bitPattern)
        case .binary(let data): byte(7); add(data)
        case .uuid(let u): byte(8); add(u.uuidString)
        case .uri(let url): byte(9); add(url.absoluteString)
        }
    }
}

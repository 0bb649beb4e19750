import Foundation

// MARK: - LMDBLinks

/// The `links` database: to-many bookkeeping the rows do not hold. A key is the to-many end's
/// `RelationshipEnd.key`, a zero byte, then the source's and the member's primary keys (big-endian, so a
/// cursor walks one source's members together); the value is the member's position (8 bytes, big-endian) in an
/// ordered relationship, or empty. A many-to-many link is written under both ends, so either side finds its
/// members with one prefix walk; an ordered to-many with a to-one inverse keeps only its positions here (its
/// members come from the inverse's index).
package struct LMDBLinks {
    package let database: LMDBDatabase
    package let transaction: LMDBTransaction

    /// `endKey` + 0 + source.
    package static func prefix(_ endKey: String, source: Int64) -> [UInt8] {
        var w = LMDBByteWriter(capacity: endKey.utf8.count + 9)
        for b in endKey.utf8 { w.byte(b) }
        w.byte(0)
        w.bigEndian(UInt64(bitPattern: source))
        return w.bytes
    }

    package static func key(_ endKey: String, source: Int64, member: Int64) -> [UInt8] {
        var bytes = prefix(endKey, source: source)
        var w = LMDBByteWriter(capacity: 8)
        w.bigEndian(UInt64(bitPattern: member))
        bytes += w.bytes
        return bytes
    }

    /// The members stored under `endKey` for `source`, with their positions where they have one.
    package func members(_ endKey: String, source: Int64) throws -> [(member: Int64, position: Int64?)] {
        let prefix = Self.prefix(endKey, source: source)
        return try transaction.withCursor(database) { cursor in
            var result: [(Int64, Int64?)] = []
            var entry = try cursor.seek(atLeast: prefix)
            while let current = entry, current.key.count == prefix.count + 8, current.key.starts(with: prefix) {
                let member = Int64(bitPattern: LMDBRowKey.readBigEndian64(current.key, prefix.count))
                let position = current.value.count == 8 ? Int64(bitPattern: LMDBRowKey.readBigEndian64(current.value, 0)) : nil
                result.append((member, position))
                entry = try cursor.next()
            }
            return result
        }
    }

    /// Adds the entry unless it exists (an existing one keeps its position).
    package func add(_ endKey: String, source: Int64, member: Int64) throws {
        _ = try transaction.put(database, Self.key(endKey, source: source, member: member), [], flags: .noOverwrite)
    }

    package func remove(_ endKey: String, source: Int64, member: Int64) throws {
        _ = try transaction.delete(database, Self.key(endKey, source: source, member: member))
    }

    /// Sets the position of an entry (creating it).
    package func setPosition(_ endKey: String, source: Int64, member: Int64, position: Int64?) throws {
        var w = LMDBByteWriter(capacity: 8)
        if let position { w.bigEndian(UInt64(bitPattern: position)) }
        _ = try transaction.put(database, Self.key(endKey, source: source, member: member), w.bytes)
    }
}

// MARK: - To-many without inverse

extension LMDBLinks {
    /// The key its members' owners are kept under for to-many without inverse `endKey`: a 0x01 byte (no
    /// end key starts with it) then the end key, with the member as source and its owner as member.
    package static func ownerKey(_ endKey: String) -> String { "\u{1}" + endKey }

    /// The owner of `member` through to-many without inverse `endKey`, if any.
    package func owner(_ endKey: String, member: Int64) throws -> Int64? {
        try members(Self.ownerKey(endKey), source: member).first?.member
    }

    /// Makes `owner` the only owner of `member` (the link moves from a previous owner), keeping the position
    /// an existing link has.
    package func link(_ endKey: String, owner: Int64, member: Int64) throws {
        if let previous = try self.owner(endKey, member: member) {
            if previous == owner { return }
            try unlink(endKey, owner: previous, member: member)
        }
        try add(endKey, source: owner, member: member)
        try add(Self.ownerKey(endKey), source: member, member: owner)
    }

    /// Removes `member` from `owner`'s list (nothing when another owner holds it).
    package func unlink(_ endKey: String, owner: Int64, member: Int64) throws {
        try remove(endKey, source: owner, member: member)
        if try self.owner(endKey, member: member) == owner { try remove(Self.ownerKey(endKey), source: member, member: owner) }
    }
}

@available(*, unavailable, message: "LMDBLinks lives inside one transaction")
extension LMDBLinks: Sendable {}

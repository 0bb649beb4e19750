import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Patching a stored row

extension LMDBRowCoding {
    /// Re-encodes the stored row `old` of `layout` with `version` as its `Z_OPT` and the attributes at the
    /// positions of `changes` (ascending, each at most once, values already normalized; `.null` clears)
    /// replaced, copying the bytes of every other attribute and of the to-ones as they are (retired positions
    /// included). What an update of unindexed attributes writes: no value it does not change is decoded.
    /// A damaged row throws `DecodingError` or `LMDBByteReader.Overrun` (see `reportingDamage`).
    package static func patch(
        _ old: UnsafeRawBufferPointer, layout: LMDBEntityLayout, schema: LMDBSchema, primaryKey: Int64, version: Int64,
        changes: [(position: Int, value: AttributeValue)], into w: inout LMDBByteWriter
    ) throws {
        var r = LMDBByteReader(old)
        var next = 0
        func emit(_ change: (position: Int, value: AttributeValue)) {
            if change.value.isNull {
                // Absent means null, except where an implicit default would be read instead.
                guard layout.implicitDefaultPositions.contains(change.position) else { return }
                w.unsigned(UInt64(change.position + 1))
                w.byte(Tag.null.rawValue)
            } else {
                w.unsigned(UInt64(change.position + 1))
                encode(change.value, into: &w)
            }
        }
        guard try readHeader(&r, primaryKey: primaryKey, schema: schema).layout === layout else {
            throw DecodingError(description: "row p\(primaryKey) is not a \(layout.name)")
        }
        w.byte(formatVersion)
        w.unsigned(UInt64(layout.number))
        w.signed(version)
        let width = layout.attributeNames.count
        while let position = try nextAttribute(&r, width: width, layout: layout, primaryKey: primaryKey) {
            let start = r.offset
            try skipValue(&r)
            while next < changes.count, changes[next].position < position {
                emit(changes[next])
                next += 1
            }
            if next < changes.count, changes[next].position == position {
                emit(changes[next])
                next += 1
            } else {
                w.unsigned(UInt64(position + 1))
                w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: old[start..<r.offset]))
            }
        }
        while next < changes.count {
            emit(changes[next])
            next += 1
        }
        w.byte(0)
        // The to-ones are unchanged: their positions and target entities checked as the decoder checks them,
        // then copied. (Unchanged attribute values are stepped over, not decoded: a damaged payload inside
        // one is found when the row is read, as before the update.)
        let toOnes = r.offset
        while try nextToOne(&r, layout: layout, primaryKey: primaryKey, schema: schema) != nil {}
        w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: old[toOnes..<r.offset]))
    }
}

import Foundation
import SwitchyardModel
import SwitchyardStores

// MARK: - Patching a stored row

extension LMDBRowCoding {
    /// Re-encodes the stored row `old` of `layout` with `version` as its `Z_OPT` and the attributes at the
    /// positions of `changes` (ascending, each at most once, values already normalized; `.null` clears)
    /// replaced, copying the bytes of every other attribute and of the to-ones as they are (retired positions
    /// included). What an update of unindexed attributes writes: no value it does not change is decoded.
    /// The stored row's order is kept (rows need not be in ascending position, see `LMDBRowCoding`); a change
    /// at a position the row does not hold comes after its attributes.
    /// A damaged row throws `DecodingError` or `LMDBByteReader.Overrun` (see `reportingDamage`).
    package static func patch(
        _ old: UnsafeRawBufferPointer, layout: LMDBEntityLayout, schema: LMDBSchema, primaryKey: Int64, version: Int64,
        changes: [(position: Int, value: AttributeValue)], into w: inout LMDBByteWriter
    ) throws {
        assert(zip(changes, changes.dropFirst()).allSatisfy { $0.position < $1.position }, "changes must be ascending by position")
        var r = LMDBByteReader(old)
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
        // Which changes were written in place: a bit per change (an update changes a few attributes), an
        // array past 64.
        var writtenBits: UInt64 = 0
        var written: [Bool] = changes.count > 64 ? Array(repeating: false, count: changes.count) : []
        func isWritten(_ index: Int) -> Bool { index < 64 ? writtenBits & (1 << UInt64(index)) != 0 : written[index] }
        while let position = try nextAttribute(&r, width: width, layout: layout, primaryKey: primaryKey) {
            let start = r.offset
            try skipValue(&r)
            if let index = Self.index(of: position, in: changes) {
                // (A damaged row holding the position twice keeps the change once.)
                if !isWritten(index) { emit(changes[index]) }
                if index < 64 { writtenBits |= 1 << UInt64(index) } else { written[index] = true }
            } else {
                w.unsigned(UInt64(position + 1))
                w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: old[start..<r.offset]))
            }
        }
        for (index, change) in changes.enumerated() where !isWritten(index) { emit(change) }
        w.byte(0)
        // The to-ones are unchanged: their positions and target entities checked as the decoder checks them,
        // then copied. (Unchanged attribute values are stepped over, not decoded: a damaged payload inside
        // one is found when the row is read, as before the update.)
        let toOnes = r.offset
        while try nextToOne(&r, layout: layout, primaryKey: primaryKey, schema: schema) != nil {}
        w.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: old[toOnes..<r.offset]))
    }

    /// The index of the change at `position` in `changes` (ascending by position), found by halving.
    private static func index(of position: Int, in changes: [(position: Int, value: AttributeValue)]) -> Int? {
        var low = 0, high = changes.count
        while low < high {
            let middle = (low + high) / 2
            let found = changes[middle].position
            if found == position { return middle }
            if found < position { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}

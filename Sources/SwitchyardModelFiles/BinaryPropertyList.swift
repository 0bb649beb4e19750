import Foundation

// MARK: - BinaryPropertyList

/// A reader for Apple's binary property list format (`bplist00`), enough for NSKeyedArchiver archives.
///
/// Written here rather than using Foundation's `PropertyListSerialization` because, on Linux, that hands a
/// keyed archive's `UID` values back as the internal class `_NSKeyedArchiverUID`, whose number is reachable
/// only by reflecting on a private field; an archive is nothing but UIDs pointing into `$objects`, so that
/// would make the model-cache reader depend on corelibs-foundation's private layout. Owning the parser also
/// lets every fault in a corrupt or hostile file become a `KeyedArchiveError` with a byte offset.
///
/// The object table is decoded flat: a container holds the indices of its members, not the members, so
/// parsing never recurses and a property list whose containers refer to themselves cannot loop.
///
/// ```swift
/// let plist = try BinaryPropertyList(data, source: "store.sqlite model cache")
/// let top = plist.objects[plist.topIndex]
/// ```
package struct BinaryPropertyList: Sendable {
    /// One object of the table; containers refer to other objects by their index in `objects`.
    package enum Object: Sendable, Hashable {
        case null
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        /// Seconds since 2001-01-01 00:00:00 UTC.
        case date(Double)
        case data(Data)
        case string(String)
        /// A keyed archive's reference into `$objects`.
        case uid(UInt64)
        case array([Int])
        case set([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The magic number and format version every file starts with.
    package static let header: [UInt8] = Array("bplist00".utf8)
    package static let trailerSize = 32

    /// Every object in the file, in object-table order.
    package let objects: [Object]
    /// The index of the top-level object.
    package let topIndex: Int
    /// What errors name.
    package let source: String

    /// Parses `data`; throws `KeyedArchiveError.malformedPropertyList` for anything that is not a
    /// well-formed binary property list.
    package init(_ data: Data, source: String) throws(KeyedArchiveError) {
        self.source = source
        let bytes = [UInt8](data)
        var reader = Reader(bytes: bytes, source: source, limit: bytes.count)
        guard bytes.count >= Self.header.count + Self.trailerSize + 2 else {
            throw reader.error(at: 0, "\(bytes.count) bytes is too short for a binary property list")
        }
        guard Array(bytes[0..<Self.header.count]) == Self.header else {
            throw reader.error(at: 0, "the file does not start with \"bplist00\"")
        }
        let trailer = bytes.count - Self.trailerSize
        let offsetSize = Int(bytes[trailer + 6])
        let refSize = Int(bytes[trailer + 7])
        let count = try reader.uint(at: trailer + 8, size: 8)
        let top = try reader.uint(at: trailer + 16, size: 8)
        let tableOffset = try reader.uint(at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(refSize) else {
            throw reader.error(at: trailer + 6, "offset size \(offsetSize) / reference size \(refSize) is not 1...8")
        }
        // Every object takes at least one byte, so a count above the file size is a lie, not a big file.
        guard count >= 1, count <= UInt64(bytes.count), top < count else {
            throw reader.error(at: trailer + 8, "object count \(count) / top object \(top) do not fit the file")
        }
        let objectCount = Int(count)
        guard tableOffset >= UInt64(Self.header.count), tableOffset <= UInt64(trailer),
            UInt64(objectCount) * UInt64(offsetSize) <= UInt64(trailer) - tableOffset
        else {
            throw reader.error(at: trailer + 24, "the offset table (at \(tableOffset)) does not fit before the trailer")
        }
        // Objects live between the header and the offset table.
        reader.limit = Int(tableOffset)
        reader.objectCount = objectCount
        reader.refSize = refSize
        var objects: [Object] = []
        objects.reserveCapacity(objectCount)
        for index in 0..<objectCount {
            let entry = Int(tableOffset) + index * offsetSize
            var tableReader = reader
            tableReader.limit = trailer
            let offset = try tableReader.uint(at: entry, size: offsetSize)
            guard offset >= UInt64(Self.header.count), offset < tableOffset else {
                throw reader.error(at: entry, "object \(index) has offset \(offset), outside the object area")
            }
            objects.append(try reader.object(at: Int(offset)))
        }
        self.objects = objects
        self.topIndex = Int(top)
    }
}

// MARK: - Reader

extension BinaryPropertyList {
    /// Bounds-checked reads over the file's bytes; every read past `limit` is an error, never a trap.
    fileprivate struct Reader {
        let bytes: [UInt8]
        let source: String
        /// Reads must end at or before this offset.
        var limit: Int
        var objectCount = 0
        var refSize = 1

        func error(at offset: Int, _ reason: String) -> KeyedArchiveError {
            .malformedPropertyList(source: source, offset: offset, reason: reason)
        }

        /// The bytes `offset..<offset+count`, checked against `limit`.
        func slice(at offset: Int, count: Int) throws(KeyedArchiveError) -> ArraySlice<UInt8> {
            guard offset >= 0, count >= 0, offset <= limit, count <= limit - offset else {
                throw error(at: offset, "\(count) bytes at offset \(offset) run past the end of the data")
            }
            return bytes[offset..<offset + count]
        }

        /// A big-endian unsigned integer of `size` (1...8) bytes.
        func uint(at offset: Int, size: Int) throws(KeyedArchiveError) -> UInt64 {
            var value: UInt64 = 0
            for byte in try slice(at: offset, count: size) { value = value << 8 | UInt64(byte) }
            return value
        }

        /// An object reference, checked against the object count.
        func reference(at offset: Int) throws(KeyedArchiveError) -> Int {
            let ref = try uint(at: offset, size: refSize)
            guard ref < UInt64(objectCount) else {
                throw error(at: offset, "reference \(ref) points past the \(objectCount) objects")
            }
            return Int(ref)
        }

        /// The object whose marker byte is at `offset`.
        func object(at offset: Int) throws(KeyedArchiveError) -> Object {
            let marker = try slice(at: offset, count: 1).first ?? 0
            let kind = marker >> 4
            let info = Int(marker & 0x0F)
            switch kind {
            case 0x0:
                switch info {
                case 0x0, 0xF: return .null  // null, fill
                case 0x8: return .bool(false)
                case 0x9: return .bool(true)
                default: throw error(at: offset, String(format: "unknown marker 0x%02X", marker))
                }
            case 0x1:
                return .integer(try integer(at: offset + 1, sizeExponent: info))
            case 0x2:
                switch info {
                case 2: return .real(Double(Float(bitPattern: UInt32(try uint(at: offset + 1, size: 4)))))
                case 3: return .real(Double(bitPattern: try uint(at: offset + 1, size: 8)))
                default: throw error(at: offset, "a real of 2^\(info) bytes")
                }
            case 0x3:
                guard info == 3 else { throw error(at: offset, String(format: "unknown marker 0x%02X", marker)) }
                return .date(Double(bitPattern: try uint(at: offset + 1, size: 8)))
            case 0x4:
                let (count, start) = try length(at: offset, info: info)
                return .data(Data(try slice(at: start, count: count)))
            case 0x5:
                // ASCII by the format's definition; decoded as Latin-1 so a stray high byte cannot fail.
                let (count, start) = try length(at: offset, info: info)
                return .string(String(try slice(at: start, count: count).map { Character(Unicode.Scalar($0)) }))
            case 0x6:
                let (count, start) = try length(at: offset, info: info)
                guard count <= (limit - start) / 2 else {
                    throw error(at: offset, "a UTF-16 string of \(count) units runs past the end of the data")
                }
                let raw = try slice(at: start, count: count * 2)
                let units = stride(from: raw.startIndex, to: raw.endIndex, by: 2).map {
                    UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1])
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x7:
                let (count, start) = try length(at: offset, info: info)
                return .string(String(decoding: try slice(at: start, count: count), as: UTF8.self))
            case 0x8:
                guard info < 8 else { throw error(at: offset, "a UID of \(info + 1) bytes") }
                return .uid(try uint(at: offset + 1, size: info + 1))
            case 0xA, 0xB, 0xC:
                let (count, start) = try length(at: offset, info: info)
                let refs = try references(at: start, count: count)
                return kind == 0xC ? .set(refs) : .array(refs)
            case 0xD:
                let (count, start) = try length(at: offset, info: info)
                // Keys first, then values; each read is bounds-checked, so a huge count fails on the keys.
                let keys = try references(at: start, count: count)
                let values = try references(at: start + count * refSize, count: count)
                return .dictionary(keys: keys, values: values)
            default:
                throw error(at: offset, String(format: "unknown marker 0x%02X", marker))
            }
        }

        /// An integer of 2^exponent bytes: 1, 2 and 4 bytes are unsigned, 8 bytes signed; 16 bytes (written
        /// for unsigned values above Int64.max) is accepted only where the value fits Int64.
        private func integer(at offset: Int, sizeExponent: Int) throws(KeyedArchiveError) -> Int64 {
            switch sizeExponent {
            case 0, 1, 2: return Int64(try uint(at: offset, size: 1 << sizeExponent))
            case 3: return Int64(bitPattern: try uint(at: offset, size: 8))
            case 4:
                let high = try uint(at: offset, size: 8)
                let low = Int64(bitPattern: try uint(at: offset + 8, size: 8))
                guard (high == 0 && low >= 0) || (high == UInt64.max && low < 0) else {
                    throw error(at: offset, "a 128-bit integer outside Int64's range")
                }
                return low
            default:
                throw error(at: offset - 1, "an integer of 2^\(sizeExponent) bytes")
            }
        }

        /// The element count of a data/string/container object and where its content starts: the count is
        /// the marker's low nibble, or (nibble 0xF) the integer object that follows.
        private func length(at offset: Int, info: Int) throws(KeyedArchiveError) -> (Int, Int) {
            guard info == 0xF else { return (info, offset + 1) }
            let marker = try slice(at: offset + 1, count: 1).first ?? 0
            guard marker >> 4 == 0x1 else {
                throw error(at: offset + 1, String(format: "expected an integer length, found marker 0x%02X", marker))
            }
            let exponent = Int(marker & 0x0F)
            let value = try integer(at: offset + 2, sizeExponent: exponent)
            guard value >= 0, value <= Int64(limit) else {
                throw error(at: offset + 1, "length \(value) is larger than the file")
            }
            return (Int(value), offset + 2 + (1 << min(exponent, 4)))
        }

        private func references(at offset: Int, count: Int) throws(KeyedArchiveError) -> [Int] {
            guard count <= (limit - min(offset, limit)) / refSize else {
                throw error(at: offset, "\(count) references run past the end of the data")
            }
            var refs: [Int] = []
            refs.reserveCapacity(count)
            for i in 0..<count { refs.append(try reference(at: offset + i * refSize)) }
            return refs
        }
    }
}

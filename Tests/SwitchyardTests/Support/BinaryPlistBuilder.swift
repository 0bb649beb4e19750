import Foundation

/// Writes small `bplist00` files object by object, so tests can craft property lists Foundation would never
/// write: UIDs anywhere, containers that contain themselves, broken offsets.
struct BinaryPlistBuilder {
    /// One object; containers name other objects by their index in `objects`.
    enum Object {
        case null
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        case utf16(String)
        case data(Data)
        case uid(UInt64)
        case array([Int])
        case set([Int])
        case dictionary([(Int, Int)])
    }

    var objects: [Object] = []
    var top = 0

    /// Appends an object and returns its index.
    @discardableResult
    mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    /// Appends a string and returns its index.
    mutating func str(_ text: String) -> Int { add(.string(text)) }

    /// Appends a UID and returns its index.
    mutating func ref(_ uid: UInt64) -> Int { add(.uid(uid)) }

    /// The file: header, objects, a 2-byte offset table, 2-byte references, trailer.
    func build() -> Data {
        var out = Data("bplist00".utf8)
        var offsets: [Int] = []
        func marker(_ kind: UInt8, _ count: Int) {
            if count < 15 {
                out.append(kind << 4 | UInt8(count))
            } else {
                out.append(kind << 4 | 0xF)
                out.append(0x13)
                out.append(contentsOf: bigEndian(UInt64(count), 8))
            }
        }
        func refs(_ list: [Int]) { for r in list { out.append(contentsOf: bigEndian(UInt64(r), 2)) } }
        for object in objects {
            offsets.append(out.count)
            switch object {
            case .null: out.append(0x00)
            case .bool(let b): out.append(b ? 0x09 : 0x08)
            case .integer(let i):
                out.append(0x13)
                out.append(contentsOf: bigEndian(UInt64(bitPattern: i), 8))
            case .real(let d):
                out.append(0x23)
                out.append(contentsOf: bigEndian(d.bitPattern, 8))
            case .string(let s):
                marker(0x5, s.utf8.count)
                out.append(contentsOf: s.utf8)
            case .utf16(let s):
                let units = Array(s.utf16)
                marker(0x6, units.count)
                for u in units { out.append(contentsOf: bigEndian(UInt64(u), 2)) }
            case .data(let d):
                marker(0x4, d.count)
                out.append(d)
            case .uid(let u):
                out.append(0x83)
                out.append(contentsOf: bigEndian(u, 4))
            case .array(let list):
                marker(0xA, list.count)
                refs(list)
            case .set(let list):
                marker(0xC, list.count)
                refs(list)
            case .dictionary(let pairs):
                marker(0xD, pairs.count)
                refs(pairs.map(\.0))
                refs(pairs.map(\.1))
            }
        }
        let tableOffset = out.count
        for offset in offsets { out.append(contentsOf: bigEndian(UInt64(offset), 2)) }
        out.append(contentsOf: [0, 0, 0, 0, 0, 0, 2, 2])
        out.append(contentsOf: bigEndian(UInt64(objects.count), 8))
        out.append(contentsOf: bigEndian(UInt64(top), 8))
        out.append(contentsOf: bigEndian(UInt64(tableOffset), 8))
        return out
    }

    private func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
    }
}

extension BinaryPlistBuilder {
    /// A keyed archive skeleton: `$objects` is `archived` (objects added after the skeleton; index 0 of
    /// `$objects` is `$null`), `$top.root` is UID `rootUID`.
    static func keyedArchive(
        rootUID: UInt64, _ fill: (inout BinaryPlistBuilder) -> [Int]
    ) -> Data {
        var b = BinaryPlistBuilder()
        let top = b.add(.null)  // placeholder for the top dictionary, replaced below
        let archiverKey = b.add(.string("$archiver"))
        let archiver = b.add(.string("NSKeyedArchiver"))
        let topKey = b.add(.string("$top"))
        let rootKey = b.add(.string("root"))
        let rootRef = b.add(.uid(rootUID))
        let topDict = b.add(.dictionary([(rootKey, rootRef)]))
        let objectsKey = b.add(.string("$objects"))
        let null = b.add(.string("$null"))
        let archived = fill(&b)
        let objectsArray = b.add(.array([null] + archived))
        b.objects[top] = .dictionary([(archiverKey, archiver), (topKey, topDict), (objectsKey, objectsArray)])
        b.top = top
        return b.build()
    }
}

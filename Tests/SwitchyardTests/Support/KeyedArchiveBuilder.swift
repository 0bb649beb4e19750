import Foundation

/// Builds NSKeyedArchiver archives object by object, with any class names, so tests can describe Core Data
/// model objects (which Foundation on Linux cannot archive) down to the keys the model-cache reader reads.
struct KeyedArchiveBuilder {
    /// A field value: a reference to an archived object, or an inline plist primitive.
    enum Field {
        case ref(UInt64)
        case int(Int64)
        case bool(Bool)
        case real(Double)
        case refs([UInt64])
    }

    private var plist = BinaryPlistBuilder()
    /// Plist index of each `$objects` entry; nil while reserved and not yet filled.
    private var entries: [Int?] = []
    private var classes: [String: UInt64] = [:]

    init() {
        entries.append(plist.str("$null"))
    }

    /// Archives a string and returns its UID.
    mutating func string(_ text: String) -> UInt64 {
        entries.append(plist.str(text))
        return UInt64(entries.count - 1)
    }

    /// Archives a plain number and returns its UID.
    mutating func number(_ value: Int64) -> UInt64 {
        entries.append(plist.add(.integer(value)))
        return UInt64(entries.count - 1)
    }

    /// Archives a plain real number and returns its UID.
    mutating func real(_ value: Double) -> UInt64 {
        entries.append(plist.add(.real(value)))
        return UInt64(entries.count - 1)
    }

    /// Archives plain data and returns its UID.
    mutating func data(_ value: Data) -> UInt64 {
        entries.append(plist.add(.data(value)))
        return UInt64(entries.count - 1)
    }

    /// A UID to fill later with `fill`, for objects that refer to each other.
    mutating func reserve() -> UInt64 {
        entries.append(nil)
        return UInt64(entries.count - 1)
    }

    /// Archives an object of `className` (superclasses most specific first) and returns its UID.
    mutating func object(_ className: String, _ superclasses: [String] = ["NSObject"], _ fields: [(String, Field)]) -> UInt64 {
        let uid = reserve()
        fill(uid, className, superclasses, fields)
        return uid
    }

    /// Fills a reserved UID with an object.
    mutating func fill(_ uid: UInt64, _ className: String, _ superclasses: [String] = ["NSObject"], _ fields: [(String, Field)]) {
        let classUID = classRecord(className, superclasses)
        var pairs = [(plist.str("$class"), plist.ref(classUID))]
        for (key, value) in fields {
            let keyIndex = plist.str(key)
            let valueIndex: Int
            switch value {
            case .ref(let target): valueIndex = plist.ref(target)
            case .int(let i): valueIndex = plist.add(.integer(i))
            case .bool(let b): valueIndex = plist.add(.bool(b))
            case .real(let d): valueIndex = plist.add(.real(d))
            case .refs(let targets):
                let items = targets.map { plist.ref($0) }
                valueIndex = plist.add(.array(items))
            }
            pairs.append((keyIndex, valueIndex))
        }
        entries[Int(uid)] = plist.add(.dictionary(pairs))
    }

    /// An NSArray of these UIDs.
    mutating func array(_ items: [UInt64]) -> UInt64 {
        object("NSArray", ["NSObject"], [("NS.objects", .refs(items))])
    }

    /// An NSSet of these UIDs.
    mutating func set(_ items: [UInt64]) -> UInt64 {
        object("NSSet", ["NSObject"], [("NS.objects", .refs(items))])
    }

    /// An NSDictionary (archived as NSMutableDictionary, as Core Data does) from key UIDs to value UIDs.
    mutating func dictionary(_ pairs: [(UInt64, UInt64)]) -> UInt64 {
        object("NSMutableDictionary", ["NSDictionary", "NSObject"], [("NS.keys", .refs(pairs.map(\.0))), ("NS.objects", .refs(pairs.map(\.1)))])
    }

    private mutating func classRecord(_ name: String, _ superclasses: [String]) -> UInt64 {
        if let uid = classes[name] { return uid }
        let names = ([name] + superclasses).map { plist.str($0) }
        let record = plist.add(.dictionary([(plist.str("$classname"), plist.str(name)), (plist.str("$classes"), plist.add(.array(names)))]))
        entries.append(record)
        classes[name] = UInt64(entries.count - 1)
        return UInt64(entries.count - 1)
    }

    /// The archive with `root` as `$top.root`; unfilled reservations become `$null`.
    func build(root: UInt64) -> Data {
        var b = plist
        let null = entries[0] ?? 0
        let objects = b.add(.array(entries.map { $0 ?? null }))
        let top = b.add(.dictionary([(b.str("root"), b.ref(root))]))
        b.top = b.add(.dictionary([
            (b.str("$archiver"), b.str("NSKeyedArchiver")), (b.str("$top"), top), (b.str("$objects"), objects),
            (b.str("$version"), b.add(.integer(100_000))),
        ]))
        return b.build()
    }
}

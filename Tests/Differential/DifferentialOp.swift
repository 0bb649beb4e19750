import Foundation

/// One step of a differential sequence. Objects are named by their `uid` attribute; a step naming an object
/// that does not exist (never inserted, rolled back, or deleted) is skipped by every side alike.
public enum DifferentialOp: Sendable, Hashable, CustomStringConvertible {
    case insertOwner(uid: Int64, name: String, score: Int64?)
    case insertItem(uid: Int64, special: Bool, title: String, qty: Int64, price: Double, note: String?, level: Int64)
    case insertTag(uid: Int64, label: String)
    case setString(uid: Int64, key: String, value: String?)
    case setInteger(uid: Int64, key: String, value: Int64?)
    case setPrice(uid: Int64, value: Double)
    case setOwner(item: Int64, owner: Int64?)
    case tag(item: Int64, tag: Int64)
    case untag(item: Int64, tag: Int64)
    case pin(tag: Int64, item: Int64)
    case unpin(tag: Int64, item: Int64)
    case enqueue(owner: Int64, item: Int64, index: Int)
    case dequeue(owner: Int64, item: Int64)
    case moveInQueue(owner: Int64, from: Int, to: Int)
    case delete(uid: Int64)
    case save
    case rollback
    case refreshUnchanged(uid: Int64)
    case fetch(FetchSpec)
    case checkRelationships

    public var description: String {
        switch self {
        case let .insertOwner(uid, name, score): return "insert Owner uid=\(uid) name=\(name.debugDescription) score=\(score.map(String.init) ?? "nil")"
        case let .insertItem(uid, special, title, qty, price, note, level):
            return "insert \(special ? "Special" : "Item") uid=\(uid) title=\(title.debugDescription) qty=\(qty) price=\(price) note=\(note?.debugDescription ?? "nil")\(special ? " level=\(level)" : "")"
        case let .insertTag(uid, label): return "insert Tag uid=\(uid) label=\(label.debugDescription)"
        case let .setString(uid, key, value): return "set #\(uid).\(key) = \(value?.debugDescription ?? "nil")"
        case let .setInteger(uid, key, value): return "set #\(uid).\(key) = \(value.map(String.init) ?? "nil")"
        case let .setPrice(uid, value): return "set #\(uid).price = \(value)"
        case let .setOwner(item, owner): return "set #\(item).owner = \(owner.map { "#\($0)" } ?? "nil")"
        case let .tag(item, tag): return "add #\(tag) to #\(item).tags"
        case let .untag(item, tag): return "remove #\(tag) from #\(item).tags"
        case let .pin(tag, item): return "add #\(item) to #\(tag).pinned"
        case let .unpin(tag, item): return "remove #\(item) from #\(tag).pinned"
        case let .enqueue(owner, item, index): return "insert #\(item) into #\(owner).queue at \(index)"
        case let .dequeue(owner, item): return "remove #\(item) from #\(owner).queue"
        case let .moveInQueue(owner, from, to): return "move #\(owner).queue[\(from)] to \(to)"
        case let .delete(uid): return "delete #\(uid)"
        case .save: return "save"
        case .rollback: return "rollback"
        case let .refreshUnchanged(uid): return "refresh #\(uid) (if unchanged)"
        case let .fetch(spec): return "fetch \(spec)"
        case .checkRelationships: return "compare every relationship"
        }
    }
}

/// A fetch: the entity, a predicate, sort keys, limit and offset.
public struct FetchSpec: Sendable, Hashable, CustomStringConvertible {
    public var entity: String
    public var includesSubentities: Bool
    public var predicate: PredicateSpec?
    public var sort: [SortSpec]
    public var limit: Int?
    public var offset: Int
    public var countOnly: Bool
    /// Read with `ObjectContext.forEach` in batches of this size instead of one fetch (nil: one fetch).
    public var walkBatchSize: Int? = nil

    /// True when the sort orders every pair of objects (it ends with `uid`), so limit and offset select the
    /// same objects whatever order ties would come in.
    public var isTotallyOrdered: Bool { sort.last?.key == "uid" }

    public var description: String {
        var s = (countOnly ? "count " : "") + entity + (includesSubentities ? "" : " (no subentities)")
        if let predicate { s += " where \(predicate.format)" }
        if !sort.isEmpty { s += " sorted by " + sort.map { "\($0.key) \($0.ascending ? "asc" : "desc")" }.joined(separator: ", ") }
        if let limit { s += " limit \(limit)" }
        if offset > 0 { s += " offset \(offset)" }
        if let walkBatchSize, !countOnly { s += " walked in batches of \(walkBatchSize)" }
        return s
    }
}

public struct SortSpec: Sendable, Hashable {
    public var key: String
    public var ascending: Bool
}

/// A predicate, kept as data so the reference evaluates it independently of the library's parser.
public indirect enum PredicateSpec: Sendable, Hashable {
    /// `key op value` where key is a dotted key path ending in an attribute, and value a literal.
    case compare(key: String, op: String, options: String, value: Literal)
    /// `key BETWEEN {lo, hi}`.
    case between(key: String, low: Int64, high: Int64)
    /// `key IN {values}`.
    case inList(key: String, values: [Int64])
    /// `key == nil` / `key != nil`.
    case isNil(key: String, negated: Bool)
    /// `rel == %@` / `rel != %@` with an object argument (a to-one, or SELF).
    case objectIs(key: String, uid: Int64, negated: Bool)
    /// `rel IN %@` with objects.
    case objectIn(key: String, uids: [Int64])
    /// `ANY|ALL|NONE toMany.key op value`.
    case aggregate(modifier: String, path: String, key: String, op: String, options: String, value: Literal)
    /// `toMany.@count op n`.
    case count(path: String, op: String, value: Int64)
    case and([PredicateSpec])
    case or([PredicateSpec])
    case not(PredicateSpec)

    public enum Literal: Sendable, Hashable {
        case string(String)
        case integer(Int64)
        case double(Double)

        var format: String {
            switch self {
            case .string(let s): return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            case .integer(let i): return String(i)
            case .double(let d): return String(d)
            }
        }
    }

    /// The predicate in NSPredicate's format language; objects appear as `%@` placeholders, in order.
    public var format: String {
        switch self {
        case let .compare(key, op, options, value): return "\(key) \(op)\(options) \(value.format)"
        case let .between(key, low, high): return "\(key) BETWEEN {\(low), \(high)}"
        case let .inList(key, values): return "\(key) IN {\(values.map(String.init).joined(separator: ", "))}"
        case let .isNil(key, negated): return "\(key) \(negated ? "!=" : "==") nil"
        case let .objectIs(key, _, negated): return "\(key) \(negated ? "!=" : "==") %@"
        case .objectIn(let key, _): return "\(key) IN %@"
        case let .aggregate(modifier, path, key, op, options, value): return "\(modifier) \(path).\(key) \(op)\(options) \(value.format)"
        case let .count(path, op, value): return "\(path).@count \(op) \(value)"
        case .and(let parts): return "(" + parts.map(\.format).joined(separator: " AND ") + ")"
        case .or(let parts): return "(" + parts.map(\.format).joined(separator: " OR ") + ")"
        case .not(let inner): return "NOT " + inner.format
        }
    }

    /// The uids standing behind `%@` placeholders, in format order: one object, or a list of them.
    public var objectArguments: [(uids: [Int64], isList: Bool)] {
        switch self {
        case let .objectIs(_, uid, _): return [([uid], false)]
        case .objectIn(_, let uids): return [(uids, true)]
        case .and(let parts), .or(let parts): return parts.flatMap(\.objectArguments)
        case .not(let inner): return inner.objectArguments
        default: return []
        }
    }
}

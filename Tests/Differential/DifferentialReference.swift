import Foundation

/// The expected state of a context, kept in plain Swift arrays and dictionaries and evaluated without the
/// library: what a user of Core Data expects every backend to return.
struct DifferentialReference {
    struct Object: Hashable {
        var entity: String
        var values: [String: Value]
        var owner: Int64?
        var queuedBy: Int64?
        /// The Tag whose `pinned` holds this item (a to-many without inverse: one owner).
        var pinnedBy: Int64?
        var tags: Set<Int64> = []
        var queue: [Int64] = []
    }

    enum Value: Hashable {
        case null, int(Int64), double(Double), string(String)
    }

    struct State {
        var objects: [Int64: Object] = [:]
        var inserted: Set<Int64> = []
        var deleted: Set<Int64> = []
    }

    var state = State()
    var saved = State()
    /// Every uid's entity, kept after deletes, for object arguments.
    var entityOf: [Int64: String] = [:]

    func exists(_ uid: Int64) -> Bool { state.objects[uid] != nil }
    /// Live: exists and not deleted in the context.
    func isLive(_ uid: Int64) -> Bool { state.objects[uid] != nil && !state.deleted.contains(uid) }
    func isItem(_ uid: Int64) -> Bool { ["Item", "Special"].contains(state.objects[uid]?.entity ?? "") }

    // MARK: - Changes

    mutating func insert(_ uid: Int64, entity: String, values: [String: Value]) {
        state.objects[uid] = Object(entity: entity, values: values)
        state.inserted.insert(uid)
        entityOf[uid] = entity
    }

    mutating func setOwner(item: Int64, owner: Int64?) { state.objects[item]?.owner = owner }

    mutating func enqueue(owner: Int64, item: Int64, index: Int) {
        if let old = state.objects[item]?.queuedBy { state.objects[old]?.queue.removeAll { $0 == item } }
        state.objects[owner]?.queue.insert(item, at: index)
        state.objects[item]?.queuedBy = owner
    }

    mutating func dequeue(owner: Int64, item: Int64) {
        state.objects[owner]?.queue.removeAll { $0 == item }
        state.objects[item]?.queuedBy = nil
    }

    /// An unsaved insert disappears with every reference to it; a saved object is deleted at the next save.
    mutating func delete(_ uid: Int64) {
        if state.inserted.contains(uid) {
            state.inserted.remove(uid)
            state.objects[uid] = nil
            nullify(uid)
        } else {
            state.deleted.insert(uid)
        }
    }

    private mutating func nullify(_ uid: Int64) {
        for key in Array(state.objects.keys) {
            guard var o = state.objects[key] else { continue }
            if o.owner == uid { o.owner = nil }
            if o.queuedBy == uid { o.queuedBy = nil }
            if o.pinnedBy == uid { o.pinnedBy = nil }
            o.tags.remove(uid)
            o.queue.removeAll { $0 == uid }
            state.objects[key] = o
        }
    }

    mutating func save() {
        for uid in state.deleted {
            state.objects[uid] = nil
            nullify(uid)
        }
        state.deleted = []
        state.inserted = []
        saved = state
    }

    mutating func rollback() { state = saved }

    // MARK: - Reading

    /// To-many members as the context shows them: deleted objects left out.
    /// The live members at the end of `relationship`, a to-many or a dotted path of them (flattened, as
    /// `ALL items.tags.label` reads every tag of every item).
    func members(_ uid: Int64, _ relationship: String) -> [Int64] {
        if let dot = relationship.firstIndex(of: ".") {
            let rest = String(relationship[relationship.index(after: dot)...])
            return members(uid, String(relationship[..<dot])).flatMap { members($0, rest) }
        }
        guard let o = state.objects[uid] else { return [] }
        let live: (Int64) -> Bool = { self.isLive($0) }
        switch relationship {
        case "items" where o.entity == "Owner":
            return state.objects.filter { $0.value.owner == uid }.map(\.key).filter(live).sorted()
        case "items":
            return state.objects.filter { $0.value.tags.contains(uid) }.map(\.key).filter(live).sorted()
        case "queue": return o.queue.filter(live)
        case "pinned": return state.objects.filter { $0.value.pinnedBy == uid }.map(\.key).filter(live).sorted()
        case "tags": return o.tags.filter(live).sorted()
        default: return []
        }
    }

    func value(_ uid: Int64, _ path: String) -> Value {
        var current = uid
        let parts = path.split(separator: ".").map(String.init)
        for (i, part) in parts.enumerated() {
            guard let o = state.objects[current] else { return .null }
            let isLast = i == parts.count - 1
            if part == "owner" || part == "queuedBy" {
                guard let next = part == "owner" ? o.owner : o.queuedBy else { return .null }
                if isLast { return .int(next) }
                current = next
                continue
            }
            if part == "SELF" { return .int(current) }
            return o.values[part] ?? .null
        }
        return .int(current)
    }
}

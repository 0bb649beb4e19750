import Foundation
import Switchyard

extension DifferentialRunner {
    /// Applies one step to every side and the reference, comparing whatever the step reads.
    func apply(
        _ step: DifferentialOp, to sides: inout [DifferentialSide], reference: inout DifferentialReference, summary: inout Summary
    ) throws {
        func fail(_ message: String) -> Failure { Failure(index: 0, message: message) }
        func each(_ body: (DifferentialSide) throws -> Void) throws {
            for side in sides {
                do { try body(side) } catch let f as Failure { throw f } catch { throw fail("\(side.name): \(error)") }
            }
        }
        let itemKeys: Set<String> = ["title", "note", "qty", "level"]
        switch step {
        case let .insertOwner(uid, name, score):
            var values: [String: DifferentialReference.Value] = ["uid": .int(uid), "name": .string(name)]
            values["score"] = score.map { .int($0) } ?? .null
            reference.insert(uid, entity: "Owner", values: values)
            try each { side in
                let o = try side.context.insert("Owner")
                try o.set("uid", uid)
                try o.set("name", name)
                try o.set("score", score)
                side.objects[uid] = o
            }
        case let .insertItem(uid, special, title, qty, price, note, level):
            var values: [String: DifferentialReference.Value] = [
                "uid": .int(uid), "title": .string(title), "qty": .int(qty), "price": .double(price),
                "note": note.map { .string($0) } ?? .null, "code": .string("c\(uid)"),
            ]
            if special { values["level"] = .int(level) }
            reference.insert(uid, entity: special ? "Special" : "Item", values: values)
            try each { side in
                let o = try side.context.insert(special ? "Special" : "Item")
                try o.set("uid", uid)
                try o.set("title", title)
                try o.set("qty", qty)
                try o.set("price", price)
                try o.set("note", note)
                try o.set("code", "c\(uid)")
                if special { try o.set("level", level) }
                side.objects[uid] = o
            }
        case let .insertTag(uid, label):
            reference.insert(uid, entity: "Tag", values: ["uid": .int(uid), "label": .string(label)])
            try each { side in
                let o = try side.context.insert("Tag")
                try o.set("uid", uid)
                try o.set("label", label)
                side.objects[uid] = o
            }
        case let .setString(uid, key, value):
            guard reference.isLive(uid), let entity = reference.state.objects[uid]?.entity,
                Self.accepts(entity, key, itemKeys: itemKeys), value != nil || key == "note"
            else { return }
            reference.state.objects[uid]?.values[key] = value.map { .string($0) } ?? .null
            try each { try $0.objects[uid]!.set(key, value) }
        case let .setInteger(uid, key, value):
            guard reference.isLive(uid), let entity = reference.state.objects[uid]?.entity,
                Self.accepts(entity, key, itemKeys: itemKeys), value != nil || key == "score"
            else { return }
            reference.state.objects[uid]?.values[key] = value.map { .int($0) } ?? .null
            try each { try $0.objects[uid]!.set(key, value) }
        case let .setPrice(uid, value):
            guard reference.isLive(uid), reference.isItem(uid) else { return }
            reference.state.objects[uid]?.values["price"] = .double(value)
            try each { try $0.objects[uid]!.set("price", value) }
        case let .setOwner(item, owner):
            guard reference.isLive(item), reference.isItem(item) else { return }
            if let owner, !(reference.isLive(owner) && reference.entityOf[owner] == "Owner") { return }
            reference.setOwner(item: item, owner: owner)
            try each { side in try side.objects[item]!.setRelatedObject(owner.map { side.objects[$0]! }, forKey: "owner") }
        case let .tag(item, tag), let .untag(item, tag):
            guard reference.isLive(item), reference.isItem(item), reference.isLive(tag), reference.entityOf[tag] == "Tag" else { return }
            let adding: Bool
            if case .tag = step { adding = true } else { adding = false }
            if adding { reference.state.objects[item]?.tags.insert(tag) } else { reference.state.objects[item]?.tags.remove(tag) }
            try each { side in
                let (i, t) = (side.objects[item]!, side.objects[tag]!)
                if adding { try i.addRelatedObject(t, forKey: "tags") } else { try i.removeRelatedObject(t, forKey: "tags") }
            }
        case let .pin(tag, item), let .unpin(tag, item):
            guard reference.isLive(item), reference.isItem(item), reference.isLive(tag), reference.entityOf[tag] == "Tag" else { return }
            if case .pin = step {
                reference.state.objects[item]?.pinnedBy = tag
                try each { side in try side.objects[tag]!.addRelatedObject(side.objects[item]!, forKey: "pinned") }
            } else {
                guard reference.state.objects[item]?.pinnedBy == tag else { return }
                reference.state.objects[item]?.pinnedBy = nil
                try each { side in try side.objects[tag]!.removeRelatedObject(side.objects[item]!, forKey: "pinned") }
            }
        case let .enqueue(owner, item, index):
            guard reference.isLive(owner), reference.entityOf[owner] == "Owner", reference.isLive(item), reference.isItem(item) else { return }
            let others = reference.members(owner, "queue").filter { $0 != item }
            let at = min(index, others.count)
            // The reference keeps deleted members in the raw list; insert relative to the live ones.
            let raw = reference.state.objects[owner]!.queue.filter { $0 != item }
            let rawIndex = at < others.count ? raw.firstIndex(of: others[at])! : raw.count
            reference.enqueue(owner: owner, item: item, index: rawIndex)
            try each { side in try side.objects[owner]!.insertRelatedObject(side.objects[item]!, at: at, forKey: "queue") }
        case let .dequeue(owner, item):
            guard reference.isLive(owner), reference.entityOf[owner] == "Owner", reference.isLive(item),
                reference.members(owner, "queue").contains(item)
            else { return }
            reference.dequeue(owner: owner, item: item)
            try each { side in try side.objects[owner]!.removeRelatedObject(side.objects[item]!, forKey: "queue") }
        case let .moveInQueue(owner, from, to):
            guard reference.isLive(owner), reference.entityOf[owner] == "Owner" else { return }
            var live = reference.members(owner, "queue")
            guard live.indices.contains(from), live.indices.contains(to) else { return }
            live.insert(live.remove(at: from), at: to)
            let deletedMembers = reference.state.objects[owner]!.queue.filter { !reference.isLive($0) }
            reference.state.objects[owner]?.queue = live + deletedMembers
            try each { try $0.objects[owner]!.moveRelatedObject(from: from, to: to, forKey: "queue") }
        case let .delete(uid):
            guard reference.isLive(uid) else { return }
            reference.delete(uid)
            try each { side in try side.context.delete(side.objects[uid]!) }
        case .save:
            reference.save()
            summary.saves += 1
            try each { try $0.context.save() }
        case .rollback:
            reference.rollback()
            try each { $0.context.rollback() }
        case let .refreshUnchanged(uid):
            guard reference.exists(uid), !reference.state.inserted.contains(uid) else { return }
            try each { side in
                let o = side.objects[uid]!
                if !o.hasChanges { try side.context.refresh(o) }
            }
        case .fetch(let spec):
            try compareFetch(spec, sides: sides, reference: reference)
            summary.fetches += 1
            if spec.walkBatchSize != nil, !spec.countOnly { summary.walks += 1 }
        case .checkRelationships:
            try compareRelationships(sides: sides, reference: reference)
        }
    }

    static func accepts(_ entity: String, _ key: String, itemKeys: Set<String>) -> Bool {
        switch entity {
        case "Owner": return key == "name" || key == "score"
        case "Tag": return key == "label"
        case "Special": return itemKeys.contains(key)
        default: return itemKeys.contains(key) && key != "level"
        }
    }

    func compareFetch(_ spec: FetchSpec, sides: [DifferentialSide], reference: DifferentialReference) throws {
        let expected = reference.fetch(spec)
        var unbounded = spec
        unbounded.limit = nil
        unbounded.offset = 0
        let allMatches = reference.fetch(unbounded)
        var first: (name: String, uids: [Int64])?
        for side in sides {
            guard let request = try side.request(spec) else { return }
            let got: [Int64]
            do {
                if spec.countOnly {
                    let n = try side.context.count(request)
                    guard n == expected.count else {
                        throw Failure(index: 0, message: "\(side.name) counted \(n), the reference \(expected.count)")
                    }
                    continue
                }
                if let batchSize = spec.walkBatchSize {
                    var walked: [ManagedObject] = []
                    try side.context.forEach(request, batchSize: batchSize) { walked.append($0) }
                    got = try side.uids(walked)
                } else {
                    got = try side.uids(side.context.fetch(request))
                }
            } catch let f as Failure { throw f } catch {
                throw Failure(index: 0, message: "\(side.name) failed: \(error)")
            }
            if let first, first.uids != got {
                throw Failure(index: 0, message: "\(side.name) returned \(got), \(first.name) returned \(first.uids) (reference \(expected))")
            }
            if first == nil { first = (side.name, got) }
            if spec.isTotallyOrdered || (spec.sort.isEmpty && (spec.limit ?? 0) == 0 && spec.offset == 0) {
                let comparable = spec.isTotallyOrdered ? got : got.sorted()
                let wanted = spec.isTotallyOrdered ? expected : expected.sorted()
                guard comparable == wanted else {
                    throw Failure(index: 0, message: "\(side.name) returned \(got), the reference expects \(expected)")
                }
            } else {
                guard got.count == expected.count, Set(got).isSubset(of: Set(allMatches)) else {
                    throw Failure(index: 0, message: "\(side.name) returned \(got), the reference allows \(expected.count) of \(allMatches)")
                }
            }
        }
    }

    func compareRelationships(sides: [DifferentialSide], reference: DifferentialReference) throws {
        for (uid, object) in reference.state.objects.sorted(by: { $0.key < $1.key }) where reference.isLive(uid) {
            let keys: [(String, Bool)]
            switch object.entity {
            case "Owner": keys = [("items", false), ("queue", true)]
            case "Tag": keys = [("items", false), ("pinned", false)]
            default: keys = [("tags", false)]
            }
            for (key, ordered) in keys {
                let expected = reference.members(uid, key)
                for side in sides {
                    let got = try side.uids(try side.objects[uid]!.relatedObjects(forKey: key))
                    guard (ordered ? got : got.sorted()) == expected else {
                        throw Failure(index: 0, message: "\(side.name): #\(uid).\(key) is \(got), the reference expects \(expected)")
                    }
                }
            }
            if object.entity != "Owner" && object.entity != "Tag" {
                for key in ["owner", "queuedBy"] {
                    let expected = key == "owner" ? object.owner : object.queuedBy
                    for side in sides {
                        let got = try side.objects[uid]!.relatedObject(forKey: key).map { try $0.get("uid", as: Int64.self) ?? -1 }
                        guard got == expected else {
                            throw Failure(index: 0, message: "\(side.name): #\(uid).\(key) is \(got.map(String.init) ?? "nil"), the reference expects \(expected.map(String.init) ?? "nil")")
                        }
                    }
                }
            }
        }
    }
}

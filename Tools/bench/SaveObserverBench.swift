import Foundation
import Switchyard
import Synchronization

/// `bench --observed-saves N`: N saves (each updating 20 objects and inserting 5) of the object-layer entity,
/// once with nobody observing saves and once with a save observer (a callback that merges nothing, and a
/// context merging every notification), on each backend. The ratio is what an observer costs a save; a save
/// nobody observes only reads one flag (issue #16 asks that it not slow down by more than 5%). A third run
/// records persistent history (`StoreOptions.persistentHistory`, nobody observing): what history costs a save.
struct SaveObserverBench {
    let saves: Int
    let dir: URL
    var backends = ["sqlite", "lmdb"]
    let repeats: Int

    func run(log: (String) -> Void) throws -> [BenchResult] {
        let model = try ObjectLayerBench.model()
        var results: [BenchResult] = []
        for (name, kind) in [("SQLite", StoreType.sqlite), ("LMDB", .lmdb)] where backends.contains(name.lowercased()) {
            log("save observers (\(name)): \(saves) saves")
            var unobserved = Double.infinity, observed = Double.infinity, merged = Double.infinity, history = Double.infinity
            for round in 0..<max(1, repeats) {
                unobserved = min(unobserved, try measure(model, kind, "\(name)-plain-\(round)", observer: .none))
                observed = min(observed, try measure(model, kind, "\(name)-callback-\(round)", observer: .callback))
                merged = min(merged, try measure(model, kind, "\(name)-merge-\(round)", observer: .merging))
                history = min(history, try measure(model, kind, "\(name)-history-\(round)", observer: .history))
            }
            results.append(BenchResult(
                backend: "\(name) saves", operation: "\(saves) saves of 20 updates + 5 inserts, with a save observer",
                baselines: ["nobody observing": unobserved], switchyard: observed,
                extras: ["another context merging each save": merged, "persistent history recorded, nobody observing": history]))
        }
        return results
    }

    private enum Observer { case none, callback, merging, history }

    private func measure(_ model: ObjectModel, _ kind: StoreType, _ name: String, observer: Observer) throws -> Double {
        let coordinator = StoreCoordinator(model: model)
        let url = dir.appendingPathComponent(name + (kind == .sqlite ? ".sqlite" : ".lmdb"))
        try coordinator.addStore(kind, configuration: "Main", at: url, options: StoreOptions(persistentHistory: observer == .history))
        let writer = ObjectContext(coordinator: coordinator)
        var objects: [ManagedObject] = []
        for i in 0..<1_000 { objects.append(try insert(writer, i)) }
        try writer.save()
        let reader = ObjectContext(coordinator: coordinator)
        _ = try reader.fetch(FetchRequest(entityName: BenchItem.entityName))
        let pending = Mutex<[SaveNotification]>([])
        var observation: SaveObservation?
        switch observer {
        case .none, .history: break
        case .callback, .merging: observation = coordinator.addSaveObserver { note in pending.withLock { $0.append(note) } }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        for s in 0..<saves {
            for k in 0..<20 { try objects[(s * 20 + k) % objects.count].set("count", Int64(s)) }
            for k in 0..<5 { _ = try insert(writer, 1_000 + s * 5 + k) }
            try writer.save()
            if observer == .merging {
                for note in pending.withLock({ list in defer { list = [] }; return list }) { try reader.mergeChanges(from: note) }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        observation?.cancel()
        for store in coordinator.stores { try coordinator.destroyStore(store) }
        return seconds
    }

    private func insert(_ context: ObjectContext, _ i: Int) throws -> ManagedObject {
        let item = try context.insert(BenchItem.entityName)
        try item.set("name", "item-\(i)")
        try item.set("count", Int64(i))
        try item.set("score", Double(i) / 7)
        try item.set("createdAt", Date(timeIntervalSinceReferenceDate: Double(i)))
        try item.set("flag", i % 2 == 0)
        return item
    }
}

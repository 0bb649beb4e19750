import Foundation
import GRDB
import Switchyard

/// `bench --batch-rows N`: a batch update of half of N rows (`count` set where `score >= median`) and a batch
/// delete of the other half (`flag == YES`), through `StoreCoordinator.batchUpdate` / `batchDelete`, against the
/// same change done through objects (fetch, set or delete each, save) and, on SQLite, against the single SQL
/// statement on the same Core Data table (`UPDATE ZITEM SET ZCOUNT = ?, Z_OPT = Z_OPT + 1 WHERE ZSCORE >= ?`).
/// Each side starts from its own freshly written store with the same rows.
struct BatchBench {
    let rows: Int
    let dir: URL
    var backends = ["sqlite", "lmdb"]

    func run(log: (String) -> Void) throws -> [BenchResult] {
        var results: [BenchResult] = []
        let threshold = Double(rows / 2) / 7
        for (name, kind) in [("SQLite", StoreType.sqlite), ("LMDB", .lmdb)] where backends.contains(name.lowercased()) {
            log("batch operations (\(name)): \(rows) rows")
            let update = try FetchPredicate(format: "score >= %f", threshold), delete = try FetchPredicate(format: "flag == YES")
            let batchUpdate = try timed(kind, "\(name)-bu") { coordinator in
                _ = try coordinator.batchUpdate(BenchItem.entityName, where: update, set: ["count": .integer(7)])
            }
            let objectsUpdate = try timed(kind, "\(name)-ou") { coordinator in
                let context = ObjectContext(coordinator: coordinator)
                for item in try context.fetch(FetchRequest(entityName: BenchItem.entityName, predicate: update)) { try item.set("count", Int64(7)) }
                try context.save()
            }
            let batchDelete = try timed(kind, "\(name)-bd") { coordinator in
                _ = try coordinator.batchDelete(BenchItem.entityName, where: delete)
            }
            let objectsDelete = try timed(kind, "\(name)-od") { coordinator in
                let context = ObjectContext(coordinator: coordinator)
                for item in try context.fetch(FetchRequest(entityName: BenchItem.entityName, predicate: delete)) { try context.delete(item) }
                try context.save()
            }
            var updateBaselines = ["through objects": objectsUpdate], deleteBaselines = ["through objects": objectsDelete]
            if kind == .sqlite {
                updateBaselines["one SQL statement"] = try timedSQL("\(name)-su", "UPDATE ZITEM SET ZCOUNT = ?, Z_OPT = Z_OPT + 1 WHERE ZSCORE >= ?", [7, threshold])
                deleteBaselines["one SQL statement"] = try timedSQL("\(name)-sd", "DELETE FROM ZITEM WHERE ZFLAG = 1", [])
            }
            results.append(BenchResult(
                backend: "\(name) batch", operation: "batch update of \(rows / 2) of \(rows) rows", baselines: updateBaselines, switchyard: batchUpdate))
            results.append(BenchResult(
                backend: "\(name) batch", operation: "batch delete of \(rows / 2) of \(rows) rows", baselines: deleteBaselines, switchyard: batchDelete))
        }
        return results
    }

    /// A store of `rows` items at `name`, closed again.
    private func makeStore(_ kind: StoreType, _ name: String) throws -> URL {
        let url = dir.appendingPathComponent(name + (kind == .sqlite ? ".sqlite" : ".lmdb"))
        let coordinator = StoreCoordinator(model: try ObjectLayerBench.model())
        try coordinator.addStore(kind, configuration: "Main", at: url)
        var batch: [[String: AttributeValue]] = []
        for i in 0..<rows {
            batch.append([
                "name": .string("item-\(i)"), "count": .integer(Int64(i)), "score": .double(Double(i) / 7),
                "createdAt": .date(Date(timeIntervalSinceReferenceDate: Double(i))), "flag": .bool(i % 2 == 0),
            ])
            if batch.count == 20_000 { try coordinator.batchInsert(BenchItem.entityName, batch); batch = [] }
        }
        if !batch.isEmpty { try coordinator.batchInsert(BenchItem.entityName, batch) }
        for store in coordinator.stores { try coordinator.removeStore(store) }
        return url
    }

    private func timed(_ kind: StoreType, _ name: String, _ body: (StoreCoordinator) throws -> Void) throws -> Double {
        let url = try makeStore(kind, name)
        let coordinator = StoreCoordinator(model: try ObjectLayerBench.model())
        try coordinator.addStore(kind, configuration: "Main", at: url)
        let start = DispatchTime.now().uptimeNanoseconds
        try body(coordinator)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private func timedSQL(_ name: String, _ sql: String, _ arguments: StatementArguments) throws -> Double {
        let url = try makeStore(.sqlite, name)
        var configuration = Configuration()
        configuration.journalMode = .wal
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        let start = DispatchTime.now().uptimeNanoseconds
        try queue.write { db in try db.execute(sql: sql, arguments: arguments) }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

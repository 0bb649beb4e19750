import Foundation
import Switchyard
import Testing

/// A fetch that reads more rows than a walk reads before giving its store's pages back (LMDB drops the
/// file's mapped pages past 150,000 rows so a large fetch holds its objects, not also the file) reads every
/// row, in order, with its values; so does a second fetch over pages given back by the first.
struct LargeFetchTests {
    static let count = 155_000

    /// A coordinator whose one store holds `count` items, saved through the store in batches.
    static func filled(_ backend: Backend, in dir: TempDir, count: Int) throws -> (StoreCoordinator, any PersistentStore) {
        let coordinator = try backend.coordinator(LargeSaveTests.model(), in: dir)
        let store = try #require(coordinator.stores.first)
        var next = 0
        while next < count {
            let n = min(50_000, count - next)
            let keys = try store.allocatePrimaryKeys(for: "Item", count: n)
            try store.save(StoreChangeSet(inserts: keys.map { pk in
                let i = Int(pk) - 1
                return StoreRow(entityName: "Item", primaryKey: pk, values: [
                    "code": .string("c\(i)"), "rank": .integer(Int64(i)), "note": i % 2 == 0 ? .string("n\(i)") : .null,
                ])
            }))
            next += n
        }
        return (coordinator, store)
    }

    @Test(arguments: Backend.everyStore)
    func aFetchOfMoreRowsThanAWalkHoldsReadsThemAll(backend: Backend) throws {
        let dir = try TempDir()
        let (coordinator, _) = try Self.filled(backend, in: dir, count: Self.count)
        for pass in 0..<2 {
            // A scan (the predicate has no index), and a fetch with no predicate.
            let predicate = pass == 0 ? try FetchPredicate(format: "rank >= 0") : nil
            let items = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Item", predicate: predicate))
            #expect(items.count == Self.count)
            var mismatches: [Int] = []
            for (i, item) in items.enumerated() {
                let note: String? = i % 2 == 0 ? "n\(i)" : nil
                if try item.get("code", as: String.self) != "c\(i)" || item.get("rank", as: Int64.self) != Int64(i)
                    || item.get("note", as: String.self) != note
                {
                    mismatches.append(i)
                }
            }
            #expect(mismatches.prefix(5) == [], "pass \(pass): \(mismatches.count) rows differ")
        }
    }

    /// A store moved on another thread while a long read of it runs: the move waits for the read, which reads
    /// every row (LMDB gives the file's pages back partway through, inside the read, while the move's close
    /// waits: that must not wait for the close, which waits for the read); then the move goes through.
    @Test(arguments: [Backend.sqlite, .lmdb])
    func aStoreMovedDuringALongReadWaitsForIt(backend: Backend) throws {
        let dir = try TempDir()
        let count = 155_000
        let (coordinator, store) = try Self.filled(backend, in: dir, count: count)
        let finished = DispatchSemaphore(value: 0)
        let movedSignal = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var delivered = 0
        nonisolated(unsafe) var readError: (any Error)?
        nonisolated(unsafe) var moveError: (any Error)?
        nonisolated(unsafe) var moved: (any PersistentStore)?
        let destination = dir.url.appendingPathComponent(backend == .lmdb ? "moved.lmdb" : "moved.sqlite")
        let reader = Thread {
            do {
                try store.fetch(StoreFetchRequest(entityName: "Item")) { _ in
                    delivered += 1
                    guard delivered == 1_000 else { return }
                    Thread {
                        do { moved = try coordinator.moveStore(store, to: destination) } catch { moveError = error }
                        movedSignal.signal()
                    }.start()
                    // Time for the move to start waiting for this read.
                    Thread.sleep(forTimeInterval: 0.5)
                }
            } catch {
                readError = error
            }
            finished.signal()
        }
        reader.start()
        let read = finished.wait(timeout: .now() + 60)
        #expect(read == .success, "the read did not finish (\(delivered) of \(count) rows delivered)")
        guard read == .success else { return }
        #expect(movedSignal.wait(timeout: .now() + 60) == .success, "the move did not finish")
        #expect(readError == nil)
        #expect(moveError == nil)
        #expect(delivered == count)
        let movedStore = try #require(moved)
        #expect(movedStore.url?.standardizedFileURL == destination.standardizedFileURL)
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Item")) == count)
    }
}

import Foundation
import Switchyard
import Testing

/// A store-level read hands rows to a closure while its read is open. Closing that store from inside the
/// closure (destroy, move, replace) waits for every read to end, its own included, and hung forever; on LMDB a
/// save inside the closure that needs a larger map hung the same way (the map cannot grow while a read of this
/// process is open). Each is now an error naming the store and the operation, the read goes on, and the same
/// operation succeeds once the read is over.
@Suite struct ReadCallbackReentryTests {
    enum Operation: String, CaseIterable, CustomTestStringConvertible {
        case destroy, move, replace
        var testDescription: String { rawValue }
    }

    /// Runs `body` on a thread of its own; false when it has not returned within 30 seconds (a hang).
    static func finishes(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + 30) == .success
    }

    static func filled(_ backend: Backend, in dir: TempDir, count: Int) throws -> (StoreCoordinator, any PersistentStore) {
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try backend.add(to: coordinator, configuration: "Main", in: dir.url)
        let context = ObjectContext(coordinator: coordinator)
        for i in 0..<count { try Shop.order(context, "o\(i)", qty: Int64(i)) }
        try context.save()
        return (coordinator, store)
    }

    @Test(arguments: [Backend.sqlite, .lmdb], Operation.allCases)
    func closingAStoreFromInsideItsOwnReadIsAnError(backend: Backend, operation: Operation) throws {
        let dir = try TempDir()
        let (coordinator, store) = try Self.filled(backend, in: dir, count: 20)
        let ext = backend == .lmdb ? "lmdb" : "sqlite"
        let copy = dir.url.appendingPathComponent("copy.\(ext)")
        try coordinator.copyStore(store, to: copy)
        let destination = dir.url.appendingPathComponent("moved.\(ext)")
        @Sendable func run(_ store: any PersistentStore) throws {
            switch operation {
            case .destroy: try coordinator.destroyStore(store)
            case .move: _ = try coordinator.moveStore(store, to: destination)
            case .replace: _ = try coordinator.replaceStore(store, withContentsOf: copy)
            }
        }
        nonisolated(unsafe) var delivered = 0
        nonisolated(unsafe) var inside: (any Error)?
        nonisolated(unsafe) var readError: (any Error)?
        let finished = Self.finishes {
            do {
                try store.fetch(StoreFetchRequest(entityName: "Order")) { _ in
                    delivered += 1
                    if delivered == 5 {
                        do { try run(store) } catch { inside = error }
                    }
                }
            } catch {
                readError = error
            }
        }
        #expect(finished, "\(operation) from inside the store's own read hung")
        guard finished else { return }
        #expect(readError == nil)
        #expect(delivered == 20)   // the read went on
        let error = try #require(inside as? StoreError, "\(String(describing: inside))")
        #expect(error.localizedDescription.contains(store.displayPath))
        #expect(error.localizedDescription.contains("from inside a read or write of this store"), "\(error.localizedDescription)")
        // Nothing happened to the store: it reads as before, and the operation succeeds now.
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Order")) == 20)
        try run(store)
    }

    /// LMDB: a save from inside a read of the same store that needs more map than there is fails with an error
    /// saying why; the same save succeeds after the read (the map grows then).
    @Test func anLMDBSaveThatMustGrowTheMapFromInsideAReadIsAnError() throws {
        let dir = try TempDir()
        let coordinator = StoreCoordinator(model: try Shop.model())
        let store = try Backend.lmdb.add(to: coordinator, configuration: "Main", in: dir.url, options: StoreOptions(initialMapSize: 1 << 20))
        let context = ObjectContext(coordinator: coordinator)
        for i in 0..<10 { try Shop.order(context, "o\(i)", qty: Int64(i)) }
        try context.save()
        let big = String(repeating: "x", count: 4_000)
        @Sendable func bigSave() throws {
            let writer = ObjectContext(coordinator: coordinator)
            // Tags: their label is not indexed (an LMDB index key holds at most 511 bytes).
            for i in 0..<600 { try writer.insert("Tag").set("label", "\(big)\(i)") }
            try writer.save()
        }
        nonisolated(unsafe) var inside: (any Error)?
        nonisolated(unsafe) var delivered = 0
        let finished = Self.finishes {
            do {
                try store.fetch(StoreFetchRequest(entityName: "Order")) { _ in
                    delivered += 1
                    if delivered == 1 {
                        do { try bigSave() } catch { inside = error }
                    }
                }
            } catch {
                Issue.record("the read failed: \(error)")
            }
        }
        #expect(finished, "a save growing the map from inside a read hung")
        guard finished else { return }
        #expect(delivered == 10)
        let error = try #require(inside as? StoreError, "\(String(describing: inside))")
        #expect(error.localizedDescription.contains("from inside a read or write of this store"), "\(error.localizedDescription)")
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Tag")) == 0)   // nothing written
        try bigSave()
        #expect(try ObjectContext(coordinator: coordinator).count(FetchRequest(entityName: "Tag")) == 600)
    }
}

import Foundation
import Switchyard
import Testing

/// Core Data's `context.mergePolicy` at save time: a save that finds an object changed by another save since it
/// was read throws the conflict under the default (`NSErrorMergePolicy`), and otherwise resolves that object by
/// the policy and saves.
@Suite struct SaveMergePolicyTests {
    @Test(arguments: Backend.everyStore, [MergePolicy.error, .storeWins, .contextWins, .rollback])
    func aConflictingSaveFollowsTheContextsPolicy(_ backend: Backend, _ policy: MergePolicy) throws {
        let dir = try TempDir()
        let coordinator = try SaveNotificationTests.seeded(backend, in: dir)
        let reader = ObjectContext(coordinator: coordinator)
        reader.mergePolicy = policy
        let mine = try SaveNotificationTests.order(reader, "A1")
        let untouched = try SaveNotificationTests.order(reader, "A3")
        try mine.set("qty", Int64(100))
        try mine.set("code", "A1-mine")
        try untouched.set("width", 2.0)
        let writer = ObjectContext(coordinator: coordinator)
        let theirs = try SaveNotificationTests.order(writer, "A1")
        try theirs.set("qty", Int64(200))
        try theirs.set("width", 9.5)
        try writer.save()

        let check = ObjectContext(coordinator: coordinator)
        if policy == .error {
            #expect(throws: StoreError.self) { try reader.save() }
            let stored = try SaveNotificationTests.order(check, "A1")
            #expect(try stored.get("qty", as: Int64.self) == 200)
            #expect(try SaveNotificationTests.order(check, "A3").get("width", as: Double.self) == nil)
            return
        }
        try reader.save()
        #expect(!reader.hasChanges)
        #expect(try SaveNotificationTests.order(check, "A3").get("width", as: Double.self) == 2.0)
        let stored = try SaveNotificationTests.order(check, policy == .rollback ? "A1" : "A1-mine")
        #expect(try stored.get("width", as: Double.self) == 9.5)
        switch policy {
        case .storeWins: #expect(try stored.get("qty", as: Int64.self) == 200)
        case .contextWins: #expect(try stored.get("qty", as: Int64.self) == 100)
        case .rollback:
            #expect(try stored.get("qty", as: Int64.self) == 200)
            #expect(try mine.get("qty", as: Int64.self) == 200)
        case .error: break
        }
        #expect(try mine.get("width", as: Double.self) == 9.5)
    }

    /// An object another save deleted leaves the context at save under any policy but `.error`; the rest of
    /// the save is written.
    @Test(arguments: Backend.everyStore)
    func aRowDeletedElsewhereLeavesTheContextAndTheRestSaves(_ backend: Backend) throws {
        let dir = try TempDir()
        let coordinator = try SaveNotificationTests.seeded(backend, in: dir)
        let reader = ObjectContext(coordinator: coordinator)
        reader.mergePolicy = .contextWins
        let gone = try SaveNotificationTests.order(reader, "A2")
        try gone.set("qty", Int64(50))
        try Shop.order(reader, "N1", qty: 7)
        let writer = ObjectContext(coordinator: coordinator)
        try writer.delete(SaveNotificationTests.order(writer, "A2"))
        try writer.save()
        try reader.save()
        expectContextError("write to the object deleted elsewhere", isDetached) { try gone.set("qty", Int64(51)) }
        #expect(try BatchOperationTests.codes(coordinator) == ["A1", "A3", "N1"])
    }

    /// Several contexts on other threads changing the same object over and over, each with a merge policy: every
    /// save goes through (Core Data resolves such conflicts under the coordinator's lock and never throws them). A
    /// user trial (2026-11-29) saw `StoreError.conflict` "expected version 6, row is now at version 37": a save
    /// stopped retrying after one resolution per changed object, though the row kept moving on.
    @Test(arguments: Backend.allCases, [MergePolicy.storeWins, .contextWins])
    func savesUnderContentionWithAMergePolicyAllGoThrough(_ backend: Backend, _ policy: MergePolicy) async throws {
        let dir = try TempDir()
        let coordinator = try SaveNotificationTests.seeded(backend, in: dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for i in 0..<25 {
                        let context = ObjectContext(coordinator: coordinator)
                        context.mergePolicy = policy
                        let order = try SaveNotificationTests.order(context, "A1")
                        try order.set("qty", Int64(writer * 100 + i))
                        try order.set("width", Double(i))
                        try context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try BatchOperationTests.codes(coordinator) == ["A1", "A2", "A3"])
    }
}

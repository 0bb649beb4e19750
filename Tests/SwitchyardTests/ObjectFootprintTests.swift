import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Switchyard

/// What one fetched object costs: the fields a million fetched objects pay for (#11's memory goal). A field
/// added to `ManagedObject`, `ObjectSnapshot`, `RowValues` or `ChangedValues` moves these numbers.
@Suite struct ObjectFootprintTests {
    @Test func valueContainersKeepTheirSize() {
        #expect(MemoryLayout<RowValues>.size == 24)
        #expect(MemoryLayout<ObjectSnapshot?>.size == 40)
        // Built around two fields a `ManagedObject` keeps apart (the row in padding), not stored as it is.
        #expect(MemoryLayout<ChangedValues>.size == 12)
        #expect(MemoryLayout<StoreRow>.size == 64)
    }

    /// A fetched object, header included, fits glibc's 128-byte allocation class (120 usable bytes). glibc may
    /// hand a request a slightly larger free chunk (136 usable bytes were seen once, with other tests running),
    /// so the smallest of 32 objects is what the request needs.
    @Test(arguments: [Backend.sqlite, .lmdb])
    func aFetchedObjectFitsOneSmallAllocation(backend: Backend) throws {
        let directory = TemporaryDirectory()
        let coordinator = StoreCoordinator(model: try TestModels.library())
        _ = try backend.add(to: coordinator, configuration: "Main", in: directory)
        let context = ObjectContext(coordinator: coordinator)
        for i in 0..<32 {
            let book = try context.insert("Book")
            try book.set("title", "Dune \(i)")
        }
        try context.save()
        let fetched = try ObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Book"))
        #expect(fetched.count == 32)
        #expect(try Set(fetched.map { try $0.get("title", as: String.self) ?? "" }) == Set((0..<32).map { "Dune \($0)" }))
        #if os(Linux)
        let sizes = try fetched.map { try Self.usableSize(Unmanaged.passUnretained($0).toOpaque()) }
        #expect(sizes.min()! <= 120, "a fetched ManagedObject takes \(sizes.min()!) usable bytes (all: \(Set(sizes).sorted()))")
        #endif
    }

    #if os(Linux)
    /// glibc's malloc_usable_size (declared in malloc.h, which the Glibc module leaves out).
    static func usableSize(_ pointer: UnsafeMutableRawPointer) throws -> Int {
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"))
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer) -> Int
        return unsafeBitCast(symbol, to: UsableSize.self)(pointer)
    }
    #endif

    /// A new object's values: a row of a change block that many objects share (its values, 8 or 16 bytes each
    /// and a tag byte, then 8 bytes of change bits), where each object's own one-row block took two allocations,
    /// 144 bytes with malloc's overhead.
    @Test func newObjectsValuesShareBlocks() throws {
        let layout = RowLayout(names: ["name", "count", "score", "createdAt", "flag", "note"],
                               types: [.string, .integer64, .double, .date, .boolean, .string])
        #expect(layout.slots.stride == 72)
        let arena = ChangeArena()
        var objects = Array(repeating: ChangedValues(), count: 1000)
        for i in objects.indices {
            objects[i].set(.string("item-\(i)"), at: 0, layout: layout, arena: arena)
            objects[i].set(.integer(Int64(i)), at: 1, layout: layout, arena: arena)
        }
        // Each reads back its own values, and only the positions set are changes.
        #expect(objects.indices.allSatisfy { objects[$0][0] == .string("item-\($0)") && objects[$0][1] == .integer(Int64($0)) })
        #expect(objects.allSatisfy { $0.count == 2 && $0[2] == nil })
        // Blocks of 1, 2, 4, ... rows, up to 4,096 values (682 rows of six): a handful for a thousand objects.
        let blocks = Set(objects.map { ObjectIdentifier($0.storage!) })
        #expect(blocks.count <= 11, "\(blocks.count) blocks for 1,000 objects")
        // A row handed out (to a save) is not written again: the next change goes to a copy.
        var first = objects[0]
        let handedOut = first.handOut()
        let (block, row) = try #require(handedOut)
        first.set(.integer(-1), at: 1, layout: layout, arena: arena)
        #expect(block[row, 1] == .integer(0) && first[1] == .integer(-1) && first[0] == .string("item-0"))
        #expect(first.storage !== block)
        // Text closes a block once it passes 256 KB: a saved object kept alive keeps little of the others' text.
        let big = String(repeating: "x", count: 100_000)
        var texts = Array(repeating: ChangedValues(), count: 12)
        for i in texts.indices { texts[i].set(.string(big + "\(i)"), at: 0, layout: layout, arena: arena) }
        let textBlocks = Dictionary(grouping: texts.indices) { ObjectIdentifier(texts[$0].storage!) }
        #expect(textBlocks.values.allSatisfy { $0.count <= 3 }, "rows per block: \(textBlocks.values.map(\.count))")
        #expect(texts.indices.allSatisfy { texts[$0][0] == .string(big + "\($0)") })
    }
}

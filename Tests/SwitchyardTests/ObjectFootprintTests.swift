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
        #expect(MemoryLayout<ChangedValues>.size == 8)
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

    /// A new object's values: one block object in glibc's 64-byte class (56 usable bytes) plus its values, 8 or 16
    /// bytes each and a tag byte, where an AttributeValue took 24.
    @Test func aNewObjectsValuesTakeOneSmallBlock() throws {
        let layout = RowLayout(names: ["name", "count", "score", "createdAt", "flag", "note"],
                               types: [.string, .integer64, .double, .date, .boolean, .string])
        var values = ChangedValues()
        values.set("item-1", at: 0, layout: layout)
        values.set(.integer(1), at: 1, layout: layout)
        let row = values.rowValues(layout)
        #expect(row["name"] == "item-1" && row["count"] == 1)
        #expect(layout.slots.stride == 72)
        #if os(Linux)
        // The smallest of 32 blocks, as above.
        let blocks = (0..<32).map { _ in RowStorage(pattern: layout.slots, capacity: 1) }
        let sizes = try blocks.map { try Self.usableSize(Unmanaged.passUnretained($0).toOpaque()) }
        #expect(sizes.min()! <= 56, "a one-row RowStorage takes \(sizes.min()!) usable bytes (all: \(Set(sizes).sorted()))")
        #endif
    }
}

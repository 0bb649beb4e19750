// MARK: - HeldObjects

/// The objects a fetch registers while the store's read is open, held until the read ends and then handed over
/// one at a time, owned (see `ObjectContext.registerRows(_:targets:expecting:each:)`).
///
/// Handing each object to the caller inside the read ran the caller's code there (a typed fetch's
/// `EntityObject.init(managedObject:)`, which a hand-written type may use to read a relationship from the same
/// store); collecting them in an array and handing them over from it copied each object out, a retain and a
/// release per object. Here they are moved in and moved out by pointer.
struct HeldObjects: ~Copyable {
    private var base: UnsafeMutablePointer<ManagedObject>?
    private var count = 0
    private var capacity = 0

    init() {}

    deinit {
        // Left here only when the fetch failed: the objects are registered and the context still holds them.
        base?.deinitialize(count: count)
        base?.deallocate()
    }

    /// Keeps `object`, moved in.
    mutating func append(_ object: consuming ManagedObject) {
        if count == capacity {
            let grown = max(16, capacity * 2)
            let moved = UnsafeMutablePointer<ManagedObject>.allocate(capacity: grown)
            if let base {
                moved.moveInitialize(from: base, count: count)
                base.deallocate()
            }
            base = moved
            capacity = grown
        }
        (base.unsafelyUnwrapped + count).initialize(to: object)
        count += 1
    }

    /// Tells `expecting` how many objects there are (so the caller sizes its array once: grown by doubling, it
    /// took a quarter more memory at its peak, beside this buffer), then hands each to `body` in the order
    /// appended, moved out, and frees the storage.
    consuming func handOver(expecting: (Int) -> Void, to body: (consuming ManagedObject) -> Void) {
        let base = self.base, count = self.count
        discard self
        expecting(count)
        guard let base else { return }
        for i in 0..<count { body((base + i).move()) }
        base.deallocate()
    }
}

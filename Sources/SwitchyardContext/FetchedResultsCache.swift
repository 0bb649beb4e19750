import Foundation

// MARK: - FetchedResultsCache

/// An object's cached fetched-property results by property name.
///
/// Nearly every object caches one fetched property, if any: that one is kept inline, compared by name, and a
/// dictionary is made only for a second. A prefetch fills one of these per source object, and a dictionary per
/// object (its storage allocated, the name hashed twice) was a tenth of a 10,000-source prefetch in callgrind.
package struct FetchedResultsCache {
    private var first: (name: String, objects: [ManagedObject])?
    /// Every property after the first; empty while `first` is nil.
    private var rest: [String: [ManagedObject]] = [:]

    /// An empty cache.
    package init() {}

    /// True when no result is cached.
    package var isEmpty: Bool { first == nil }

    /// The cached result of fetched property `name`; assigning nil forgets it.
    package subscript(name: String) -> [ManagedObject]? {
        get {
            guard let first else { return nil }
            if first.name == name { return first.objects }
            return rest.isEmpty ? nil : rest[name]
        }
        set {
            guard let current = first else {
                if let newValue { first = (name, newValue) }
                return
            }
            if current.name == name {
                if let newValue {
                    first = (name, newValue)
                } else {
                    first = rest.popFirst().map { (name: $0.key, objects: $0.value) }
                }
            } else {
                rest[name] = newValue
            }
        }
    }
}

@available(*, unavailable, message: "cached results belong to one object of one context")
extension FetchedResultsCache: Sendable {}

import Foundation

// MARK: - FetchRequest

/// What a context or coordinator fetch asks for: an entity, an optional predicate, sort, limit and offset,
/// and optionally the stores to search.
///
/// ```swift
/// var request = FetchRequest(entityName: "Message")
/// request.predicate = try FetchPredicate(format: "chat.title == %@", "Team")
/// request.sortKeys = [SortKey("sentAt", ascending: false)]
/// request.fetchLimit = 20
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch (with its subentities unless `includesSubentities` is false).
    public var entityName: String
    /// Which objects match; `nil` matches all.
    public var predicate: FetchPredicate?
    /// The order of the results, ties broken by primary key.
    public var sortKeys: [SortKey]
    /// At most this many results; `nil` for no limit.
    public var fetchLimit: Int?
    /// Results to skip first.
    public var fetchOffset: Int
    /// Whether objects of subentities match (default true, as in Core Data).
    public var includesSubentities: Bool
    /// Identifiers (`NSStoreUUID`) of the stores to search; `nil` searches every store serving the entity.
    public var affectedStoreIdentifiers: [UUID]?

    /// A request for `entityName`, with an optional predicate, order, limit, offset and stores.
    public init(
        entityName: String, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = [],
        fetchLimit: Int? = nil, fetchOffset: Int = 0, includesSubentities: Bool = true,
        affectedStoreIdentifiers: [UUID]? = nil
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
        self.affectedStoreIdentifiers = affectedStoreIdentifiers
    }
}

// MARK: - Limits

extension FetchRequest {
    /// Whether `normalized()` would return the request unchanged (and throw nothing): callers on the hot path
    /// test this first rather than copy the request (a copy retains and releases each field).
    package var isNormalized: Bool {
        Self.limitsNeedNoChange(fetchLimit, fetchOffset)
    }

    /// Whether `checkLimits` would neither throw for nor change this limit and offset.
    package static func limitsNeedNoChange(_ limit: Int?, _ offset: Int) -> Bool {
        (limit.map { $0 > 0 } ?? true) && offset >= 0
    }

    /// The request with Core Data's reading of its limit: a `fetchLimit` of 0 means no limit. A negative limit
    /// or offset is `QueryError.invalidRequest`.
    package func normalized() throws -> FetchRequest {
        var request = self
        try Self.checkLimits(&request.fetchLimit, request.fetchOffset)
        return request
    }

    package static func checkLimits(_ limit: inout Int?, _ offset: Int) throws {
        if let l = limit, l < 0 { throw QueryError.invalidRequest("fetchLimit \(l) is negative (0 or nil means no limit)") }
        if offset < 0 { throw QueryError.invalidRequest("fetchOffset \(offset) is negative") }
        if limit == 0 { limit = nil }
    }
}

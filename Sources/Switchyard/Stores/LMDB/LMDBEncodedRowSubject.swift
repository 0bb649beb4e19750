import Foundation

// MARK: - LMDBEncodedRowSubject

/// A row read straight from its encoded bytes for a predicate that only names the entity's own attributes:
/// each value the predicate asks for is decoded on its own, the rest skipped, and no `StoreRow` is built.
/// Counting with such a predicate walks the table this way.
struct LMDBEncodedRowSubject: PredicateSubject {
    let bytes: UnsafeRawBufferPointer
    let primaryKey: Int64
    let schema: LMDBSchema

    func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        guard let name = keyPath.first else { return .single(.integer(primaryKey)) }
        precondition(keyPath.count == 1, "LMDBEncodedRowSubject serves attribute key paths only")
        var r = LMDBByteReader(bytes)
        let (layout, _) = try LMDBRowCoding.readHeader(&r, primaryKey: primaryKey, schema: schema)
        guard let position = layout.attributeIndex[name] else { return .single(.null) }
        return .single(try LMDBRowCoding.attribute(at: position, of: bytes, primaryKey: primaryKey, schema: schema))
    }

    /// Whether every key path of `predicate` is one of `entity`'s own persistent attributes (or SELF), so it can
    /// be evaluated on the encoded bytes.
    static func canEvaluate(_ predicate: FetchPredicate, entity: EntityDescription) -> Bool {
        predicate.keyPaths.allSatisfy { path in
            let components = path.first == "SELF" ? Array(path.dropFirst()) : path
            guard let first = components.first else { return true }
            guard components.count == 1, let attribute = entity.attribute(named: first) else { return false }
            return !attribute.isTransient
        }
    }
}

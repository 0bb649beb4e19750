import Foundation
import SwitchyardModel
import SwitchyardQuery

// MARK: - LMDBEncodedRowSubject

/// A row read straight from its encoded bytes for a predicate that only names the entity's own attributes:
/// each value the predicate asks for is decoded on its own, the rest skipped, and no `StoreRow` is built.
/// Counting with such a predicate walks the table this way.
package struct LMDBEncodedRowSubject: PredicateSubject {
    /// The attribute position last asked for, per entity layout: rows of one table mostly share a layout, so the
    /// name is looked up once per walk rather than once per row.
    package final class Positions {
        package var number = -1
        package var name = ""
        package var position: Int?
    }

    package let bytes: UnsafeRawBufferPointer
    package let primaryKey: Int64
    package let schema: LMDBSchema
    package let positions: Positions

    package func predicateValues(at keyPath: [String]) throws -> PredicateValue {
        guard let name = keyPath.first else { return .single(.integer(primaryKey)) }
        precondition(keyPath.count == 1, "LMDBEncodedRowSubject serves attribute key paths only")
        var r = LMDBByteReader(bytes)
        let (layout, _) = try LMDBRowCoding.readHeader(&r, primaryKey: primaryKey, schema: schema)
        if positions.number != layout.number || positions.name != name {
            positions.number = layout.number
            positions.name = name
            positions.position = layout.attributeIndex[name: name]
        }
        guard let position = positions.position else { return .single(.null) }
        while let found = try LMDBRowCoding.nextAttribute(&r, layout: layout, primaryKey: primaryKey) {
            if found == position { return .single(try LMDBRowCoding.decodeValue(&r)) }
            // No early stop at a higher position: a row's attributes come in any order (see `LMDBRowCoding`).
            try LMDBRowCoding.skipValue(&r)
        }
        return .single(layout.implicitDefault(at: position))
    }

    /// Whether every key path of `predicate` is one of `entity`'s own persistent attributes (or SELF), so it can
    /// be evaluated on the encoded bytes.
    package static func canEvaluate(_ predicate: FetchPredicate, entity: EntityDescription) -> Bool {
        predicate.keyPaths.allSatisfy { path in
            let components = path.first == "SELF" ? Array(path.dropFirst()) : path
            guard let first = components.first else { return true }
            guard components.count == 1, let attribute = entity.attribute(named: first) else { return false }
            return !attribute.isTransient
        }
    }
}

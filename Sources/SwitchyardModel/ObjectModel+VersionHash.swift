import Foundation

// MARK: - Version hashes

extension ObjectModel {
    /// Computes each entity's SHA-256 version hash over the inputs Core Data documents, and nothing else:
    /// entity name, parent hash, abstract flag, sorted property hashes, modifier. Default values, renaming
    /// identifiers, userInfo, delete rules and fetched properties do not contribute.
    package static func computeVersionHashes(_ ordered: [EntityDescription]) -> [EntityDescription] {
        var result = ordered
        var hashes: [String: Data] = [:]
        // `ordered` lists parents before children, so a parent's hash is ready when a child needs it.
        for i in result.indices {
            let entity = result[i]
            var propertyHashes: [(String, Data)] = entity.attributes.map { ($0.name, attributeHash($0)) }
            propertyHashes += entity.relationships.map { ($0.name, relationshipHash($0)) }
            var h = SHA256()
            h.update("entity\u{0}\(entity.name)\u{0}")
            h.update(entity.parentName.flatMap { hashes[$0] } ?? Data())
            h.update("\u{0}abstract=\(entity.isAbstract ? 1 : 0)\u{0}")
            for (_, hash) in propertyHashes.sorted(by: { $0.0 < $1.0 }) { h.update(hash) }
            h.update("\u{0}modifier=\(entity.versionHashModifier ?? "")")
            let digest = h.finalize()
            hashes[entity.name] = digest
            result[i].versionHash = digest
        }
        return result
    }

    package static func attributeHash(_ a: AttributeDescription) -> Data {
        SHA256.hash(
            "attribute\u{0}\(a.name)\u{0}optional=\(a.isOptional ? 1 : 0)\u{0}transient=\(a.isTransient ? 1 : 0)"
                + "\u{0}modifier=\(a.versionHashModifier ?? "")\u{0}type=\(a.type.rawValue)")
    }

    package static func relationshipHash(_ r: RelationshipDescription) -> Data {
        SHA256.hash(
            "relationship\u{0}\(r.name)\u{0}optional=\(r.isOptional ? 1 : 0)\u{0}transient=\(r.isTransient ? 1 : 0)"
                + "\u{0}modifier=\(r.versionHashModifier ?? "")\u{0}destination=\(r.destinationEntityName)"
                + "\u{0}inverse=\(r.inverseName ?? "")\u{0}min=\(r.minCount)\u{0}max=\(r.maxCount)"
                + "\u{0}toMany=\(r.isToMany ? 1 : 0)\u{0}ordered=\(r.isOrdered ? 1 : 0)")
    }
}

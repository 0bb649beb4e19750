import Foundation
import SwitchyardModel

// MARK: - Planning to-many links

extension StoreSplitter {
    /// How a to-many relationship is stored, for telling whether the source's links can be copied as they are.
    package enum ToManyKind: Equatable {
        case toOne
        /// The members hold the foreign key (a to-one inverse).
        case inverseBacked
        /// Links kept apart from the rows (SQLite join table, LMDB `links`).
        case manyToMany
        case noInverse
    }

    package static func kind(of relationship: RelationshipDescription, in model: ObjectModel) -> ToManyKind {
        if !relationship.isToMany { return .toOne }
        if model.isManyToMany(relationship) { return .manyToMany }
        return model.isInverseBackedToMany(relationship) ? .inverseBacked : .noInverse
    }

    /// The to-many relationships of the target model whose links (many-to-many) or positions (ordered) the
    /// split copies after the rows, with their ends in both models. A relationship whose two ends land in
    /// different outputs is a problem saying what to declare; one whose order or kind cannot be kept is a
    /// warning.
    package func planLinks(
        copies: [SplitPlan.EntityCopy], targetBySource: [String: String], problems: inout [String], warnings: inout [String]
    ) -> [(copy: SplitPlan.LinkCopy, mapping: LinkMapping)] {
        var sourceByTarget: [String: String] = [:]
        for (source, target) in targetBySource { sourceByTarget[target] = source }
        /// The copies of `entity`'s family that hold rows.
        func family(_ entity: String) -> [SplitPlan.EntityCopy] {
            copies.filter { $0.rowCount > 0 && sourceModel.entity($0.sourceEntity, isKindOf: entity) }
        }
        var links: [(copy: SplitPlan.LinkCopy, mapping: LinkMapping)] = []
        for target in targetModel.entities {
            guard let sourceName = sourceByTarget[target.name], let sourceEntity = sourceModel.entity(named: sourceName) else { continue }
            let matching = RenameMatching(relationshipsOf: sourceEntity, target)
            for relationship in target.relationships where !relationship.isTransient {
                guard let name = matching.sourceName(of: relationship.name),
                    let sourceEnd = sourceModel.end(of: name, from: sourceName), !sourceEnd.relationship.isTransient
                else { continue }
                let label = "\(target.name).\(relationship.name)"
                let owners = family(sourceEnd.entityName)
                let newKind = Self.kind(of: relationship, in: targetModel)
                let oldKind = Self.kind(of: sourceEnd.relationship, in: sourceModel)
                if newKind != oldKind {
                    if !owners.isEmpty {
                        warnings.append(
                            "relationship \(label) is \(Self.describe(oldKind)) in the source and \(Self.describe(newKind)) "
                                + "in the target model: its links are not copied")
                    }
                    continue
                }
                if newKind == .noInverse {
                    // Links (Core Data's hidden foreign key in the members' rows), copied like a many-to-many's.
                    let targetEnd = RelationshipEnd(entityName: target.name, relationship: relationship)
                    let members = family(sourceEnd.relationship.destinationEntityName)
                    if owners.isEmpty || members.isEmpty { continue }
                    let ordered = relationship.isOrdered && sourceEnd.relationship.isOrdered
                    if sourceEnd.relationship.isOrdered, !relationship.isOrdered {
                        warnings.append("ordered to-many \(label) is unordered in the target model: its members are copied, their order is not")
                    }
                    let destinations = Set((owners + members).map(\.destination))
                    guard destinations.count == 1, let destination = destinations.first else {
                        let configurations = Set((owners + members).map(\.configuration)).sorted()
                        problems.append(
                            "to-many without inverse \(label) crosses configurations \(configurations.joined(separator: " and ")): "
                                + "a split cannot carry it (its members keep their owner in their own rows); put both entities in "
                                + "one configuration, or declare fetched properties to reach them")
                        continue
                    }
                    links.append((
                        SplitPlan.LinkCopy(
                            entity: target.name, relationship: relationship.name, inverseEntity: relationship.destinationEntityName,
                            inverse: "", kind: .withoutInverse, ordered: ordered, inverseOrdered: false,
                            configuration: owners[0].configuration, destination: destination),
                        LinkMapping(target: targetEnd, targetInverse: targetEnd, source: sourceEnd, sourceInverse: sourceEnd)))
                    continue
                }
                guard newKind != .toOne, let inverseName = relationship.inverseName,
                    let targetInverse = targetModel.end(of: inverseName, from: relationship.destinationEntityName),
                    let oldInverseName = sourceEnd.relationship.inverseName,
                    let sourceInverse = sourceModel.end(of: oldInverseName, from: sourceEnd.relationship.destinationEntityName)
                else { continue }
                let targetEnd = RelationshipEnd(entityName: target.name, relationship: relationship)
                let isManyToMany = newKind == .manyToMany
                // A many-to-many is copied once, from the end Core Data names its join table after.
                if isManyToMany, targetModel.manyToManyEnds(of: relationship.name, from: target.name)?.first.key != targetEnd.key {
                    continue
                }
                let reflexive = targetEnd.key == targetInverse.key
                let ordered = relationship.isOrdered && sourceEnd.relationship.isOrdered
                let inverseOrdered = isManyToMany && !reflexive && targetInverse.relationship.isOrdered
                    && sourceInverse.relationship.isOrdered
                let members = family(sourceInverse.entityName)
                if owners.isEmpty || members.isEmpty { continue }
                if sourceEnd.relationship.isOrdered, !relationship.isOrdered {
                    warnings.append("ordered to-many \(label) is unordered in the target model: its members are copied, their order is not")
                }
                if isManyToMany, !reflexive, sourceInverse.relationship.isOrdered, !targetInverse.relationship.isOrdered {
                    warnings.append(
                        "ordered to-many \(targetInverse.key) is unordered in the target model: its members are copied, their order is not")
                }
                if !isManyToMany, !ordered { continue }
                let destinations = Set((owners + members).map(\.destination))
                guard destinations.count == 1, let destination = destinations.first else {
                    let configurations = Set((owners + members).map(\.configuration)).sorted()
                    problems.append(
                        "\(isManyToMany ? "many-to-many" : "ordered to-many") \(label) crosses configurations "
                            + "\(configurations.joined(separator: " and ")): a split cannot carry it; declare a join entity in "
                            + "one configuration holding Integer 64 (or storesplit.key) attributes for both ends, and fetched "
                            + "properties to reach it")
                    continue
                }
                links.append((
                    SplitPlan.LinkCopy(
                        entity: target.name, relationship: relationship.name, inverseEntity: targetInverse.entityName,
                        inverse: targetInverse.relationship.name, kind: isManyToMany ? .manyToMany : .order, ordered: ordered,
                        inverseOrdered: inverseOrdered, configuration: owners[0].configuration,
                        destination: destination),
                    LinkMapping(target: targetEnd, targetInverse: targetInverse, source: sourceEnd, sourceInverse: sourceInverse)))
            }
        }
        return links.sorted { ($0.copy.destination, $0.mapping.target.key) < ($1.copy.destination, $1.mapping.target.key) }
    }

    private static func describe(_ kind: ToManyKind) -> String {
        switch kind {
        case .toOne: return "a to-one"
        case .inverseBacked: return "a to-many with a to-one inverse"
        case .manyToMany: return "a many-to-many"
        case .noInverse: return "a to-many without inverse"
        }
    }
}

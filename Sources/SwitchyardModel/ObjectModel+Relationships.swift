import Foundation

// MARK: - RelationshipEnd

/// One side of a relationship: the entity that declares it (not a subentity inheriting it) and the relationship.
public struct RelationshipEnd: Sendable, Hashable {
    /// The entity declaring the relationship.
    public var entityName: String
    /// The relationship as that entity declares it.
    public var relationship: RelationshipDescription

    package init(entityName: String, relationship: RelationshipDescription) {
        self.entityName = entityName
        self.relationship = relationship
    }

    /// `Entity.relationship`: a name for the end that is unique in the model.
    public var key: String { entityName + "." + relationship.name }
}

// MARK: - Relationship lookups

extension ObjectModel {
    /// The inverse of `relationship`, looked up on its destination entity.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverse = relationship.inverseName else { return nil }
        return entity(named: relationship.destinationEntityName)?.relationship(named: inverse)
    }

    /// True for a persistent to-many whose inverse is to-many too: Core Data keeps those in a join table.
    public func isManyToMany(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany && !relationship.isTransient && inverse(of: relationship)?.isToMany == true
    }

    /// True for a persistent to-many whose members hold a to-one inverse (the foreign key lives in their rows).
    public func isInverseBackedToMany(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany && !relationship.isTransient && inverse(of: relationship).map { !$0.isToMany } == true
    }

    /// True for a persistent to-many with no inverse at all. Core Data keeps its members' owner in a hidden
    /// foreign-key column `Z<n><NAME>` of the destination's table (`n` the declaring entity's number), so a
    /// member belongs to at most one owner through it; Switchyard keeps the same rule on every backend.
    public func isToManyWithoutInverse(_ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany && !relationship.isTransient && relationship.inverseName == nil
    }

    /// True for a to-many whose members are kept as links apart from the members' own attributes: a
    /// many-to-many, or a to-many without inverse. The context tracks their member lists itself.
    package func isLinkBackedToMany(_ relationship: RelationshipDescription) -> Bool {
        isManyToMany(relationship) || isToManyWithoutInverse(relationship)
    }

    /// Every to-many without inverse whose owner or destination lies in `entities`' inheritance trees, as
    /// declared (each once), in a stable order.
    package func toManysWithoutInverse(touching entities: [EntityDescription]) -> [RelationshipEnd] {
        let roots = Set(entities.map(\.rootName))
        var ends: [RelationshipEnd] = []
        for entity in self.entities {
            for relationship in entity.relationships where isToManyWithoutInverse(relationship) {
                let destinationRoot = self.entity(named: relationship.destinationEntityName)?.rootName
                guard roots.contains(entity.rootName) || destinationRoot.map(roots.contains) == true else { continue }
                ends.append(RelationshipEnd(entityName: entity.name, relationship: relationship))
            }
        }
        return ends.sorted { $0.key < $1.key }
    }

    /// The end of relationship `name` as seen from `entityName`: the ancestor (or the entity itself) declaring it.
    public func end(of name: String, from entityName: String) -> RelationshipEnd? {
        guard var current = entity(named: entityName), current.relationship(named: name) != nil else { return nil }
        while true {
            if let own = current.relationships.first(where: { $0.name == name }) {
                return RelationshipEnd(entityName: current.name, relationship: own)
            }
            guard let parent = current.parentName, let next = entity(named: parent) else { return nil }
            current = next
        }
    }

    /// The two ends of the many-to-many `relationship` of `entityName`, the one Core Data names the join table
    /// after first: the end whose declaring entity has the lower entity number (by relationship name when
    /// both ends are on the same entity). `nil` unless the relationship is many-to-many.
    public func manyToManyEnds(of name: String, from entityName: String) -> (first: RelationshipEnd, second: RelationshipEnd)? {
        guard let mine = end(of: name, from: entityName), isManyToMany(mine.relationship),
            let inverseName = mine.relationship.inverseName,
            let theirs = end(of: inverseName, from: mine.relationship.destinationEntityName)
        else { return nil }
        return isFirst(mine, before: theirs) ? (mine, theirs) : (theirs, mine)
    }

    /// Every many-to-many pair with an end in `entities`' inheritance trees, each once, in a stable order.
    public func manyToManyPairs(touching entities: [EntityDescription]) -> [(first: RelationshipEnd, second: RelationshipEnd)] {
        var seen = Set<String>()
        var pairs: [(first: RelationshipEnd, second: RelationshipEnd)] = []
        let roots = Set(entities.map(\.rootName))
        for entity in self.entities where roots.contains(entity.rootName) {
            for relationship in entity.relationships {
                guard let pair = manyToManyEnds(of: relationship.name, from: entity.name),
                    seen.insert(pair.first.key).inserted
                else { continue }
                pairs.append(pair)
            }
        }
        return pairs.sorted { ($0.first.key) < ($1.first.key) }
    }

    private func isFirst(_ a: RelationshipEnd, before b: RelationshipEnd) -> Bool {
        let na = entity(named: a.entityName)?.entityNumber ?? 0
        let nb = entity(named: b.entityName)?.entityNumber ?? 0
        return na != nb ? na < nb : a.relationship.name <= b.relationship.name
    }
}

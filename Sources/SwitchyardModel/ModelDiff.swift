import Foundation

// MARK: - ModelDiff

/// Compares two models structurally — what a store holds, not how the version hashes were computed — so a
/// real Core Data store opened with its own unchanged model is recognized although Core Data's hashes differ
/// from ours.
///
/// Entities and properties match by name, else by the new one's renaming identifier (`elementID`). Inferable:
/// adding or removing an attribute, relationship (many-to-many included) or entity; optional <-> required with
/// a default; renames; ordered <-> unordered; to-one <-> to-many, including a to-one made to-many whose inverse
/// is to-many (the pair becomes a many-to-many: its keys become links); a type change every stored value
/// survives (integer widening, Binary <-> Transformable). Not inferable: any other type change, a new required
/// attribute (or a newly required one) without a default, a required to-one added, a changed destination or
/// parent, an entity made abstract, a many-to-many end made to-one (all but one link per row would be dropped),
/// a to-many whose inverse is replaced (other than by a rename) or is or becomes a to-many, a store sharing no
/// entity with the configuration (another model's). A to-many gaining a new to-one inverse, or losing its to-one
/// inverse along with that to-one, is inferable: each member's owner moves between the inverse's key and the
/// key kept for a to-many without inverse (`InverseConversion`), as Core Data's inferred mapping keeps them.
public enum ModelDiff {
    /// The report for a store of `configuration` written with `old` and opened with `new`. The old side is
    /// the old model's `configuration` when it declares one by that name, else all of its entities.
    public static func compare(from old: ObjectModel, to new: ObjectModel, configuration: String) -> CompatibilityReport {
        let newEntities = (try? new.entities(inConfiguration: configuration)) ?? new.entities
        let oldEntities = (try? old.entities(inConfiguration: configuration)) ?? old.entities
        return compare(old: oldEntities, oldModel: old, new: newEntities, newModel: new, configuration: configuration)
    }

    /// The report over explicit entity lists (a store's entities on each side).
    package static func compare(
        old oldEntities: [EntityDescription], oldModel: ObjectModel, new newEntities: [EntityDescription],
        newModel: ObjectModel, configuration: String
    ) -> CompatibilityReport {
        let oldByName = Dictionary(oldEntities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var matchedOld: Set<String> = []
        var result: [EntityChange] = []
        let context = Context(oldModel: oldModel, newModel: newModel)
        for entity in newEntities {
            guard let previous = context.oldEntity(for: entity, among: oldByName) else {
                result.append(EntityChange(name: entity.name, oldName: nil, kind: .added))
                continue
            }
            if let former = entity.renamingIdentifier, former != entity.name, oldByName[former] != nil,
                let namesake = oldByName[entity.name], (namesake.renamingIdentifier ?? namesake.name) != former
            {
                // Renamed from `former` while the store also has another entity by the new name (one that was not
                // itself renamed from `former`): a chain (the new E2 was E1, the new E3 was E2) or a swap. Core
                // Data matches by renaming identifier; matched by name, each row would stay with the wrong entity
                // and lose the attributes that moved. Reported as the rename it is, refused.
                matchedOld.insert(former)
                result.append(EntityChange(
                    name: entity.name, oldName: former, kind: .renamed, isInferable: false,
                    reason: "its renaming identifier names the store's entity \(former), and the store also has an entity "
                        + "\(entity.name): entities renamed in a chain or swapped in one model version are not migrated; "
                        + "rename them over two model versions, through names the store does not use"))
                continue
            }
            matchedOld.insert(previous.name)
            result.append(compareEntity(previous, entity, context: context))
        }
        // A store none of whose entities this model has, in any configuration (an entity moved to another
        // configuration's store is still this model's), was written with another model (Core Data finds no
        // source model for it): "migrating" it would drop every row. Its entities' removal is refused.
        let unrelated = matchedOld.isEmpty && !newEntities.isEmpty && !oldEntities.contains { old in
            newModel.entity(named: old.name) != nil || newModel.entities.contains { $0.renamingIdentifier == old.name }
        }
        for entity in oldEntities where !matchedOld.contains(entity.name) {
            result.append(EntityChange(
                name: entity.name, oldName: entity.name, kind: .removed, isInferable: !unrelated,
                reason: unrelated
                    ? "no entity of the store's model is in configuration \(configuration) of this model (nor renamed into it): "
                        + "the store was written with another model, and migrating it would drop every row"
                    : nil))
        }
        return CompatibilityReport(configuration: configuration, entities: result.sorted { $0.name < $1.name })
    }

    // MARK: - Entities

    /// Name mapping between the two models.
    package struct Context {
        package let oldModel: ObjectModel
        package let newModel: ObjectModel

        package init(oldModel: ObjectModel, newModel: ObjectModel) {
            self.oldModel = oldModel
            self.newModel = newModel
        }

        package func oldEntity(for entity: EntityDescription, among old: [String: EntityDescription]) -> EntityDescription? {
            if let same = old[entity.name] { return same }
            if let former = entity.renamingIdentifier, let renamed = old[former] { return renamed }
            return nil
        }

        /// True when the new entity `newName` is the old entity `oldName` (same name or renamed from it).
        package func sameEntity(new newName: String, old oldName: String) -> Bool {
            if newName == oldName { return oldModel.entity(named: oldName) != nil || newModel.entity(named: newName) != nil }
            return newModel.entity(named: newName)?.renamingIdentifier == oldName
        }

        /// How the members of to-many `previous` (old model), now `relationship`, move when it gains or loses a
        /// to-one inverse; nil when its inverse did neither, or changed some other way (not inferable).
        package func inverseConversion(from previous: RelationshipDescription, to relationship: RelationshipDescription) -> InverseConversion? {
            guard previous.isToMany, relationship.isToMany, !previous.isTransient, !relationship.isTransient else { return nil }
            switch (previous.inverseName, relationship.inverseName) {
            case (nil, _?):
                // A new to-one on the destination, not one that existed (its keys and the members could disagree).
                guard let inverse = newModel.inverse(of: relationship), !inverse.isToMany, !inverse.isTransient,
                    let oldDestination = oldModel.entity(named: previous.destinationEntityName),
                    oldDestination.relationship(named: inverse.name) == nil,
                    inverse.renamingIdentifier.map({ oldDestination.relationship(named: $0) == nil }) ?? true
                else { return nil }
                return .keysFromOwners(inverse: inverse.name)
            case (_?, nil):
                // The to-one went with it (were it kept, both would need the members).
                guard let inverse = oldModel.inverse(of: previous), !inverse.isToMany, !inverse.isTransient,
                    let newDestination = newModel.entity(named: relationship.destinationEntityName),
                    newDestination.relationship(named: inverse.name) == nil,
                    !newDestination.relationships.contains(where: { $0.renamingIdentifier == inverse.name })
                else { return nil }
                return .ownersFromKeys(formerInverse: inverse.name)
            default:
                return nil
            }
        }
    }

    /// A to-many gaining or losing its to-one inverse: where each member's owner is stored changes (the
    /// inverse's key column or row position with it; a hidden key column, or owner links on LMDB, without it).
    package enum InverseConversion: Equatable, Sendable {
        /// Gained to-one inverse `inverse`: each member's owner becomes its key.
        case keysFromOwners(inverse: String)
        /// Lost to-one inverse `formerInverse` (removed from the model): its keys become the members' owners.
        case ownersFromKeys(formerInverse: String)
    }

    private static func compareEntity(
        _ old: EntityDescription, _ new: EntityDescription, context: Context
    ) -> EntityChange {
        var properties: [PropertyChange] = []
        var inferable = true
        var reasons: [String] = []
        var structural = false
        switch (old.parentName, new.parentName) {
        case (nil, nil): break
        case let (o?, n?) where context.sameEntity(new: n, old: o): break
        default:
            inferable = false
            structural = true
            reasons.append("parent entity changed from \(old.parentName ?? "none") to \(new.parentName ?? "none")")
        }
        if old.isAbstract != new.isAbstract {
            structural = true
            if new.isAbstract {
                inferable = false
                reasons.append("became abstract (its existing rows would have no concrete entity)")
            } else {
                reasons.append("no longer abstract")
            }
        }
        properties += compareAttributes(old, new)
        properties += compareRelationships(old, new, context: context)
        let kind: EntityChange.Kind
        if old.name != new.name {
            kind = .renamed
        } else if properties.isEmpty && !structural {
            kind = .unchanged
        } else {
            kind = .changed
        }
        return EntityChange(
            name: new.name, oldName: old.name, kind: kind, properties: properties, isInferable: inferable,
            reason: reasons.isEmpty ? nil : reasons.joined(separator: "; "))
    }

    // MARK: - Attributes

    private static func stored(_ entity: EntityDescription) -> [AttributeDescription] {
        entity.attributes.filter { !$0.isTransient && $0.type != .undefined }
    }

    private static func compareAttributes(_ old: EntityDescription, _ new: EntityDescription) -> [PropertyChange] {
        let oldAttributes = stored(old)
        let oldByName = Dictionary(oldAttributes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var matched: Set<String> = []
        var changes: [PropertyChange] = []
        for attribute in stored(new) {
            let previous = oldByName[attribute.name] ?? attribute.renamingIdentifier.flatMap { oldByName[$0] }
            guard let previous, !matched.contains(previous.name) else {
                let required = !attribute.isOptional && attribute.defaultValue == nil
                changes.append(PropertyChange(
                    name: attribute.name, isRelationship: false, kind: .added,
                    detail: "new \(attribute.type.rawValue) attribute" + (attribute.isOptional ? "" : " (required)"),
                    isInferable: !required,
                    reason: required ? "a new required attribute needs a default value for existing rows" : nil))
                continue
            }
            matched.insert(previous.name)
            if previous.name != attribute.name {
                changes.append(PropertyChange(
                    name: attribute.name, oldName: previous.name, isRelationship: false, kind: .renamed,
                    detail: "renamed from \(previous.name)"))
            }
            if previous.type != attribute.type, isWidening(from: previous.type, to: attribute.type) {
                changes.append(PropertyChange(
                    name: attribute.name, oldName: previous.name, isRelationship: false, kind: .typeWidened,
                    detail: "\(previous.type.rawValue) -> \(attribute.type.rawValue) (every stored value stays valid)"))
            } else if previous.type != attribute.type {
                changes.append(PropertyChange(
                    name: attribute.name, oldName: previous.name, isRelationship: false, kind: .typeChanged,
                    detail: "\(previous.type.rawValue) -> \(attribute.type.rawValue)", isInferable: false,
                    reason: "type changes are not inferred (\(previous.type.rawValue) -> \(attribute.type.rawValue))"))
            }
            if previous.isOptional && !attribute.isOptional {
                let hasDefault = attribute.defaultValue != nil
                changes.append(PropertyChange(
                    name: attribute.name, oldName: previous.name, isRelationship: false, kind: .becameRequired,
                    detail: hasDefault ? "optional -> required; empty values get the default" : "optional -> required",
                    isInferable: hasDefault,
                    reason: hasDefault ? nil : "became required without a default value for rows that have none"))
            } else if !previous.isOptional && attribute.isOptional {
                changes.append(PropertyChange(
                    name: attribute.name, oldName: previous.name, isRelationship: false, kind: .becameOptional,
                    detail: "required -> optional"))
            }
        }
        for attribute in oldAttributes where !matched.contains(attribute.name) {
            changes.append(PropertyChange(
                name: attribute.name, oldName: attribute.name, isRelationship: false, kind: .removed,
                detail: "\(attribute.type.rawValue) attribute removed; its values are dropped"))
        }
        return changes
    }

    /// Type changes whose stored values need no rewriting: a wider integer, or Binary <-> Transformable (the
    /// same bytes; the transformer is the app's business).
    package static func isWidening(from old: AttributeType, to new: AttributeType) -> Bool {
        let blobs: Set<AttributeType> = [.binary, .transformable]
        if blobs.contains(old) && blobs.contains(new) { return true }
        guard let oldRange = old.integerRange, let newRange = new.integerRange else { return false }
        return newRange.lowerBound <= oldRange.lowerBound && newRange.upperBound >= oldRange.upperBound
    }

    // MARK: - Relationships

    private static func compareRelationships(
        _ old: EntityDescription, _ new: EntityDescription, context: Context
    ) -> [PropertyChange] {
        let oldRelationships = old.relationships.filter { !$0.isTransient }
        let oldByName = Dictionary(oldRelationships.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var matched: Set<String> = []
        var changes: [PropertyChange] = []
        for relationship in new.relationships where !relationship.isTransient {
            let previous = oldByName[relationship.name] ?? relationship.renamingIdentifier.flatMap { oldByName[$0] }
            guard let previous, !matched.contains(previous.name) else {
                let required = !relationship.isToMany && (!relationship.isOptional || relationship.minCount > 0)
                changes.append(PropertyChange(
                    name: relationship.name, isRelationship: true, kind: .added,
                    detail: "new \(relationship.isToMany ? "to-many" : "to-one") relationship to \(relationship.destinationEntityName)",
                    isInferable: !required,
                    reason: required ? "a new required to-one relationship has no destination for existing rows" : nil))
                continue
            }
            matched.insert(previous.name)
            let name = relationship.name
            if previous.name != name {
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true, kind: .renamed,
                    detail: "renamed from \(previous.name)"))
            }
            if !context.sameEntity(new: relationship.destinationEntityName, old: previous.destinationEntityName) {
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true, kind: .destinationChanged,
                    detail: "\(previous.destinationEntityName) -> \(relationship.destinationEntityName)", isInferable: false,
                    reason: "the destination entity changed; existing keys would point at the wrong entity"))
                continue
            }
            if previous.isToMany != relationship.isToMany, relationship.isToMany,
                let inverse = context.newModel.inverse(of: relationship), inverse.isToMany
            {
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true, kind: .toOneBecameToMany,
                    detail: "to-one -> to-many, now a many-to-many with \(relationship.destinationEntityName).\(inverse.name) "
                        + "(each row's key becomes a link)"))
            } else if previous.isToMany != relationship.isToMany, !relationship.isToMany,
                let inverse = context.oldModel.inverse(of: previous), inverse.isToMany
            {
                // Many links would have to become one key: which to keep is the app's decision, not inferred.
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true, kind: .toManyBecameToOne,
                    detail: "many-to-many -> to-one", isInferable: false,
                    reason: "many-to-many -> to-one: a row's links (join table) would have to become one key, "
                        + "dropping all but one of them, which is not inferred"))
            } else if previous.isToMany != relationship.isToMany {
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true,
                    kind: relationship.isToMany ? .toOneBecameToMany : .toManyBecameToOne,
                    detail: relationship.isToMany ? "to-one -> to-many" : "to-many -> to-one (filled from the inverse)"))
            } else if previous.isOrdered != relationship.isOrdered {
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true, kind: .orderingChanged,
                    detail: relationship.isOrdered
                        ? "unordered -> ordered (existing members keep primary-key order)"
                        : "ordered -> unordered (positions are dropped)"))
            }
            var details: [String] = []
            if previous.inverseName != relationship.inverseName {
                // Where a to-many's members are stored depends on its inverse: a key on the destination named
                // after a to-one inverse, a hidden key column (`Z1PETS`) without one, a join table with a to-many
                // one. Gaining a new to-one inverse, or losing one with the to-one, moves them (`InverseConversion`);
                // any other change of the inverse (but a rename) would open the store with the members left behind,
                // and is refused.
                let inverseRenamed = previous.inverseName != nil
                    && context.newModel.inverse(of: relationship)?.renamingIdentifier == previous.inverseName
                if previous.isToMany, relationship.isToMany, !inverseRenamed {
                    switch context.inverseConversion(from: previous, to: relationship) {
                    case .keysFromOwners(let inverse)?:
                        changes.append(PropertyChange(
                            name: name, oldName: previous.name, isRelationship: true, kind: .detailsChanged,
                            detail: "inverse none -> \(inverse) (each member's owner becomes its \(relationship.destinationEntityName).\(inverse))"))
                    case .ownersFromKeys(let former)?:
                        changes.append(PropertyChange(
                            name: name, oldName: previous.name, isRelationship: true, kind: .detailsChanged,
                            detail: "inverse \(former) -> none (each member keeps its owner, stored apart from the removed \(former))"))
                    case nil:
                        changes.append(PropertyChange(
                            name: name, oldName: previous.name, isRelationship: true, kind: .detailsChanged,
                            detail: "inverse \(previous.inverseName ?? "none") -> \(relationship.inverseName ?? "none")", isInferable: false,
                            reason: "a to-many whose inverse is replaced, or is or becomes a to-many, keeps its members elsewhere (a key "
                                + "named after a to-one inverse, a hidden key column without one, a join table for a many-to-many); "
                                + "they are not converted, so the store would open without them (a new to-one inverse, or removing the "
                                + "to-one inverse with the relationship itself, is migrated)"))
                    }
                } else {
                    details.append("inverse \(previous.inverseName ?? "none") -> \(relationship.inverseName ?? "none")")
                }
            }
            if previous.isOptional != relationship.isOptional {
                details.append(relationship.isOptional ? "required -> optional" : "optional -> required")
            }
            if previous.isToMany == relationship.isToMany,
                previous.minCount != relationship.minCount || previous.maxCount != relationship.maxCount
            {
                details.append("count \(previous.minCount)...\(previous.maxCount) -> \(relationship.minCount)...\(relationship.maxCount)")
            }
            if !details.isEmpty {
                changes.append(PropertyChange(
                    name: name, oldName: previous.name, isRelationship: true, kind: .detailsChanged,
                    detail: details.joined(separator: ", ") + " (validated on save; nothing stored changes)"))
            }
        }
        for relationship in oldRelationships where !matched.contains(relationship.name) {
            // Removing a many-to-many drops its join table (SQLite) or links (LMDB) with it.
            changes.append(PropertyChange(
                name: relationship.name, oldName: relationship.name, isRelationship: true, kind: .removed,
                detail: "\(relationship.isToMany ? "to-many" : "to-one") relationship to \(relationship.destinationEntityName) removed"))
        }
        return changes
    }
}

// MARK: - RenameMatching

/// Which entity (or property of one entity) of an earlier model each of a later model's continues, for a copy into
/// a new store (`storesplit`, a custom migration step's default copy). Built over one group: the entities of the
/// two models, or the properties of one entity in each.
///
/// For a later element named `name` with renaming identifier `id`, in this order:
/// 1. Kept: the earlier element named `name` carries the same `id` (an earlier rename's identifier kept, while a
///    new element has since taken the old name, as in a store split into its own model), and no other later
///    element's identifier names `name` (else `name` was renamed away: a chain).
/// 2. Renamed: the earlier element named `id` (Core Data's rule: the identifier is what the earlier model called it).
/// 3. Same name: the earlier element named `name`.
/// 4. Kept identifier: the earlier element carrying the same `id` (Core Data compares identifiers, and Apple's
///    guidance keeps the first name as the identifier through later renames: `paintColor` (was `color`) becoming
///    `primaryColor` (was `color`)).
///
/// A chain or swap of renames follows the identifiers: a copy can move every row where it belongs, where a migration
/// in place (`ModelDiff`, name first) refuses such a change.
package struct RenameMatching {
    private let sourceIdentifiers: [String: String?]
    private let sourceByIdentifier: [String: String]
    private let renamedAway: [String: String]

    /// `sources`: the earlier model's elements (name and renaming identifier); `targets`: the later model's.
    package init(
        sources: some Sequence<(name: String, renamingIdentifier: String?)>,
        targets: some Sequence<(name: String, renamingIdentifier: String?)>
    ) {
        var identifiers: [String: String?] = [:]
        var byIdentifier: [String: String] = [:]
        for source in sources {
            if identifiers[source.name] == nil { identifiers[source.name] = .some(source.renamingIdentifier) }
            if let id = source.renamingIdentifier, id != source.name, byIdentifier[id] == nil { byIdentifier[id] = source.name }
        }
        var away: [String: String] = [:]
        for target in targets {
            if let id = target.renamingIdentifier, id != target.name, away[id] == nil { away[id] = target.name }
        }
        (sourceIdentifiers, sourceByIdentifier, renamedAway) = (identifiers, byIdentifier, away)
    }

    /// The entities of `source` and `target`.
    package init(entitiesOf source: ObjectModel, _ target: ObjectModel) {
        self.init(
            sources: source.entities.map { ($0.name, $0.renamingIdentifier) }, targets: target.entities.map { ($0.name, $0.renamingIdentifier) })
    }

    /// The attributes of `source` and `target` (inherited ones included).
    package init(attributesOf source: EntityDescription, _ target: EntityDescription) {
        self.init(
            sources: source.allAttributes.map { ($0.name, $0.renamingIdentifier) }, targets: target.allAttributes.map { ($0.name, $0.renamingIdentifier) })
    }

    /// The relationships of `source` and `target` (inherited ones included).
    package init(relationshipsOf source: EntityDescription, _ target: EntityDescription) {
        self.init(
            sources: source.allRelationships.map { ($0.name, $0.renamingIdentifier) },
            targets: target.allRelationships.map { ($0.name, $0.renamingIdentifier) })
    }

    /// The earlier model's name for the later element `name` whose renaming identifier is `renamingIdentifier`; nil
    /// when it continues none.
    package func sourceName(of name: String, renamingIdentifier: String?) -> String? {
        let id = renamingIdentifier == name ? nil : renamingIdentifier
        if let id, let stored = sourceIdentifiers[name], stored == id, renamedAway[name] == nil { return name }
        if let id, sourceIdentifiers[id] != nil { return id }
        if sourceIdentifiers[name] != nil { return name }
        if let id, let kept = sourceByIdentifier[id] { return kept }
        return nil
    }
}

// MARK: - RenameMatching

/// Which entity (or property of one entity) of an earlier model each of a later model's continues, for a copy into
/// a new store (`storesplit`, a custom migration step's default copy). Built over one group: the entities of the
/// two models, or the properties of one entity in each.
///
/// Each earlier element is continued by at most one later element. Later elements are matched in four passes, each
/// over the later model's order and taking only earlier elements not taken yet:
/// 1. Kept: the earlier element of the same name with the same renaming identifier (or none on both sides). Not
///    when another later element, not kept itself, has an identifier naming this name that no earlier element
///    carries (or only one a later element keeps as it is): then the name was renamed away (`Person` was
///    `Employee` beside a new `Employee`; a chain, `Person` was `Employee` beside `Human` was `Person`). So a
///    model copied into itself maps every element to itself, the identifiers of earlier swaps and chains kept.
/// 2. Renamed: the earlier element the identifier names (Core Data's rule: it is what the earlier model called it).
/// 3. Same name: the earlier element of the same name.
/// 4. Kept identifier: the earlier element carrying the same identifier (Core Data compares identifiers, and
///    Apple's guidance keeps the first name as the identifier through later renames: `paintColor` (was `color`)
///    becoming `primaryColor` (was `color`)).
///
/// Chains and swaps of renames follow the identifiers: a copy can move every row where it belongs, where a
/// migration in place (`ModelDiff`, name first) refuses such a change.
package struct RenameMatching {
    private var sourceByTarget: [String: String] = [:]

    /// `sources`: the earlier model's elements (name and renaming identifier); `targets`: the later model's, in their
    /// models' order.
    package init(sources: [(name: String, renamingIdentifier: String?)], targets: [(name: String, renamingIdentifier: String?)]) {
        // An identifier equal to the element's own name says nothing.
        func identifier(_ element: (name: String, renamingIdentifier: String?)) -> String? {
            element.renamingIdentifier == element.name ? nil : element.renamingIdentifier
        }
        // Each name's identifier (the first element of a name wins).
        func identifiersByName(_ elements: [(name: String, renamingIdentifier: String?)]) -> [String: String?] {
            var byName: [String: String?] = [:]
            for element in elements where byName[element.name] == nil { byName[element.name] = .some(identifier(element)) }
            return byName
        }
        let sourceIdentifiers = identifiersByName(sources)
        func sameAsSource(_ target: (name: String, renamingIdentifier: String?)) -> Bool {
            guard let stored = sourceIdentifiers[target.name] else { return false }
            return stored == identifier(target)
        }
        // Names a later element's identifier renames away from: not when that element is kept itself, nor when an
        // earlier element carries the identifier (then it is kept through renames: pass 4) and no later element of
        // its name and identifier keeps it.
        let targetIdentifiers = identifiersByName(targets)
        let carried = Set(sources.compactMap { source -> String? in
            guard let id = identifier(source) else { return nil }
            return targetIdentifiers[source.name] == .some(.some(id)) ? nil : id
        })
        var renamedAway: Set<String> = []
        for target in targets where !sameAsSource(target) {
            if let id = identifier(target), !carried.contains(id) { renamedAway.insert(id) }
        }
        var taken: Set<String> = []
        func take(_ target: String, _ source: String?) {
            guard let source, sourceByTarget[target] == nil, sourceIdentifiers[source] != nil, !taken.contains(source) else { return }
            sourceByTarget[target] = source
            taken.insert(source)
        }
        for target in targets where sameAsSource(target) && !renamedAway.contains(target.name) {
            take(target.name, target.name)
        }
        for target in targets { take(target.name, identifier(target)) }
        for target in targets { take(target.name, target.name) }
        for target in targets {
            guard let id = identifier(target) else { continue }
            take(target.name, sources.first { identifier($0) == id && !taken.contains($0.name) }?.name)
        }
    }

    /// The entities of `source` and `target`.
    package init(entitiesOf source: ObjectModel, _ target: ObjectModel) {
        self.init(
            sources: source.entities.map { ($0.name, $0.renamingIdentifier) }, targets: target.entities.map { ($0.name, $0.renamingIdentifier) })
    }

    /// The stored attributes of `source` and `target` (inherited ones included; transient ones hold nothing to copy).
    package init(attributesOf source: EntityDescription, _ target: EntityDescription) {
        self.init(
            sources: source.persistentAttributes.map { ($0.name, $0.renamingIdentifier) },
            targets: target.persistentAttributes.map { ($0.name, $0.renamingIdentifier) })
    }

    /// The stored relationships of `source` and `target` (inherited ones included, transient ones left out).
    package init(relationshipsOf source: EntityDescription, _ target: EntityDescription) {
        self.init(
            sources: source.allRelationships.filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier) },
            targets: target.allRelationships.filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier) })
    }

    /// The earlier model's name for the later element `name`; nil when it continues none.
    package func sourceName(of name: String) -> String? {
        sourceByTarget[name]
    }
}

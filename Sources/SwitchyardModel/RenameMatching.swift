// MARK: - RenameMatching

/// Which entity or property of an earlier model a later model's one continues, for a copy into a new store (a
/// split, a custom migration step): its renaming identifier first, as Core Data matches, then its name.
///
/// Except where the earlier model has one by the later one's own name carrying that same identifier: that is the
/// same entity or property, its identifier kept from an earlier rename whose old name a new one has since taken
/// (a model copied into itself, or a version after the rename), matched by name as `ModelDiff` matches it. A chain
/// or swap of renames (the earlier one by the new name is another) follows the identifiers: a copy can move every
/// row where it belongs, where a migration in place refuses such a change.
package enum RenameMatching {
    /// The earlier model's name for the entity or property `name` whose renaming identifier is
    /// `renamingIdentifier`; nil when the earlier model has neither. `exists` says whether the earlier model has one
    /// by a name, `renamingIdentifierOf` gives the renaming identifier of the earlier model's one by a name.
    package static func sourceName(
        of name: String, renamingIdentifier: String?, exists: (String) -> Bool, renamingIdentifierOf: (String) -> String?
    ) -> String? {
        if let former = renamingIdentifier, former != name, exists(name), renamingIdentifierOf(name) == former { return name }
        return [renamingIdentifier, name].compactMap { $0 }.first(where: exists)
    }
}

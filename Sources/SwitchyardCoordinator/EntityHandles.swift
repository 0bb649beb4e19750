import SwitchyardModel

// MARK: - EntityHandles

/// One `EntityHandle` per entity of a model, found by entity name through a `NameIndex` (every insert and every
/// fetch looks one up by name; a `[String: EntityHandle]` hashed the name with SipHash each time). A class,
/// immutable, so reading it from the coordinator copies one reference.
package final class EntityHandles: Sendable {
    private let handles: [EntityHandle]
    private let index: NameIndex

    /// A handle for every entity of `model`.
    package init(for model: ObjectModel) {
        handles = model.entities.map(EntityHandle.init)
        index = NameIndex(Dictionary(uniqueKeysWithValues: handles.enumerated().map { ($1.name, $0) }))
    }

    /// The handle of the entity named `name`, if the model has one.
    package subscript(name name: String) -> EntityHandle? {
        index[name: name].map { handles[$0] }
    }
}

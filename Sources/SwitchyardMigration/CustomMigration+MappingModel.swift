// MARK: - Mapping models
import SwitchyardModelFiles

extension CustomMigration {
    /// A step that applies an Xcode mapping model: each entity mapping with a source and a destination fills the
    /// destination entity from the source entity, attribute by attribute from `$source` key paths and constants;
    /// relationships are carried over as the default copy matches them (renaming identifier, else name; rows keep
    /// their primary keys). Attributes the mapping does not list keep the default copy, as Xcode lists every
    /// attribute it can infer.
    ///
    /// Use it in a chain: `try chain.setCustomStep(to: "V3", CustomMigration(mappingModel: mapping))`.
    public init(mappingModel: MappingModel, batchSize: Int = 1_000) {
        self.init(batchSize: batchSize)
        for mapping in mappingModel.entityMappings {
            guard let source = mapping.sourceEntity, let destination = mapping.destinationEntity else { continue }
            let attributes = mapping.attributes.sorted { $0.key < $1.key }
            transform(destination, from: source) { old, new in
                for (name, value) in attributes {
                    switch value {
                    case .source(let keyPath): try new.set(name, try old.value(keyPath))
                    case .constant(let constant): try new.set(name, constant)
                    }
                }
            }
        }
    }
}

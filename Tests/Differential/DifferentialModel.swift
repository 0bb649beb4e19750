import Foundation
import Switchyard

/// The model every differential sequence runs on: inheritance (Item > Special), indexed attributes, a
/// uniqueness constraint, a to-one with a to-many inverse (Item.owner / Owner.items), an ordered to-many
/// (Owner.queue / Item.queuedBy), a many-to-many (Item.tags / Tag.items) and a to-many without inverse
/// (Tag.pinned, one tag per item). One configuration, `Main`.
public enum DifferentialModel {
    public static func make() throws -> ObjectModel {
        let owner = EntityDescription(
            name: "Owner",
            attributes: [
                AttributeDescription(name: "uid", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "name", type: .string, isOptional: false, isIndexed: true),
                AttributeDescription(name: "score", type: .integer64),
            ],
            relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "owner", isToMany: true),
                RelationshipDescription(name: "queue", destination: "Item", inverse: "queuedBy", isToMany: true, isOrdered: true),
            ])
        let item = EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "uid", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "title", type: .string, isOptional: false, isIndexed: true),
                AttributeDescription(name: "qty", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "price", type: .double, isOptional: false),
                AttributeDescription(name: "note", type: .string),
                AttributeDescription(name: "code", type: .string, isOptional: false),
            ],
            relationships: [
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
                RelationshipDescription(name: "queuedBy", destination: "Owner", inverse: "queue"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "items", isToMany: true),
            ],
            uniquenessConstraints: [["code"]])
        let special = EntityDescription(
            name: "Special", parent: "Item",
            attributes: [AttributeDescription(name: "level", type: .integer64, isOptional: false, isIndexed: true)])
        let tag = EntityDescription(
            name: "Tag",
            attributes: [
                AttributeDescription(name: "uid", type: .integer64, isOptional: false, isIndexed: true),
                AttributeDescription(name: "label", type: .string, isOptional: false),
            ],
            relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "tags", isToMany: true),
                RelationshipDescription(name: "pinned", destination: "Item", isToMany: true),
            ])
        return try ObjectModel(
            entities: [owner, item, special, tag],
            configurations: [ConfigurationDescription(name: "Main", entityNames: ["Owner", "Item", "Special", "Tag"])])
    }
}

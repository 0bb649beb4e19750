import Foundation
@testable import Switchyard

/// Models built in code for the store and context tests.
enum TestModels {
    /// A library: Author 1-n Book, Publication > Book/Magazine inheritance, every attribute type,
    /// a uniqueness constraint, and configurations:
    /// - `Main`: Author, Publication, Book, Magazine
    /// - `Notes`: Note;  `Archive`: Note (so Note is served by two stores when both are added)
    /// - `Cache`: Review, reachable from Book through the fetched property `reviews`.
    static func library() throws -> ObjectModel {
        let author = EntityDescription(
            name: "Author",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "born", type: .date),
                AttributeDescription(name: "rating", type: .double),
                AttributeDescription(name: "active", type: .boolean, defaultValue: .bool(true)),
                AttributeDescription(name: "authorID", type: .uuid),
            ],
            relationships: [RelationshipDescription(name: "publications", destination: "Publication", inverse: "author", isToMany: true, deleteRule: .cascade)])
        let publication = EntityDescription(
            name: "Publication", isAbstract: true,
            attributes: [
                AttributeDescription(name: "title", type: .string, isOptional: false),
                AttributeDescription(name: "published", type: .date),
                AttributeDescription(name: "pages", type: .integer32),
                AttributeDescription(name: "code", type: .string),
            ],
            relationships: [RelationshipDescription(name: "author", destination: "Author", inverse: "publications")],
            fetchedProperties: [FetchedPropertyDescription(name: "reviews", destination: "Review", predicate: "bookCode == $FETCH_SOURCE.code")],
            uniquenessConstraints: [["code"]])
        let book = EntityDescription(
            name: "Book", parent: "Publication",
            attributes: [
                AttributeDescription(name: "price", type: .decimal),
                AttributeDescription(name: "cover", type: .binary),
                AttributeDescription(name: "link", type: .uri),
                AttributeDescription(name: "edition", type: .integer16, defaultValue: .integer(1)),
                AttributeDescription(name: "copies", type: .integer64),
                AttributeDescription(name: "weight", type: .float),
            ])
        let magazine = EntityDescription(
            name: "Magazine", parent: "Publication",
            attributes: [AttributeDescription(name: "issue", type: .integer32)])
        let note = EntityDescription(
            name: "Note",
            attributes: [
                AttributeDescription(name: "text", type: .string),
                AttributeDescription(name: "rank", type: .integer64),
            ])
        let review = EntityDescription(
            name: "Review",
            attributes: [
                AttributeDescription(name: "bookCode", type: .string),
                AttributeDescription(name: "stars", type: .integer16),
            ])
        return try ObjectModel(
            entities: [author, publication, book, magazine, note, review],
            configurations: [
                ConfigurationDescription(name: "Main", entityNames: ["Author", "Publication", "Book", "Magazine"]),
                ConfigurationDescription(name: "Notes", entityNames: ["Note"]),
                ConfigurationDescription(name: "Archive", entityNames: ["Note"]),
                ConfigurationDescription(name: "Cache", entityNames: ["Review"]),
            ],
            versionIdentifiers: ["1"], source: "TestModels.library")
    }
}

import Foundation
import Testing
@testable import Switchyard

/// The `sqlite3` command-line shell: tests look at store files with it instead of linking SQLite themselves.
enum SQLite3 {
    static let executable = URL(fileURLWithPath: "/usr/bin/sqlite3")
    static var available: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `sql` on the file opened read-only (`?mode=ro`) and returns the output, trimmed; rows are lines,
    /// columns separated by `|`.
    static func query(_ path: String, _ sql: String) throws -> String {
        try run(["file:\(path)?mode=ro", sql])
    }

    /// Runs `sql` read-only and splits the output into rows and columns exactly (fields may be empty or hold
    /// `|` and newlines: unit and record separators delimit them).
    static func rows(_ path: String, _ sql: String) throws -> [[String]] {
        let output = try run(["-separator", "\u{1F}", "-newline", "\u{1E}", "file:\(path)?mode=ro", sql], trim: false)
        return output.split(separator: "\u{1E}", omittingEmptySubsequences: false).dropLast()
            .map { $0.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Runs `sql` on the file opened for writing (to damage or renumber a store in a test).
    static func execute(_ path: String, _ sql: String) throws {
        _ = try run([path, sql])
    }

    private static func run(_ arguments: [String], trim: Bool = true) throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "sqlite3 \(arguments): \(String(decoding: errors, as: UTF8.self))")
        }
        let text = String(decoding: data, as: UTF8.self)
        return trim ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
    }
}

/// SHA-256 of a file's bytes, `nil` when it does not exist.
func fileSHA256(_ path: String) -> String? {
    FileManager.default.contents(atPath: path).map { SHA256.hash($0).hexString }
}

/// Models built in code for the SQLite store tests.
enum SQLiteTestModels {
    /// A garage: Owner 1-n Vehicle (to-one with inverse to-many), Vehicle > Car/Truck inheritance where both
    /// subentities declare `name` (Core Data's numbered column), Owner.favorite to an entity with subentities
    /// (`Z<n>_FAVORITE`), a many-to-many and a to-many without inverse, a uniqueness constraint, a fetch index,
    /// an indexed attribute, and an entity with every attribute type. Numbers: AllTypes 1, Note 2, Owner 3,
    /// Tag 4, Vehicle 5, Car 6, Truck 7. Configurations `Garage` (all but AllTypes) and `Types` (AllTypes).
    static func garage() throws -> ObjectModel {
        let allTypes = EntityDescription(
            name: "AllTypes",
            attributes: [
                AttributeDescription(name: "i16", type: .integer16),
                AttributeDescription(name: "i32", type: .integer32),
                AttributeDescription(name: "i64", type: .integer64),
                AttributeDescription(name: "dec", type: .decimal),
                AttributeDescription(name: "dbl", type: .double),
                AttributeDescription(name: "flt", type: .float),
                AttributeDescription(name: "str", type: .string),
                AttributeDescription(name: "flag", type: .boolean),
                AttributeDescription(name: "when", type: .date),
                AttributeDescription(name: "blob", type: .binary),
                AttributeDescription(name: "uid", type: .uuid),
                AttributeDescription(name: "link", type: .uri),
                AttributeDescription(name: "thing", type: .transformable),
                AttributeDescription(name: "scratch", type: .string, isTransient: true),
            ])
        let owner = EntityDescription(
            name: "Owner",
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "born", type: .date),
                AttributeDescription(name: "rating", type: .double),
                AttributeDescription(name: "active", type: .boolean),
                AttributeDescription(name: "ownerID", type: .uuid),
            ],
            relationships: [
                RelationshipDescription(name: "cars", destination: "Vehicle", inverse: "owner", isToMany: true),
                RelationshipDescription(name: "favorite", destination: "Vehicle"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "owners", isToMany: true),
                RelationshipDescription(name: "notes", destination: "Note", isToMany: true),
            ])
        let vehicle = EntityDescription(
            name: "Vehicle",
            attributes: [AttributeDescription(name: "plate", type: .string)],
            relationships: [RelationshipDescription(name: "owner", destination: "Owner", inverse: "cars")],
            uniquenessConstraints: [["plate"]],
            indexes: [IndexDescription(name: "byPlate", properties: ["plate"])])
        let car = EntityDescription(
            name: "Car", parent: "Vehicle",
            attributes: [
                AttributeDescription(name: "doors", type: .integer16),
                AttributeDescription(name: "name", type: .string),
            ])
        let truck = EntityDescription(
            name: "Truck", parent: "Vehicle",
            attributes: [
                AttributeDescription(name: "payload", type: .double),
                AttributeDescription(name: "name", type: .integer32),
            ])
        let tag = EntityDescription(
            name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
            relationships: [RelationshipDescription(name: "owners", destination: "Owner", inverse: "tags", isToMany: true)])
        let note = EntityDescription(
            name: "Note", attributes: [AttributeDescription(name: "text", type: .string, isIndexed: true)])
        return try ObjectModel(
            entities: [allTypes, owner, vehicle, car, truck, tag, note],
            configurations: [
                ConfigurationDescription(name: "Garage", entityNames: ["Owner", "Vehicle", "Car", "Truck", "Tag", "Note"]),
                ConfigurationDescription(name: "Types", entityNames: ["AllTypes"]),
            ],
            versionIdentifiers: ["g1"], source: "SQLiteTestModels.garage")
    }

    /// Inserts rows with freshly allocated keys (each row's `primaryKey` is replaced) and returns them as saved.
    @discardableResult
    static func insert(_ rows: [StoreRow], into store: any PersistentStore) throws -> [StoreRow] {
        var saved: [StoreRow] = []
        for row in rows {
            var r = row
            r.primaryKey = try store.allocatePrimaryKeys(for: row.entityName, count: 1).lowerBound
            saved.append(r)
        }
        try store.save(StoreChangeSet(inserts: saved))
        return saved
    }
}

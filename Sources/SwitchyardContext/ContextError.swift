import Foundation

// MARK: - ContextError

/// A context operation that failed: a wrong key or type, a validation failure, a misuse.
public enum ContextError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The model has no entity of this name.
    case unknownEntity(String)
    /// An abstract entity cannot be instantiated.
    case abstractEntity(String)
    /// The entity has no attribute/relationship/fetched property with this name.
    case unknownKey(entity: String, key: String)
    /// The value's type does not fit the attribute.
    case typeMismatch(entity: String, key: String, expected: String, actual: String)
    /// A position outside an ordered to-many relationship's members: `index` (or `from -> to`) where `valid`
    /// (`0...3` to insert, `0..<3` to move) holds the positions that exist.
    case indexOutOfRange(entity: String, key: String, index: String, valid: String)
    /// An object asked for as an entity type it is not (`existingObject(Author.self, with: aBookID)`).
    case wrongEntity(object: String, entity: String, expected: String)
    /// A required attribute or relationship has no value at save.
    case missingRequiredValue(entity: String, key: String, object: String)
    /// A relationship count outside its minimum/maximum at save.
    case relationshipCount(entity: String, key: String, count: Int, min: Int, max: Int, object: String)
    /// A to-one relationship that points into a different store.
    case crossStoreRelationship(entity: String, key: String, object: String, destination: String, sourceStore: String, destinationStore: String)
    /// Deleting the object is refused by a Deny delete rule while the relationship still has objects.
    case deleteDenied(entity: String, key: String, object: String, count: Int)
    /// The object belongs to another context, or was deleted.
    case foreignObject(String)
    /// The object no longer exists in its store.
    case objectNotFound(String)
    /// The object has no context any more: it was an unsaved insert that was deleted or rolled back, its
    /// deletion was saved, or its context is gone. Nothing written to it could ever be saved.
    case detachedObject(String)
    /// The object is deleted in its context (not saved yet): it cannot be changed; `rollback` or
    /// `refresh` undoes the deletion.
    case deletedObject(String)
    /// `mergeChanges(from:policy: .error)` found objects that the save changed and this context has unsaved
    /// changes to; nothing was merged.
    case mergeConflict([String])
    /// A save notification from a coordinator whose model differs from this context's: its objects mean
    /// something else here.
    case foreignSaveNotification(entities: [String], expected: [String])

    public var description: String {
        switch self {
        case let .unknownEntity(name): return "the model has no entity named '\(name)'"
        case let .abstractEntity(name): return "entity \(name) is abstract and cannot be inserted"
        case let .unknownKey(entity, key): return "entity \(entity) has no property '\(key)'"
        case let .typeMismatch(entity, key, expected, actual):
            return "\(entity).\(key) is \(expected); got \(actual)"
        case let .indexOutOfRange(entity, key, index, valid):
            return "\(entity).\(key): position \(index) is out of range; valid positions are \(valid)"
        case let .wrongEntity(object, entity, expected):
            return "\(object) is a \(entity), not a \(expected) (or one of its subentities)"
        case let .missingRequiredValue(entity, key, object):
            return "\(object): required \(entity).\(key) has no value"
        case let .relationshipCount(entity, key, count, min, max, object):
            return "\(object): \(entity).\(key) has \(count) objects; the model allows \(min)...\(max == 0 ? "unbounded" : String(max))"
        case let .crossStoreRelationship(entity, key, object, destination, sourceStore, destinationStore):
            return "\(object): relationship \(entity).\(key) points at \(destination) in another store (\(destinationStore), source in \(sourceStore)); "
                + "relationships cannot cross stores: model it as a fetched property (destination where key == $FETCH_SOURCE.key)"
        case let .deleteDenied(entity, key, object, count):
            return "\(object): cannot delete: \(entity).\(key) has a Deny delete rule and still holds \(count) object(s); nothing was saved"
        case let .foreignObject(object): return "\(object) is not registered in this context"
        case let .objectNotFound(object): return "\(object) no longer exists in its store"
        case let .detachedObject(object):
            return "\(object) belongs to no context (deleted before it was saved, deleted and saved, rolled back, or its "
                + "context is gone); it can no longer be changed or have its relationships read. An object does not keep its "
                + "ObjectContext alive (as in Core Data): keep a reference to the context while its objects are used, also when "
                + "a function that made the context returns them"
        case let .deletedObject(object):
            return "\(object) is deleted in its context and cannot be changed (rollback or refresh undoes the deletion)"
        case let .mergeConflict(objects):
            return "cannot merge the save: \(objects.count) object(s) it changed have unsaved changes in this context (\(objects.prefix(5).joined(separator: ", "))"
                + "\(objects.count > 5 ? ", ..." : "")); nothing was merged: merge with .storeWins, .contextWins or .rollback, or save or roll back first"
        case let .foreignSaveNotification(entities, expected):
            return "the save notification comes from a coordinator with another model (entities \(entities.joined(separator: ", "))) "
                + "than this context's (entities \(expected.joined(separator: ", "))); its object IDs mean nothing here"
        }
    }
}

extension ContextError {
    /// The same sentence as `description`, so `error.localizedDescription` reads it (not "The operation could
    /// not be completed").
    public var errorDescription: String? { description }
}
